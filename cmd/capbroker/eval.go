package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync/atomic"

	"github.com/spf13/cobra"

	capbroker "github.com/capbroker/capbroker"
	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/dense"
	"github.com/capbroker/capbroker/encoder"
	"github.com/capbroker/capbroker/eval"
	"github.com/capbroker/capbroker/learn"
	"github.com/capbroker/capbroker/payload"
	"github.com/capbroker/capbroker/policy"
	"github.com/capbroker/capbroker/rank"
	"github.com/capbroker/capbroker/replay"
	"github.com/capbroker/capbroker/trace"
)

func (m *Main) newEvalCmd() *cobra.Command {
	var (
		tools   []string
		queries string
		ks      string
		filters []string
		limit   int
		misses  int
		asJSON  bool
		ranker  string
		db      string
		denseW  float64
		mode    string
		findK   int
		minSlot int
		maxSel  int
		split   float64
		usageW  float64
		usageB  float64
		sf      sessionEvalFlags
		usageE  float64
		phrases int
		preced  float64
		traces  string
	)
	cmd := &cobra.Command{
		Use:   "eval --tools TOOLS --queries QUERIES",
		Short: "Measure ranking quality on a tool-selection benchmark",
		Long: `Eval ranks every query of a benchmark with the same code path as find
(without the floor, the hatch or the relevance threshold, so each query is
scored on a full top k) and reports top1, recall@k, ndcg@k, comp@k and mrr as
means over queries, plus the index build time (with one untimed warm-up
query, as a ranker may load tables on first use) and per-query latency.

The benchmark format is that of ../shared/bench: a tool file (tools.jsonl, or
any tool file) and queries.jsonl with {"id","query","gold":[...]} per line,
where "gold_groups" (when present) lists the alternatives of each gold slot.
With several tool files, a name two of them share is scored as the catalog
names it, source__name (the file's name without its extension is the
source), as find returns it.

With --mode select or --mode find, eval scores what the agent is given
instead: each query goes through select (bound --max) or find (--find-k
matches), and the report adds slot recall (share of gold slots with one of
their tools exposed), the share of queries with every slot covered, the
queries left empty (and how many of those the ranker had a hit for), the
mean tools exposed and the mean exposed tokens against the full catalog's.
--min-slots 2 keeps the multi-tool queries.

With --mode session, eval measures the agent's whole session through the
real gateway (see docs/session-eval.md): each tool file is served by a real
MCP server (this binary, "capbroker eval upstream", over stdio; or the
servers of --upstreams), "capbroker gateway" (--gateway-bin, default this
binary; default settings, hybrid ranking unless --ranker is given) fronts
them over HTTP and over stdio, and a scripted agent that behaves like Claude
Code (no task, ignores list_changed, calls itself claude-code) lists the
tools, asks find_capability once per need (the task, then each step), calls
each gold tool by the name it saw, each one it never saw by its exact name,
and each by forgiving variants (bare, mcp__capbroker__ prefix, case,
separator). It reports reach after the list and each find, the calls that
ran (held tools apart), find answer tokens (p50, max), and the tokens carried
over --turns turns against the full list's. A query's "arguments" field
({"tool": {...}}, ${VAR} expanded) gives its calls' arguments; others get a
placeholder per required property. --sample N spreads N queries over a large
file; --stdio-queries bounds the stdio run (a gateway process per session).

With --learn-split 0.5, eval measures learning from use with a time split:
the first half of the queries (after --filter and --limit, in file order)
become past sessions that asked for the query and called its gold tools;
what they teach (the usage field, see package learn) is given to the ranker,
and the second half is ranked without and with it. Only the second half is
scored; the report shows both and the gain.

With --traces FILE instead of --queries, the benchmark is a user's own
recorded sessions (capbroker trace --export): each session with a task and a
call that ran is a query, its gold the tools it called (see capbroker replay).`,
		Example: `  capbroker eval --tools ../shared/bench/data/bfcl/tools.jsonl --queries ../shared/bench/data/bfcl/queries.jsonl
  capbroker eval --tools T.jsonl --queries Q.jsonl --filter subset=single --k 1,5,10 --json
  capbroker eval --tools T.jsonl --queries Q.jsonl --misses 20
  capbroker eval --learn-split 0.5 --tools T.jsonl --queries Q.jsonl
  capbroker eval --mode select --min-slots 2 --tools T.jsonl --queries Q.jsonl --json
  capbroker eval $(for f in examples/catalog/*.json; do echo --tools $f; done) --queries examples/tasks.jsonl
  capbroker eval --mode session --sample 100 --tools T.jsonl --queries Q.jsonl`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if mode == eval.ModeSession {
				filter, err := eval.ParseFilter(filters)
				if err != nil {
					return usageError{fmt.Errorf("--filter: %w", err)}
				}
				if minSlot > 1 {
					filter = eval.MinSlots(filter, minSlot)
				}
				if queries == "" {
					return usageError{fmt.Errorf("eval --mode session needs --queries")}
				}
				return m.evalSession(ctx, &sf, tools, queries, filter, limit, ranker, cmd.Flags().Changed("ranker"), db, asJSON)
			}
			if sf.sample > 0 {
				return usageError{fmt.Errorf("--sample takes --mode session (other modes: --limit)")}
			}
			if len(tools) == 0 || (queries == "") == (traces == "") {
				return usageError{fmt.Errorf("eval needs --tools and either --queries or --traces")}
			}
			kList, err := eval.ParseKs(ks)
			if err != nil {
				return usageError{fmt.Errorf("--k: %w", err)}
			}
			filter, err := eval.ParseFilter(filters)
			if err != nil {
				return usageError{fmt.Errorf("--filter: %w", err)}
			}
			if minSlot > 1 {
				filter = eval.MinSlots(filter, minSlot)
			}
			if !slices.Contains(eval.Modes, mode) {
				return usageError{fmt.Errorf("--mode %q: want rank, select, find or session", mode)}
			}
			if findK < 1 || maxSel < 1 {
				return usageError{fmt.Errorf("--find-k %d, --max %d: want at least 1", findK, maxSel)}
			}
			cards, err := m.loadCards(ctx, &catalogFlags{tools: tools})
			if err != nil {
				return err
			}
			// Score against the catalog's names, as find returns them: a
			// name two tool files share becomes source__name, and gold
			// names are checked against those.
			cat, warns := card.NewCatalog(cards)
			m.printWarnings(warns)
			cards = cat.Cards()
			var qs []eval.Query
			if traces != "" {
				qs, err = traceQueries(traces)
			} else {
				qs, err = eval.LoadQueries(queries)
			}
			if err != nil {
				return err
			}
			if mode != eval.ModeRank {
				var newRanker func(context.Context, []card.Card) (policy.Ranker, error)
				var fallbacks func() int64
				if ranker != "lexical" {
					if newRanker, fallbacks, err = m.denseNewRanker(ctx, ranker, db, denseW); err != nil {
						return err
					}
				}
				build := brokerExposer(mode, findK, &policy.Options{MaxSelected: maxSel}, newRanker)
				rep, err := eval.RunExposure(ctx, mode, build, cards, qs, &eval.Options{Ks: kList, Filter: filter, Limit: limit})
				if err != nil {
					return err
				}
				if fallbacks != nil && fallbacks() > 0 {
					return fmt.Errorf("the embeddings endpoint failed %d times during the run, so those queries were ranked lexically: the figures are not %s figures", fallbacks(), ranker)
				}
				return m.writeEvalReport(rep, asJSON, misses, kList)
			}
			if split != 0 {
				if mode != eval.ModeRank {
					return usageError{fmt.Errorf("--learn-split scores the ranking: it takes --mode rank, not %s", mode)}
				}
				if usageW < 0 {
					return usageError{fmt.Errorf("--usage-weight %v: want 0 (the default) or more", usageW)}
				}
				tune := splitTuning{field: rank.FieldWeight{Weight: usageW, B: usageB}, evidence: usageE, phrases: phrases, precedent: preced}
				return m.evalSplit(ctx, ranker, db, denseW, tune, split, cards, qs, &eval.Options{Ks: kList, Filter: filter, Limit: limit}, asJSON)
			}
			build := brokerRanker
			var fallbacks func() int64
			if ranker != "lexical" {
				build, fallbacks, err = m.denseRanker(ctx, ranker, db, denseW)
				if err != nil {
					return err
				}
			}
			rep, err := eval.Run(ctx, build, cards, qs, &eval.Options{Ks: kList, Filter: filter, Limit: limit})
			if err != nil {
				return err
			}
			if fallbacks != nil && fallbacks() > 0 {
				return fmt.Errorf("the embeddings endpoint failed %d times during the run, so those queries were ranked lexically: the figures are not %s figures", fallbacks(), ranker)
			}
			return m.writeEvalReport(rep, asJSON, misses, kList)
		},
	}
	cmd.Flags().StringArrayVar(&tools, "tools", nil, "tool file of the benchmark (repeatable)")
	cmd.Flags().StringVar(&queries, "queries", "", "queries.jsonl of the benchmark")
	cmd.Flags().StringVar(&traces, "traces", "", "recorded sessions as the benchmark (a JSONL export of capbroker trace): each session's task, with the tools it called as gold")
	cmd.Flags().StringVar(&ks, "k", "1,3,5,10", "cut-offs for recall, ndcg and comp")
	cmd.Flags().StringArrayVar(&filters, "filter", nil, "only queries whose FIELD equals VALUE (FIELD=VALUE; repeatable)")
	cmd.Flags().IntVar(&limit, "limit", 0, "at most this many queries (0: all)")
	cmd.Flags().IntVar(&misses, "misses", 0, "also list up to N queries whose gold is not in the top k")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as one JSON object")
	cmd.Flags().StringVar(&ranker, "ranker", "lexical", "lexical, dense or hybrid (dense and hybrid use the built-in sentence encoder, or the embeddings endpoint CAPBROKER_EMBED_MODEL and CAPBROKER_EMBED_BASE_URL name)")
	cmd.Flags().StringVar(&mode, "mode", eval.ModeRank, "what to score: rank (the raw ranking), select (what select exposes), find (what find_capability returns) or session (a scripted agent through the gateway)")
	cmd.Flags().IntVar(&findK, "find-k", policy.DefaultFindK, "with --mode find: how many matches find returns")
	cmd.Flags().IntVar(&maxSel, "max", policy.DefaultMaxSelected, "with --mode select: at most this many picks, floor included")
	cmd.Flags().IntVar(&minSlot, "min-slots", 0, "only queries with at least this many gold slots (2: multi-tool queries)")
	cmd.Flags().Float64Var(&denseW, "dense-weight", 0, "with --ranker hybrid: the meaning's share of the fused score, in (0,1] (0: the default)")
	cmd.Flags().Float64Var(&split, "learn-split", 0, "measure learning from use: the first share of the queries (0.5: half) become past sessions calling their gold tools, and the rest is ranked without and with what they teach")
	cmd.Flags().Float64Var(&usageW, "usage-weight", 0, "with --learn-split: the weight of the usage field (0: the default)")
	cmd.Flags().Float64Var(&usageB, "usage-b", 0, "with --learn-split and --usage-weight: the usage field's length normalisation, in [0,1]")
	cmd.Flags().Float64Var(&usageE, "usage-evidence", 0, "with --learn-split: the evidence (faded past sessions) at which a card's usage field weighs half (0: the default; negative: full weight with any evidence)")
	cmd.Flags().IntVar(&phrases, "usage-phrases", 0, "with --learn-split: the phrases a card keeps (0: the default)")
	cmd.Flags().MarkHidden("usage-b")
	cmd.Flags().Float64Var(&preced, "usage-precedent", 0, "with --learn-split: the weight of the past phrase most like the query (0: the default; negative: off)")
	sf.register(cmd)
	cmd.AddCommand(m.newEvalUpstreamCmd())
	cmd.Flags().StringVar(&db, "db", "", "SQLite file of the embedding cache (dense and hybrid; default: the session database in the data directory)")
	return cmd
}

