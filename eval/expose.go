package eval

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/capbroker/capbroker/card"
)

// Modes of a run: what is scored.
const (
	// ModeRank scores the raw ranking (a full top k), as [Run] does.
	ModeRank = "rank"
	// ModeSelect scores what select exposes for a task.
	ModeSelect = "select"
	// ModeFind scores what find_capability returns for a query.
	ModeFind = "find"
)

// Modes lists the modes, for flags and messages.
var Modes = []string{ModeRank, ModeSelect, ModeFind}

// Exposure is what an agent is given for one query: what select exposes
// or what find returns.
type Exposure struct {
	// Names are the tools exposed, in order, floor included and the
	// escape hatch left out (it is always there and fills no slot).
	Names []string
	// Ranked is how many of Names came from ranking rather than a floor:
	// a query with none is "left empty".
	Ranked int
	// Tokens are the tokens of the exposed payload (the hatch included),
	// FullTokens those of the whole catalog in the same format.
	Tokens, FullTokens int
	// RankerHit reports whether the ranker had any hit for the query: an
	// empty exposure then means the policy threw a hit away.
	RankerHit bool
}

// Exposer answers a query the way an agent would be answered.
type Exposer interface {
	Expose(ctx context.Context, query string) (Exposure, error)
}

// ExposeFunc adapts a function to an [Exposer].
type ExposeFunc func(ctx context.Context, query string) (Exposure, error)

// Expose calls f.
func (f ExposeFunc) Expose(ctx context.Context, query string) (Exposure, error) { return f(ctx, query) }

// BuildExposeFunc indexes tools and returns the exposer over them.
type BuildExposeFunc func(ctx context.Context, tools []card.Card) (Exposer, error)

// ExposureScore is what select or find gave over the scored queries.
// Every figure is a mean over queries unless said otherwise.
type ExposureScore struct {
	// SlotRecall is the share of gold slots with one of their tools
	// exposed, over all slots of all queries (micro average).
	SlotRecall float64 `json:"slot_recall"`
	// AllCovered is the share of queries with every gold slot covered.
	AllCovered float64 `json:"all_covered"`
	// AllCoveredN is the number of those queries.
	AllCoveredN int `json:"all_covered_n"`
	// Empty counts the queries given nothing from ranking (select: the
	// floor and the hatch only; find: no match), and EmptyWithHit those
	// among them for which the ranker had a hit.
	Empty        int `json:"empty"`
	EmptyWithHit int `json:"empty_with_hit"`
	// MeanExposed is the mean number of tools exposed (hatch left out);
	// MaxExposed the most exposed for one query.
	MeanExposed float64 `json:"mean_exposed"`
	MaxExposed  int     `json:"max_exposed"`
	// MeanTokens is the mean of the exposed payload's tokens; FullTokens
	// the full catalog's; TokenShare their ratio (MeanTokens/FullTokens);
	// MaxTokenShare the largest ratio for one query.
	MeanTokens    float64 `json:"mean_tokens"`
	FullTokens    int     `json:"full_tokens"`
	TokenShare    float64 `json:"token_share"`
	MaxTokenShare float64 `json:"max_token_share"`
}

