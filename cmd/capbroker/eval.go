package main

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/spf13/cobra"

	capbroker "github.com/capbroker/capbroker"
	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/dense"
	"github.com/capbroker/capbroker/eval"
	"github.com/capbroker/capbroker/policy"
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
source), as find returns it.`,
		Example: `  capbroker eval --tools ../shared/bench/data/bfcl/tools.jsonl --queries ../shared/bench/data/bfcl/queries.jsonl
  capbroker eval --tools T.jsonl --queries Q.jsonl --filter subset=single --k 1,5,10 --json
  capbroker eval --tools T.jsonl --queries Q.jsonl --misses 20
  capbroker eval $(for f in examples/catalog/*.json; do echo --tools $f; done) --queries examples/tasks.jsonl`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if len(tools) == 0 || queries == "" {
				return usageError{fmt.Errorf("eval needs --tools and --queries")}
			}
			kList, err := eval.ParseKs(ks)
			if err != nil {
				return usageError{fmt.Errorf("--k: %w", err)}
			}
			filter, err := eval.ParseFilter(filters)
			if err != nil {
				return usageError{fmt.Errorf("--filter: %w", err)}
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
			qs, err := eval.LoadQueries(queries)
			if err != nil {
				return err
			}
			build := brokerRanker
			var fallbacks func() int64
			if ranker != "lexical" {
				build, fallbacks, err = m.denseRanker(ctx, ranker, db)
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
			if asJSON {
				return writeJSON(m.Stdout, rep)
			}
			if err := rep.WriteText(m.Stdout); err != nil {
				return err
			}
			if misses > 0 {
				fmt.Fprintln(m.Stdout)
				return rep.WriteMisses(m.Stdout, slices.Max(kList), misses)
			}
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&tools, "tools", nil, "tool file of the benchmark (repeatable)")
	cmd.Flags().StringVar(&queries, "queries", "", "queries.jsonl of the benchmark")
	cmd.Flags().StringVar(&ks, "k", "1,3,5,10", "cut-offs for recall, ndcg and comp")
	cmd.Flags().StringArrayVar(&filters, "filter", nil, "only queries whose FIELD equals VALUE (FIELD=VALUE; repeatable)")
	cmd.Flags().IntVar(&limit, "limit", 0, "at most this many queries (0: all)")
	cmd.Flags().IntVar(&misses, "misses", 0, "also list up to N queries whose gold is not in the top k")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as one JSON object")
	cmd.Flags().StringVar(&ranker, "ranker", "lexical", "lexical, dense or hybrid (dense and hybrid need an embeddings endpoint: CAPBROKER_EMBED_MODEL, CAPBROKER_EMBED_BASE_URL)")
	cmd.Flags().StringVar(&db, "db", "", "SQLite file of the embedding cache (dense and hybrid; default: the session database in the data directory)")
	return cmd
}

// denseRanker returns a build function for the dense or hybrid ranker,
// configured from the environment, and a counter of endpoint fallbacks.
func (m *Main) denseRanker(ctx context.Context, kind, db string) (eval.BuildFunc, func() int64, error) {
	if !slices.Contains(dense.Kinds, kind) {
		return nil, nil, usageError{fmt.Errorf("--ranker %q: want lexical, dense or hybrid", kind)}
	}
	e, err := dense.ClientFromEnv(m.Getenv, nil)
	if err != nil {
		return nil, nil, err
	}
	db, err = m.embedCachePath(db)
	if err != nil {
		return nil, nil, err
	}
	cache, err := dense.OpenCache(ctx, db)
	if err != nil {
		return nil, nil, err
	}
	var failed atomic.Int64
	opts := &dense.Options{OnFallback: func(string, error) { failed.Add(1) }}
	build := func(ctx context.Context, tools []card.Card) (eval.Ranker, error) {
		r, err := dense.NewRanker(ctx, kind, tools, e, cache, opts)
		if err != nil {
			return nil, err
		}
		return evalRanker(r), nil
	}
	return build, failed.Load, nil
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
