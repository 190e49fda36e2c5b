package eval_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/eval"
	"github.com/capbroker/capbroker/internal/testenv"
	"github.com/capbroker/capbroker/source/toolfile"
)

// loadBench reads one set of ../shared/bench.
func loadBench(tb testing.TB, set string) ([]card.Card, []eval.Query) {
	tb.Helper()
	dir := testenv.NeedShared(tb, filepath.Join("bench", "data", set))
	tools, err := toolfile.Load(filepath.Join(dir, "tools.jsonl"))
	if err != nil {
		tb.Fatal(err)
	}
	queries, err := eval.LoadQueries(filepath.Join(dir, "queries.jsonl"))
	if err != nil {
		tb.Fatal(err)
	}
	return tools, queries
}

// oracle ranks the first name of each gold slot first, then, to fill k,
// tools that are not gold. against does the opposite: only non-gold tools.
func oracle(queries []eval.Query, tools []card.Card, gold bool) eval.BuildFunc {
	slots := map[string][][]string{}
	for _, q := range queries {
		slots[q.Text] = q.Slots()
	}
	return func(context.Context, []card.Card) (eval.Ranker, error) {
		return eval.RankFunc(func(_ context.Context, query string, k int) ([]string, error) {
			var out []string
			isGold := map[string]bool{}
			for _, alts := range slots[query] {
				if gold {
					out = append(out, alts[0])
				}
				for _, a := range alts {
					isGold[a] = true
				}
			}
			for _, t := range tools {
				if len(out) == k {
					break
				}
				if !isGold[t.Name] {
					out = append(out, t.Name)
				}
			}
			return out, nil
		}), nil
	}
}

// TestBenchOracle runs the harness over the real benchmark files with a
// ranker that knows the answers: every gold name must be a tool, and the
// metrics must come out exactly as perfect (or, for the ranker that
// avoids the answers, zero).
func TestBenchOracle(t *testing.T) {
	for _, set := range []string{"metatool", "bfcl", "sealtools"} {
		t.Run(set, func(t *testing.T) {
			tools, queries := loadBench(t, set)
			// Queries that share a text with different gold would confuse
			// the oracle; score each text once.
			seen := map[string]bool{}
			queries = slices.DeleteFunc(slices.Clone(queries), func(q eval.Query) bool {
				dup := seen[q.Text]
				seen[q.Text] = true
				return dup
			})
			rep, err := eval.Run(context.Background(), oracle(queries, tools, true), tools, queries, nil)
			if err != nil {
				t.Fatal(err)
			}
			if rep.UnknownGold != 0 || rep.Queries != len(queries) || rep.Tools != len(tools) {
				t.Fatalf("queries %d of %d, tools %d, unknown gold %d", rep.Queries, len(queries), rep.Tools, rep.UnknownGold)
			}
			for _, k := range rep.Ks {
				if rep.NDCG[k] != 1 {
					t.Errorf("oracle ndcg@%d = %v, want 1", k, rep.NDCG[k])
				}
			}
			if rep.Top1 != 1 || rep.MRR != 1 || rep.Recall[10] != 1 || rep.Comp[10] != 1 {
				t.Errorf("oracle: top1 %v mrr %v recall@10 %v comp@10 %v, want 1", rep.Top1, rep.MRR, rep.Recall[10], rep.Comp[10])
			}

			rep, err = eval.Run(context.Background(), oracle(queries, tools, false), tools, queries, nil)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Top1 != 0 || rep.MRR != 0 || rep.Recall[10] != 0 || rep.NDCG[10] != 0 || rep.Comp[10] != 0 {
				t.Errorf("anti-oracle: top1 %v mrr %v recall@10 %v ndcg@10 %v comp@10 %v, want 0",
					rep.Top1, rep.MRR, rep.Recall[10], rep.NDCG[10], rep.Comp[10])
			}
		})
	}
}

// TestBenchRank runs capbroker's ranker over a slice of each benchmark,
// as `capbroker eval` does. The floors sit below plain BM25 (see
// ../shared/bench/README.md) and only catch a broken pipeline; the ranking
// targets are the rank package's business.
func TestBenchRank(t *testing.T) {
	for _, tt := range []struct {
		set    string
		filter []string
		top1   float64
		ndcg10 float64
	}{
		{"metatool", []string{"subset=single"}, 0.2, 0.3},
		{"bfcl", nil, 0.5, 0.6},
		{"sealtools", nil, 0.85, 0.8},
	} {
		t.Run(tt.set, func(t *testing.T) {
			tools, queries := loadBench(t, tt.set)
			filter, err := eval.ParseFilter(tt.filter)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := eval.Run(context.Background(), eval.BuildRank(nil), tools, queries,
				&eval.Options{Filter: filter, Limit: 500})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %d queries, top1 %.3f, r@5 %.3f, ndcg@10 %.3f, comp@5 %.3f, index %.1f ms, p50 %.1f µs, p99 %.1f µs",
				tt.set, rep.Queries, rep.Top1, rep.Recall[5], rep.NDCG[10], rep.Comp[5], rep.IndexMS, rep.P50US, rep.P99US)
			if rep.Queries != 500 {
				t.Errorf("scored %d queries, want 500", rep.Queries)
			}
			if rep.Top1 < tt.top1 || rep.NDCG[10] < tt.ndcg10 {
				t.Errorf("top1 %.3f (floor %.2f), ndcg@10 %.3f (floor %.2f)", rep.Top1, tt.top1, rep.NDCG[10], tt.ndcg10)
			}
			for _, r := range rep.Results {
				// rank.Search returns only cards that match a query term, so
				// a list may be shorter than k.
				if len(r.Ranked) > 10 {
					t.Fatalf("%s: ranked %d names, want at most 10", r.ID, len(r.Ranked))
				}
			}
		})
	}
}

func BenchmarkRunBFCL(b *testing.B) {
	tools, queries := loadBench(b, "bfcl")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := eval.Run(context.Background(), eval.BuildRank(nil), tools, queries, &eval.Options{Limit: 200}); err != nil {
			b.Fatal(err)
		}
	}
}

// Example runs the harness the way `capbroker eval` does, on a tiny
// benchmark.
func Example() {
	tools, _ := toolfile.Parse([]byte(`
{"name": "get_weather", "description": "Get the current weather for a city."}
{"name": "send_email", "description": "Send an email to a recipient."}
{"name": "search_files", "description": "Search files by name or content."}
`), "tools.jsonl")
	queries := []eval.Query{
		{ID: "1", Text: "what is the weather in Paris", Gold: []string{"get_weather"}},
		{ID: "2", Text: "email the report to Ana", Gold: []string{"send_email"}},
		{ID: "3", Text: "plugh xyzzy", Gold: []string{"search_files"}}, // no word in common

	}
	rep, err := eval.Run(context.Background(), eval.BuildRank(nil), tools, queries, &eval.Options{Ks: []int{1, 3}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("queries %d, top1 %.2f, recall@3 %.2f\n", rep.Queries, rep.Top1, rep.Recall[3])
	rep.WriteMisses(os.Stdout, 1, 0)
	// Output:
	// queries 3, top1 0.67, recall@3 0.67
	// 3  plugh xyzzy
	//   gold:   search_files  (missed)
	//   top 1:  (nothing)
}