// readTraceFile reads the trace records of a JSONL file.
func readTraceFile(path string) ([]trace.Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading traces: %w", err)
	}
	defer f.Close()
	return trace.ReadJSONL(f, path)
}

// traceQueries reads recorded sessions from a JSONL trace file as
// benchmark queries (replay.Queries).
func traceQueries(path string) ([]eval.Query, error) {
	recs, err := readTraceFile(path)
	if err != nil {
		return nil, err
	}
	qs := replay.Queries(replay.Sessions(recs))
	if len(qs) == 0 {
		return nil, fmt.Errorf("%s: no recorded session has both a task and a call that ran", path)
	}
	return qs, nil
}

// writeEvalReport prints rep as JSON or as text, with up to misses
// queries whose largest cut-off (in select and find modes: what was
// exposed) leaves a gold slot unfilled.
func (m *Main) writeEvalReport(rep *eval.Report, asJSON bool, misses int, ks []int) error {
	if asJSON {
		return writeJSON(m.Stdout, rep)
	}
	if err := rep.WriteText(m.Stdout); err != nil {
		return err
	}
	if misses > 0 {
		fmt.Fprintln(m.Stdout)
		return rep.WriteMisses(m.Stdout, slices.Max(ks), misses)
	}
	return nil
}

// brokerExposer indexes the tools in a Broker and answers each query with
// Broker.Select (mode select) or Broker.Find with k findK (mode find):
// what the agent is given. newRanker, if set, builds the dense or hybrid
// ranker; nil ranks lexically.
func brokerExposer(mode string, findK int, opts *policy.Options, newRanker func(context.Context, []card.Card) (policy.Ranker, error)) eval.BuildExposeFunc {
	return func(ctx context.Context, tools []card.Card) (eval.Exposer, error) {
		bo := &capbroker.Options{Cards: tools, Logger: discardLogger()}
		if newRanker != nil {
			r, err := newRanker(ctx, tools)
			if err != nil {
				return nil, err
			}
			bo.Ranker = r
		}
		b, err := capbroker.New(ctx, bo)
		if err != nil {
			return nil, err
		}
		format := payload.OpenAI
		if opts.Format != "" {
			format = opts.Format
		}
		full := b.Selector().FullTokens(format)
		return eval.ExposeFunc(func(ctx context.Context, query string) (eval.Exposure, error) {
			e := eval.Exposure{FullTokens: full}
			if mode == eval.ModeSelect {
				sel := b.Select(ctx, query, opts)
				if sel.Degraded {
					return e, fmt.Errorf("selection degraded: %s", sel.Failure)
				}
				e.Names, e.Tokens = sel.Names(), sel.Tokens.Exposed
				for _, p := range sel.Tools {
					if !p.Floor || p.Score > 0 {
						e.Ranked++
					}
				}
			} else {
				res := b.Find(ctx, query, findK)
				if res.Degraded {
					return e, fmt.Errorf("find failed: %s", res.Failure)
				}
				e.Names = res.Names()
				e.Ranked = len(e.Names)
				e.Tokens = b.Selector().ExposedTokens(e.Names, format)
			}
			if e.Ranked == 0 {
				// Only when it matters, so latency stays that of the command.
				hits, err := b.Rank(ctx, query, 1)
				if err != nil {
					return e, err
				}
				e.RankerHit = len(hits) > 0
			}
			return e, nil
		}), nil
	}
}