// RunExposure scores what build's exposer gives each query, in mode
// ModeSelect or ModeFind: the report carries the exposure figures in
// [Report.Exposure] and, for comparison with rank mode, the usual
// metrics computed on the exposed names in order (a list shorter than k
// scores as if padded with misses). Queries are filtered and left out for
// unknown gold as in [Run].
func RunExposure(ctx context.Context, mode string, build BuildExposeFunc, tools []card.Card, queries []Query, opts *Options) (*Report, error) {
	if mode != ModeSelect && mode != ModeFind {
		return nil, fmt.Errorf("mode %q: want %s or %s", mode, ModeSelect, ModeFind)
	}
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
	if len(tools) == 0 {
		return nil, errors.New("no tools to rank")
	}
	rep, scored, err := scoredQueries(tools, queries, opts)
	if err != nil {
		return nil, err
	}
	rep.Ks, rep.Mode = ks, mode

	start := time.Now()
	ex, err := build(ctx, tools)
	if err != nil {
		return nil, fmt.Errorf("building the index: %w", err)
	}
	if _, err := ex.Expose(ctx, scored[0].Text); err != nil {
		return nil, fmt.Errorf("answering query %s: %w", scored[0].ID, err)
	}
	rep.IndexMS = ms(time.Since(start))

	es := &ExposureScore{}
	rep.Results = make([]Result, 0, len(scored))
	lat := make([]time.Duration, 0, len(scored))
	sum := Score{Recall: AtK{}, NDCG: AtK{}, Comp: AtK{}}
	slots, covered := 0, 0
	var tokens float64
	for _, q := range scored {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		t0 := time.Now()
		e, err := ex.Expose(ctx, q.Text)
		d := time.Since(t0)
		if err != nil {
			return nil, fmt.Errorf("answering query %s: %w", q.ID, err)
		}
		qs := q.Slots()
		s := ScoreRanking(qs, e.Names, ks)
		n := filled(qs, e.Names)
		slots += len(qs)
		covered += n
		if n == len(qs) {
			es.AllCoveredN++
		}
		if e.Ranked == 0 {
			es.Empty++
			if e.RankerHit {
				es.EmptyWithHit++
			}
		}
		es.MeanExposed += float64(len(e.Names))
		es.MaxExposed = max(es.MaxExposed, len(e.Names))
		tokens += float64(e.Tokens)
		es.FullTokens = e.FullTokens
		if e.FullTokens > 0 {
			es.MaxTokenShare = max(es.MaxTokenShare, float64(e.Tokens)/float64(e.FullTokens))
		}
		rep.Results = append(rep.Results, Result{ID: q.ID, Query: q.Text, Slots: qs, Ranked: e.Names, Score: s, Latency: d})
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
	es.SlotRecall = float64(covered) / float64(max(slots, 1))
	es.AllCovered = float64(es.AllCoveredN) / n
	es.MeanExposed /= n
	es.MeanTokens = tokens / n
	if es.FullTokens > 0 {
		es.TokenShare = es.MeanTokens / float64(es.FullTokens)
	}
	rep.Exposure = es
	slices.Sort(lat)
	rep.P50US = us(percentile(lat, 500))
	rep.P99US = us(percentile(lat, 990))
	return rep, nil
}

// filled counts the slots one of whose alternatives is among names.
func filled(slots [][]string, names []string) int {
	n := 0
	for _, alts := range slots {
		if slices.ContainsFunc(alts, func(a string) bool { return slices.Contains(names, a) }) {
			n++
		}
	}
	return n
}

// scoredQueries filters queries as [Run] does and leaves out those whose
// gold is not among tools, returning a report with the counts filled in.
func scoredQueries(tools []card.Card, queries []Query, opts *Options) (*Report, []*Query, error) {
	known := make(map[string]bool, len(tools))
	for _, t := range tools {
		known[t.Name] = true
	}
	rep := &Report{Tools: len(tools)}
	var scored []*Query
	chosen := chooseQueries(queries, opts.Filter, opts.Limit)
	selected := len(chosen)
	for _, q := range chosen {
		if missing := unknownSlots(q.Slots(), known); len(missing) > 0 {
			rep.Skipped = append(rep.Skipped, Skipped{ID: q.ID, Line: q.Line, Missing: missing})
			continue
		}
		scored = append(scored, q)
	}
	rep.UnknownGold = len(rep.Skipped)
	if selected == 0 {
		return nil, nil, fmt.Errorf("no queries to score (%d read, none passed the filter)", len(queries))
	}
	if len(scored) == 0 {
		return nil, nil, fmt.Errorf("no queries to score: all %d selected have gold names that are not among the %d tools (first: %s lacks %v)",
			selected, len(tools), rep.Skipped[0].ID, rep.Skipped[0].Missing)
	}
	return rep, scored, nil
}

// chooseQueries are the queries that pass filter (all when nil), the
// first limit of them when limit is positive.
func chooseQueries(queries []Query, filter func(*Query) bool, limit int) []*Query {
	var chosen []*Query
	for i := range queries {
		q := &queries[i]
		if filter != nil && !filter(q) {
			continue
		}
		if limit > 0 && len(chosen) == limit {
			break
		}
		chosen = append(chosen, q)
	}
	return chosen
}

// MinSlots returns a filter that keeps the queries with at least n gold
// slots and also pass f (nil passes every query): "Seal-Tools queries
// with 2+ gold tools" is MinSlots(nil, 2).
func MinSlots(f func(*Query) bool, n int) func(*Query) bool {
	return func(q *Query) bool {
		return len(q.Slots()) >= n && (f == nil || f(q))
	}
}

// writeExposure writes the exposure lines of a select or find report.
func (r *Report) writeExposure(w io.Writer) {
	e := r.Exposure
	if e == nil {
		return
	}
	fmt.Fprintf(w, "mode\t%s\n", r.Mode)
	fmt.Fprintf(w, "slot recall\t%.4f\n", e.SlotRecall)
	fmt.Fprintf(w, "all slots covered\t%.4f (%d of %d)\n", e.AllCovered, e.AllCoveredN, r.Queries)
	fmt.Fprintf(w, "left empty\t%d (%d with a ranker hit)\n", e.Empty, e.EmptyWithHit)
	fmt.Fprintf(w, "tools exposed\tmean %.2f, max %d\n", e.MeanExposed, e.MaxExposed)
	fmt.Fprintf(w, "tokens exposed\tmean %.0f of %d (%.2f%%; max %.2f%%)\n", e.MeanTokens, e.FullTokens, 100*e.TokenShare, 100*e.MaxTokenShare)
}
