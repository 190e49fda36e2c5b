package eval

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/capbroker/capbroker/card"
)

// Ranker ranks tools for a query. Rank returns at most k tool names, best
// first. Run calls it from one goroutine, one query at a time, so that
// latencies are not disturbed by each other.
type Ranker interface {
	Rank(ctx context.Context, query string, k int) ([]string, error)
}

// RankFunc adapts a function to a [Ranker].
type RankFunc func(ctx context.Context, query string, k int) ([]string, error)

// Rank calls f.
func (f RankFunc) Rank(ctx context.Context, query string, k int) ([]string, error) {
	return f(ctx, query, k)
}

// BuildFunc indexes tools and returns the ranker that searches them. Run
// times it as the index build.
type BuildFunc func(ctx context.Context, tools []card.Card) (Ranker, error)

// DefaultKs are the cut-offs used when Options.Ks is empty.
var DefaultKs = []int{1, 3, 5, 10}

// Options adjust a run. A nil *Options is the zero value.
type Options struct {
	// Ks are the cut-offs at which recall, NDCG and completeness are
	// reported, each at least 1. If empty, [DefaultKs]. Run asks the
	// ranker for the largest.
	Ks []int
	// Filter, if non-nil, keeps only the queries it returns true for
	// (see [ParseFilter]).
	Filter func(*Query) bool
	// Limit, if positive, scores only the first Limit queries that pass
	// the filter, in file order.
	Limit int
}

// Run builds an index of tools with build, ranks every query with it, and
// reports the mean metrics and the latencies.
//
// A query is scored only when each of its gold slots names at least one
// of the tools: a query whose gold is not in the catalog measures the
// data, not the ranker, so it is left out, counted in
// [Report.UnknownGold] and listed in [Report.Skipped], instead of being
// counted as a miss. Run fails when no query is left to score, when a
// cut-off is below 1, or when the build or any ranking fails.
func Run(ctx context.Context, build BuildFunc, tools []card.Card, queries []Query, opts *Options) (*Report, error) {
	if opts == nil {
		opts = &Options{}
	}
	ks := slices.Clone(opts.Ks)
	if len(ks) == 0 {
		ks = slices.Clone(DefaultKs)
	}
	slices.Sort(ks)
	ks = slices.Compact(ks)
	if ks[0] < 1 {
		return nil, fmt.Errorf("cut-off %d: want at least 1", ks[0])
	}
	maxK := ks[len(ks)-1]
	if len(tools) == 0 {
		return nil, errors.New("no tools to rank")
	}
	rep, scored, err := scoredQueries(tools, queries, opts)
	if err != nil {
		return nil, err
	}
	rep.Ks = ks

	start := time.Now()
	ranker, err := build(ctx, tools)
	if err != nil {
		return nil, fmt.Errorf("building the index: %w", err)
	}
	// One untimed query first: a ranker may load tables on first use
	// (the related words, say), which is getting ready, not answering,
	// and would otherwise land on one query's latency.
	if _, err := ranker.Rank(ctx, scored[0].Text, maxK); err != nil {
		return nil, fmt.Errorf("ranking query %s: %w", scored[0].ID, err)
	}
	rep.IndexMS = ms(time.Since(start))

	rep.Results = make([]Result, 0, len(scored))
	lat := make([]time.Duration, 0, len(scored))
	sum := Score{Recall: AtK{}, NDCG: AtK{}, Comp: AtK{}}
	for _, q := range scored {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		t0 := time.Now()
		ranked, err := ranker.Rank(ctx, q.Text, maxK)
		d := time.Since(t0)
		if err != nil {
			return nil, fmt.Errorf("ranking query %s: %w", q.ID, err)
		}
		if len(ranked) > maxK {
			ranked = ranked[:maxK]
		}
		slots := q.Slots()
		s := ScoreRanking(slots, ranked, ks)
		rep.Results = append(rep.Results, Result{ID: q.ID, Query: q.Text, Slots: slots, Ranked: ranked, Score: s, Latency: d})
		lat = append(lat, d)
		sum.Top1 += s.Top1
		sum.RR += s.RR
		for _, k := range ks {
			sum.Recall[k] += s.Recall[k]
			sum.NDCG[k] += s.NDCG[k]
			sum.Comp[k] += s.Comp[k]
		}
	}

	n := float64(len(scored))
	rep.Queries = len(scored)
	rep.Top1 = sum.Top1 / n
	rep.MRR = sum.RR / n
	rep.Recall, rep.NDCG, rep.Comp = AtK{}, AtK{}, AtK{}
	for _, k := range ks {
		rep.Recall[k] = sum.Recall[k] / n
		rep.NDCG[k] = sum.NDCG[k] / n
		rep.Comp[k] = sum.Comp[k] / n
	}
	slices.Sort(lat)
	rep.P50US = us(percentile(lat, 500))
	rep.P99US = us(percentile(lat, 990))
	return rep, nil
}

// unknownSlots returns, for each slot none of whose alternatives is a
// known tool, its alternatives joined by "|".
func unknownSlots(slots [][]string, known map[string]bool) []string {
	var missing []string
	for _, alts := range slots {
		ok := false
		for _, a := range alts {
			ok = ok || known[a]
		}
		if !ok {
			missing = append(missing, joinAlts(alts))
		}
	}
	return missing
}

// percentile returns the nearest-rank quantile of sorted durations at
// perMille/1000: the smallest value with at least that share of the
// values at or below it.
func percentile(sorted []time.Duration, perMille int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := (perMille*len(sorted) + 999) / 1000 // ceil, in whole numbers
	return sorted[max(0, min(rank-1, len(sorted)-1))]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 }
func us(d time.Duration) float64 { return float64(d.Nanoseconds()/10) / 100 }