// denseRanker returns a build function for the dense or hybrid ranker,
// configured from the environment, and a counter of endpoint fallbacks.
func (m *Main) denseRanker(ctx context.Context, kind, db string, denseWeight float64) (eval.BuildFunc, func() int64, error) {
	newRanker, failed, err := m.denseNewRanker(ctx, kind, db, denseWeight)
	if err != nil {
		return nil, nil, err
	}
	build := func(ctx context.Context, tools []card.Card) (eval.Ranker, error) {
		r, err := newRanker(ctx, tools)
		if err != nil {
			return nil, err
		}
		return evalRanker(r), nil
	}
	return build, failed, nil
}

// denseNewRanker returns what builds the dense or hybrid ranker over some
// tools, configured from the environment, and a counter of endpoint
// fallbacks.
func (m *Main) denseNewRanker(ctx context.Context, kind, db string, denseWeight float64) (func(context.Context, []card.Card) (policy.Ranker, error), func() int64, error) {
	e, cache, failed, err := m.denseParts(ctx, kind, db)
	if err != nil {
		return nil, nil, err
	}
	opts := &dense.Options{DenseWeight: denseWeight, OnFallback: func(string, error) { failed.Add(1) }}
	newRanker := func(ctx context.Context, tools []card.Card) (policy.Ranker, error) {
		return dense.NewRanker(ctx, kind, tools, e, cache, opts)
	}
	return newRanker, failed.Load, nil
}

