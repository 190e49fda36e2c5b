package eval

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// Report is the outcome of a run. Its JSON form is one object:
//
//	{"queries":N,"tools":M,"top1":…,"mrr":…,"recall":{"1":…,"5":…},
//	 "ndcg":{…},"comp":{…},"index_ms":…,"p50_us":…,"p99_us":…}
//
// plus "unknown_gold" when queries were left out for naming tools that are
// not in the catalog. The metrics are means over the scored queries.
type Report struct {
	// Queries is the number of queries scored.
	Queries int `json:"queries"`
	// Tools is the number of tools indexed.
	Tools int `json:"tools"`
	// Top1 is the share of queries whose first pick fills a gold slot.
	Top1 float64 `json:"top1"`
	// MRR is the mean reciprocal rank of the first pick that fills a
	// gold slot, within the largest cut-off.
	MRR float64 `json:"mrr"`
	// Recall, NDCG and Comp are the means of [Score]'s figures at each k.
	Recall AtK `json:"recall"`
	NDCG   AtK `json:"ndcg"`
	Comp   AtK `json:"comp"`
	// IndexMS is the time the BuildFunc took, plus one warm-up query (a
	// ranker may load tables on first use), in milliseconds.
	IndexMS float64 `json:"index_ms"`
	// P50US and P99US are the median and 99th percentile of the time one
	// Rank call took, in microseconds (nearest rank).
	P50US float64 `json:"p50_us"`
	P99US float64 `json:"p99_us"`
	// UnknownGold counts the queries left out because a gold slot names
	// no tool of the catalog.
	UnknownGold int `json:"unknown_gold,omitempty"`
	// Mode is what was scored: "rank" (omitted: the raw ranking),
	// "select" or "find" (see [RunExposure]).
	Mode string `json:"mode,omitempty"`
	// Exposure holds what select or find gave, in those modes.
	Exposure *ExposureScore `json:"exposure,omitempty"`

	// Ks are the cut-offs, in increasing order.
	Ks []int `json:"-"`
	// Results holds each scored query's outcome, in query order.
	Results []Result `json:"-"`
	// Skipped lists the queries left out for unknown gold.
	Skipped []Skipped `json:"-"`
}

// Result is the outcome of one query.
type Result struct {
	ID    string
	Query string
	// Slots are the gold slots; see [Query.Slots].
	Slots [][]string
	// Ranked are the names the ranker returned, best first, at most the
	// largest cut-off.
	Ranked []string
	Score
	// Latency is the time the Rank call took.
	Latency time.Duration
}

// Complete reports whether the first k ranked names fill every slot.
func (r *Result) Complete(k int) bool { return r.Comp[k] == 1 }

// Skipped is a query left out of the scores.
type Skipped struct {
	ID   string
	Line int
	// Missing lists the slots none of whose names is a tool of the
	// catalog, alternatives joined by "|".
	Missing []string
}

// WriteText writes the report as a small table.
func (r *Report) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	r.writeExposure(tw)
	fmt.Fprintf(tw, "queries\t%d\n", r.Queries)
	if r.UnknownGold > 0 {
		fmt.Fprintf(tw, "left out\t%d (gold not among the tools)\n", r.UnknownGold)
	}
	fmt.Fprintf(tw, "tools\t%d\n", r.Tools)
	fmt.Fprintf(tw, "top1\t%.4f\n", r.Top1)
	fmt.Fprintf(tw, "mrr\t%.4f\n", r.MRR)
	fmt.Fprintf(tw, "index\t%.1f ms\n", r.IndexMS)
	fmt.Fprintf(tw, "latency\tp50 %.1f µs, p99 %.1f µs\n", r.P50US, r.P99US)
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "k\trecall\tndcg\tcomp")
	for _, k := range r.ks() {
		fmt.Fprintf(tw, "%d\t%.4f\t%.4f\t%.4f\n", k, r.Recall[k], r.NDCG[k], r.Comp[k])
	}
	return tw.Flush()
}

// ks returns the cut-offs, also for a report read back from JSON.
func (r *Report) ks() []int {
	if len(r.Ks) > 0 {
		return r.Ks
	}
	return r.Recall.Keys()
}

// Misses returns the results whose first k names leave a gold slot
// unfilled, in query order.
func (r *Report) Misses(k int) []Result {
	var out []Result
	for _, res := range r.Results {
		if !res.Complete(k) {
			out = append(out, res)
		}
	}
	return out
}

// WriteMisses writes, for each query whose top k leaves a gold slot
// unfilled (at most limit queries; all when limit <= 0), the query, its gold
// slots with the unfilled ones marked, and the top k with the picks that
// fill a slot starred:
//
//	metatool-single-12  Can I find a recipe for dinner?
//	  gold:   RecipeTool  (missed)
//	  top 3:  1. FoodTool  2. CookBook  3. DietTool
func (r *Report) WriteMisses(w io.Writer, k, limit int) error {
	if _, ok := r.Comp[k]; !ok && len(r.Results) > 0 {
		return fmt.Errorf("no cut-off %d in this report (have %v)", k, r.ks())
	}
	misses := r.Misses(k)
	for i, res := range misses {
		if limit > 0 && i == limit {
			_, err := fmt.Fprintf(w, "... and %d more\n", len(misses)-limit)
			return err
		}
		top := res.Ranked[:min(k, len(res.Ranked))]
		var gold []string
		for _, alts := range res.Slots {
			g := joinAlts(alts)
			if !slices.ContainsFunc(alts, func(a string) bool { return slices.Contains(top, a) }) {
				g += "  (missed)"
			}
			gold = append(gold, g)
		}
		var picks []string
		for j, name := range top {
			mark := ""
			if slices.ContainsFunc(res.Slots, func(alts []string) bool { return slices.Contains(alts, name) }) {
				mark = "*"
			}
			picks = append(picks, fmt.Sprintf("%d. %s%s", j+1, name, mark))
		}
		if len(picks) == 0 {
			picks = []string{"(nothing)"}
		}
		if _, err := fmt.Fprintf(w, "%s  %s\n  gold:   %s\n  top %d:  %s\n", res.ID, oneLine(res.Query),
			strings.Join(gold, "; "), k, strings.Join(picks, "  ")); err != nil {
			return err
		}
	}
	return nil
}

func joinAlts(alts []string) string { return strings.Join(alts, "|") }

// oneLine folds a query onto one line and shortens it for display.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 160 {
		s = string(r[:157]) + "..."
	}
	return s
}

// WriteSkipped lists the queries left out for unknown gold, one a line:
// the id, the query file's line and the slots no tool fills.
func (r *Report) WriteSkipped(w io.Writer) error {
	for _, s := range r.Skipped {
		if _, err := fmt.Fprintf(w, "%s (line %d): no tool named %s\n", s.ID, s.Line, strings.Join(s.Missing, ", ")); err != nil {
			return err
		}
	}
	return nil
}
