// Package eval measures how well a ranker finds the right tools: the
// benchmark runner behind `capbroker eval`.
//
// # Benchmark format
//
// A benchmark is a tool file (any format
// [github.com/capbroker/capbroker/source/toolfile] reads; the bench sets
// of ../shared/bench use tools.jsonl) and a queries.jsonl file, one query
// a line:
//
//	{"id": "q1", "query": "book a table for two", "gold": ["reserve_table"]}
//	{"id": "q2", "query": "...", "gold": ["a", "b"], "gold_groups": [["a", "a2"], ["b"]]}
//
// Each gold slot is one thing the query needs. Without "gold_groups",
// each gold name is its own slot; with it, each group is a slot and any
// of its names fills it. Other scalar fields ("subset", "split",
// "category") are kept in [Query.Fields] for filtering with [ParseFilter].
// [LoadQueries] rejects a file with bad lines, naming each line.
//
// # Metrics
//
// [ScoreRanking] scores one ranked list; [Run] averages over queries.
// Every figure is in [0, 1]:
//
//	top1     the first pick fills a gold slot
//	recall@k share of gold slots filled by the top k
//	ndcg@k   binary gains: a pick gains 1 when it fills a slot not filled
//	         higher up, discounted by log2(rank+1); the ideal ranking has
//	         min(k, slots) gains at the top
//	comp@k   the top k fill every gold slot
//	mrr      1/rank of the first pick that fills a slot (0 if none within
//	         the largest k)
//
// Run also reports the time to build the index and answer one untimed
// warm-up query (index_ms: a ranker may load tables on first use) and the
// median and 99th-percentile time of one ranking (p50_us, p99_us).
//
// # Unknown gold
//
// A query whose gold slot names no tool of the catalog cannot be
// answered by any ranker. Run leaves it out of the means and counts it in
// [Report.UnknownGold] ("unknown_gold" in JSON, present only when not
// zero), listing it in [Report.Skipped], rather than counting a miss that
// would measure the data instead of the ranker.
//
// # Running
//
// The ranker is supplied as a [BuildFunc], which indexes the tools and
// returns a [Ranker]; [BuildRank] wraps capbroker's lexical ranker:
//
//	tools, err := toolfile.Load("bench/data/bfcl/tools.jsonl")
//	queries, err := eval.LoadQueries("bench/data/bfcl/queries.jsonl")
//	filter, err := eval.ParseFilter([]string{"category=live_multiple"})
//	rep, err := eval.Run(ctx, eval.BuildRank(nil), tools, queries,
//		&eval.Options{Ks: []int{1, 5, 10}, Filter: filter})
//	json.NewEncoder(os.Stdout).Encode(rep) // or rep.WriteText(os.Stdout)
//
// Any other ranker plugs in through [RankFunc]:
//
//	build := func(ctx context.Context, tools []card.Card) (eval.Ranker, error) {
//		r := myranker.New(tools)
//		return eval.RankFunc(r.TopNames), nil
//	}
//
// [Report.Results] keeps each query's ranked names and scores, and
// [Report.WriteMisses] prints the queries a ranker got wrong.
//
// # Sessions
//
// [RunSession] measures what an agent lives through rather than what a
// ranking returns: a scripted agent that behaves like Claude Code (no
// task, ignores list_changed) plays each query through a gateway a
// [Connector] reaches over MCP: the first tools/list, one find_capability
// per need (the task's words, then each step's), calls of the gold tools
// by the names it saw, calls by the exact name of gold tools it never
// saw, and calls by forgiving variants of each name. The
// [SessionReport] gives reach after the list and after each find, the
// calls that ran (calls of held tools apart), find answer tokens and the
// tokens carried over N turns against the full list. [NewToolServer] is
// its upstream: a real MCP server serving a tool file, answering each
// call with [CannedResult]. capbroker eval --mode session wires them to
// the capbroker gateway binary over HTTP and stdio.
package eval