// denseParts returns what a dense or hybrid ranker of eval is built from:
// the built-in encoder unless an endpoint is configured, the embedding
// cache, and a counter of endpoint fallbacks.
func (m *Main) denseParts(ctx context.Context, kind, db string) (dense.Embedder, *dense.Cache, *atomic.Int64, error) {
	if !slices.Contains(dense.Kinds, kind) {
		return nil, nil, nil, usageError{fmt.Errorf("--ranker %q: want lexical, dense or hybrid", kind)}
	}
	var e dense.Embedder
	if m.Getenv(dense.EnvModel) != "" {
		c, err := dense.ClientFromEnv(m.Getenv, nil)
		if err != nil {
			return nil, nil, nil, err
		}
		e = c
	} else {
		enc, err := encoder.New(nil)
		if err != nil {
			return nil, nil, nil, err
		}
		e = enc
	}
	db, err := m.embedCachePath(db)
	if err != nil {
		return nil, nil, nil, err
	}
	cache, err := dense.OpenCache(ctx, db)
	if err != nil {
		return nil, nil, nil, err
	}
	return e, cache, new(atomic.Int64), nil
}

// brokerRanker indexes the tools in a Broker and ranks with Broker.Rank,
// the code path of find.
func brokerRanker(ctx context.Context, tools []card.Card) (eval.Ranker, error) {
	b, err := capbroker.New(ctx, &capbroker.Options{Cards: tools, Logger: discardLogger()})
	if err != nil {
		return nil, err
	}
	return evalRanker(b), nil
}

