package learn

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/eval"
	"github.com/capbroker/capbroker/rank"
	"github.com/capbroker/capbroker/trace"
)

// PastSessions turns benchmark queries into the trace records of past
// sessions: each query is a session (its ID "past-" and the query's ID)
// that selected for the query's text and then called, for each gold slot,
// the first of its tools the catalog knows. The sessions are a second
// apart, the last ending at end.
func PastSessions(past []eval.Query, known map[string]bool, end time.Time) []trace.Record {
	var recs []trace.Record
	for i := range past {
		q := &past[i]
		at := end.Add(-time.Duration(len(past)-i) * time.Second)
		id := "past-" + q.ID
		recs = append(recs, trace.Record{SessionID: id, Kind: trace.KindSelect, At: at, Task: q.Text})
		for _, slot := range q.Slots() {
			for _, tool := range slot {
				if known[tool] {
					recs = append(recs, trace.Record{SessionID: id, Kind: trace.KindCall, At: at, Tool: tool, Detail: ranDetail})
					break
				}
			}
		}
	}
	return recs
}

// ranDetail marks a replayed call as one that ran and returned without
// error, as the gateway records it.
var ranDetail = json.RawMessage(`{"outcome":"` + Ran + `"}`)

// SplitReport is the outcome of a time-split evaluation ([EvalSplit]).
type SplitReport struct {
	// Fraction is the share of the queries taken as the past.
	Fraction float64 `json:"fraction"`
	// Past is the number of queries replayed as past sessions, Learnt
	// the number of cards that learnt something from them.
	Past   int `json:"past"`
	Learnt int `json:"learnt"`
	// Without and With are the rest of the queries ranked without and
	// with what was learnt.
	Without *eval.Report `json:"without"`
	With    *eval.Report `json:"with"`
}

// EvalSplit measures learning from use honestly: the first share frac of
// the queries (those opts.Filter and opts.Limit keep, in file order) is
// the past — each becomes a session that asked for the query and called
// its gold tools ([PastSessions]) — and what [FromTraces] learns from
// those sessions is given to the ranker build returns for the rest, which
// is ranked with it and without it (build(nil)). Only the rest is scored.
// learnOpts tunes the learning (nil: the defaults, aged against the
// last past session).
func EvalSplit(ctx context.Context, build func(rank.Usage) eval.BuildFunc, tools []card.Card, queries []eval.Query, frac float64, opts *eval.Options, learnOpts *Options) (*SplitReport, error) {
	if !(frac > 0 && frac < 1) {
		return nil, fmt.Errorf("time split %v: want a share of the queries strictly between 0 and 1", frac)
	}
	var o eval.Options
	if opts != nil {
		o = *opts
	}
	var kept []eval.Query
	for i := range queries {
		if o.Filter != nil && !o.Filter(&queries[i]) {
			continue
		}
		if o.Limit > 0 && len(kept) == o.Limit {
			break
		}
		kept = append(kept, queries[i])
	}
	cut := int(float64(len(kept)) * frac)
	if cut == 0 || cut == len(kept) {
		return nil, fmt.Errorf("time split %v of %d queries leaves no past or nothing to test", frac, len(kept))
	}
	past, test := kept[:cut], kept[cut:]
	known := make(map[string]bool, len(tools))
	for i := range tools {
		known[tools[i].Name] = true
	}
	end := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	lo := Options{Now: end}
	if learnOpts != nil {
		lo = *learnOpts
		if lo.Now.IsZero() {
			lo.Now = end
		}
	}
	usage := FromTraces(PastSessions(past, known, end), tools, &lo)
	o.Filter, o.Limit = nil, 0
	without, err := eval.Run(ctx, build(nil), tools, test, &o)
	if err != nil {
		return nil, fmt.Errorf("time split, without learning: %w", err)
	}
	with, err := eval.Run(ctx, build(usage), tools, test, &o)
	if err != nil {
		return nil, fmt.Errorf("time split, with learning: %w", err)
	}
	return &SplitReport{Fraction: frac, Past: len(past), Learnt: len(usage), Without: without, With: with}, nil
}

// WriteText writes the report as a table: each figure of the rest of the
// queries without and with learning, and the gain.
func (r *SplitReport) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "past\t%d queries replayed as sessions (the first %.0f%%); %d cards learnt from them\n", r.Past, 100*r.Fraction, r.Learnt)
	fmt.Fprintf(tw, "test\t%d queries (the rest)\n", r.Without.Queries)
	if r.Without.UnknownGold > 0 {
		fmt.Fprintf(tw, "left out\t%d (gold not among the tools)\n", r.Without.UnknownGold)
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "\twithout\twith\tgain")
	row := func(name string, a, b float64) {
		fmt.Fprintf(tw, "%s\t%.4f\t%.4f\t%+.4f\n", name, a, b, b-a)
	}
	row("top1", r.Without.Top1, r.With.Top1)
	row("mrr", r.Without.MRR, r.With.MRR)
	for _, k := range r.Without.Ks {
		row(fmt.Sprintf("recall@%d", k), r.Without.Recall[k], r.With.Recall[k])
	}
	for _, k := range r.Without.Ks {
		row(fmt.Sprintf("ndcg@%d", k), r.Without.NDCG[k], r.With.NDCG[k])
	}
	fmt.Fprintf(tw, "latency p50\t%.1f µs\t%.1f µs\n", r.Without.P50US, r.With.P50US)
	return tw.Flush()
}