// evalRanker adapts a ranker of hits to the names eval scores.
func evalRanker(r policy.Ranker) eval.Ranker {
	return eval.RankFunc(func(ctx context.Context, query string, k int) ([]string, error) {
		hits, err := r.Rank(ctx, query, k)
		if err != nil {
			return nil, err
		}
		names := make([]string, len(hits))
		for i, h := range hits {
			names[i] = h.Name
		}
		return names, nil
	})
}

// splitTuning are the hidden knobs of --learn-split that parameters are
// chosen with: the usage field's weight and normalisation, the evidence
// at which it weighs half, and the phrases a card keeps.
type splitTuning struct {
	field    rank.FieldWeight
	evidence float64
	phrases  int
	// precedent weighs the past phrase most like the query.
	precedent float64
}

// evalSplit runs the time-split evaluation of learning from use
// (--learn-split) with the ranker kind asked for, and prints it.
func (m *Main) evalSplit(ctx context.Context, kind, db string, denseW float64, tune splitTuning, frac float64, cards []card.Card, qs []eval.Query, opts *eval.Options, asJSON bool) error {
	rankOpts := func(u rank.Usage) *rank.Options {
		o := &rank.Options{Usage: u, UsageEvidence: tune.evidence, Precedent: tune.precedent}
		if tune.field.Weight > 0 {
			o.Fields[rank.FieldUsage] = tune.field
		}
		return o
	}
	var build func(rank.Usage) eval.BuildFunc
	var fallbacks func() int64
	if kind == dense.KindLexical {
		build = func(u rank.Usage) eval.BuildFunc {
			ro := rankOpts(u)
			return func(ctx context.Context, tools []card.Card) (eval.Ranker, error) {
				b, err := capbroker.New(ctx, &capbroker.Options{Cards: tools, Rank: ro, Logger: discardLogger()})
				if err != nil {
					return nil, err
				}
				return evalRanker(b), nil
			}
		}
	} else {
		e, cache, failed, err := m.denseParts(ctx, kind, db)
		if err != nil {
			return err
		}
		fallbacks = failed.Load
		build = func(u rank.Usage) eval.BuildFunc {
			opts := &dense.Options{DenseWeight: denseW, Rank: rankOpts(u), OnFallback: func(string, error) { failed.Add(1) }}
			return func(ctx context.Context, tools []card.Card) (eval.Ranker, error) {
				r, err := dense.NewRanker(ctx, kind, tools, e, cache, opts)
				if err != nil {
					return nil, err
				}
				return evalRanker(r), nil
			}
		}
	}
	rep, err := learn.EvalSplit(ctx, build, cards, qs, frac, opts, &learn.Options{MaxPhrases: tune.phrases})
	if err != nil {
		return err
	}
	if fallbacks != nil && fallbacks() > 0 {
		return fmt.Errorf("the embeddings endpoint failed %d times during the run, so those queries were ranked lexically: the figures are not %s figures", fallbacks(), kind)
	}
	if asJSON {
		return writeJSON(m.Stdout, rep)
	}
	return rep.WriteText(m.Stdout)
}
