package eval

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/capbroker/capbroker/card"
)

var update = flag.Bool("update", false, "rewrite golden files")

// fixed is a test ranker that answers each query with a fixed list.
type fixed map[string][]string

func (f fixed) Rank(_ context.Context, query string, k int) ([]string, error) {
	r, ok := f[query]
	if !ok {
		return nil, errors.New("no answer for " + query)
	}
	return r, nil
}

func buildFixed(f fixed) BuildFunc {
	return func(context.Context, []card.Card) (Ranker, error) { return f, nil }
}

func tools(names ...string) []card.Card {
	cs := make([]card.Card, len(names))
	for i, n := range names {
		cs[i] = card.Card{Name: n, Kind: card.KindTool}
	}
	return cs
}

// smallBench is a worked example:
//
//	q1 gold a;        ranked [a b c]  top1 1, rr 1,   r@1 1,   r@3 1,  ndcg@1 1, ndcg@3 1,            comp@1 1, comp@3 1
//	q2 gold a, b;     ranked [c b a]  top1 0, rr 1/2, r@1 0,   r@3 1,  ndcg@1 0, ndcg@3 (d2+d3)/(1+d2), comp@1 0, comp@3 1
//	q3 gold c|d;      ranked [b a e]  top1 0, rr 0,   r@1 0,   r@3 0,  ndcg 0,                        comp 0
//	q4 gold zzz       left out: zzz is not a tool
//	q5 subset other   filtered out when filtering subset=main
//
// Means over q1-q3: top1 1/3; mrr (1+0.5+0)/3 = 0.5; recall@1 1/3,
// recall@3 2/3; ndcg@1 1/3, ndcg@3 (1 + 0.69343)/3 = 0.56448; comp@1 1/3,
// comp@3 2/3. ((d2+d3)/(1+d2) = 1.13093/1.63093 = 0.69343.)
var smallBench = struct {
	tools   []card.Card
	queries []Query
	ranker  fixed
}{
	tools: tools("a", "b", "c", "d", "e"),
	queries: []Query{
		{ID: "q1", Text: "one", Gold: []string{"a"}, Fields: map[string]string{"subset": "main"}},
		{ID: "q2", Text: "two", Gold: []string{"a", "b"}, Fields: map[string]string{"subset": "main"}},
		{ID: "q3", Text: "three", Gold: []string{"c"}, GoldGroups: [][]string{{"c", "d"}}, Fields: map[string]string{"subset": "main"}},
		{ID: "q4", Text: "four", Gold: []string{"zzz"}, Fields: map[string]string{"subset": "main"}},
		{ID: "q5", Text: "five", Gold: []string{"e"}, Fields: map[string]string{"subset": "other"}},
	},
	ranker: fixed{
		"one":   {"a", "b", "c"},
		"two":   {"c", "b", "a"},
		"three": {"b", "a", "e"},
		"five":  {"e"},
	},
}

func TestRunWorkedExample(t *testing.T) {
	filter, err := ParseFilter([]string{"subset=main"})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(context.Background(), buildFixed(smallBench.ranker), smallBench.tools, smallBench.queries,
		&Options{Ks: []int{3, 1}, Filter: filter})
	if err != nil {
		t.Fatal(err)
	}
	q2ndcg3 := (d2 + d3) / (1 + d2)
	want := &Report{
		Queries: 3, Tools: 5, Top1: 1.0 / 3, MRR: 0.5,
		Recall:      AtK{1: 1.0 / 3, 3: 2.0 / 3},
		NDCG:        AtK{1: 1.0 / 3, 3: (1 + q2ndcg3) / 3},
		Comp:        AtK{1: 1.0 / 3, 3: 2.0 / 3},
		UnknownGold: 1,
		Ks:          []int{1, 3},
		Skipped:     []Skipped{{ID: "q4", Missing: []string{"zzz"}}},
	}
	opts := cmp.Options{
		cmpopts.EquateApprox(0, 1e-12),
		cmpopts.IgnoreFields(Report{}, "IndexMS", "P50US", "P99US", "Results"),
	}
	if diff := cmp.Diff(want, rep, opts); diff != "" {
		t.Errorf("report (-want +got):\n%s", diff)
	}
	if got := (1 + q2ndcg3) / 3; math.Abs(got-0.56448) > 1e-5 {
		t.Errorf("worked ndcg@3 = %.5f, want 0.56448", got)
	}
	var ids []string
	for _, r := range rep.Results {
		ids = append(ids, r.ID)
		if r.Latency <= 0 {
			t.Errorf("%s: latency %v", r.ID, r.Latency)
		}
	}
	if diff := cmp.Diff([]string{"q1", "q2", "q3"}, ids); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	if rep.P50US <= 0 || rep.P99US < rep.P50US || rep.IndexMS < 0 {
		t.Errorf("timings: index %v ms, p50 %v µs, p99 %v µs", rep.IndexMS, rep.P50US, rep.P99US)
	}
}

func TestRunLimitAndDefaults(t *testing.T) {
	rep, err := Run(context.Background(), buildFixed(smallBench.ranker), smallBench.tools, smallBench.queries,
		&Options{Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Queries != 2 || rep.UnknownGold != 0 {
		t.Errorf("queries %d, unknown %d; want 2, 0", rep.Queries, rep.UnknownGold)
	}
	if diff := cmp.Diff([]int{1, 3, 5, 10}, rep.Recall.Keys()); diff != "" {
		t.Errorf("default ks (-want +got):\n%s", diff)
	}
	// q1 and q2 both fill every slot within 3: comp@10 is 1.
	if rep.Comp[10] != 1 || rep.Top1 != 0.5 {
		t.Errorf("comp@10 %v top1 %v; want 1, 0.5", rep.Comp[10], rep.Top1)
	}
}

func TestRunTruncatesToLargestK(t *testing.T) {
	r := fixed{"q": {"x", "y", "a"}}
	rep, err := Run(context.Background(), buildFixed(r), tools("a", "x", "y"),
		[]Query{{ID: "1", Text: "q", Gold: []string{"a"}}}, &Options{Ks: []int{2}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.MRR != 0 || rep.Recall[2] != 0 || len(rep.Results[0].Ranked) != 2 {
		t.Errorf("a hit beyond the largest k counted: mrr %v recall@2 %v ranked %v", rep.MRR, rep.Recall[2], rep.Results[0].Ranked)
	}
}

func TestRunErrors(t *testing.T) {
	ctx := context.Background()
	qs := []Query{{ID: "1", Text: "one", Gold: []string{"a"}}}
	tests := []struct {
		name    string
		build   BuildFunc
		tools   []card.Card
		queries []Query
		opts    *Options
		want    string
	}{
		{"bad k", buildFixed(fixed{"one": nil}), tools("a"), qs, &Options{Ks: []int{0, 5}}, "cut-off 0: want at least 1"},
		{"no tools", buildFixed(fixed{"one": nil}), nil, qs, nil, "no tools to rank"},
		{"filter matches nothing", buildFixed(fixed{}), tools("a"), qs,
			&Options{Filter: func(*Query) bool { return false }}, "no queries to score (1 read, none passed the filter)"},
		{"all gold unknown", buildFixed(fixed{}), tools("b"), qs, nil,
			"no queries to score: all 1 selected have gold names that are not among the 1 tools (first: 1 lacks [a])"},
		{"build fails", func(context.Context, []card.Card) (Ranker, error) { return nil, errors.New("boom") },
			tools("a"), qs, nil, "building the index: boom"},
		{"rank fails", buildFixed(fixed{}), tools("a"), qs, nil, "ranking query 1: no answer for one"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Run(ctx, tt.build, tt.tools, tt.queries, tt.opts)
			if err == nil || err.Error() != tt.want {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := Run(cctx, buildFixed(fixed{"one": {"a"}}), tools("a"), qs, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err = %v", err)
	}
}

// TestReportOutputs checks the JSON shape and the text renderings
// against golden files (timings fixed, as they vary).
func TestReportOutputs(t *testing.T) {
	rep, err := Run(context.Background(), buildFixed(smallBench.ranker), smallBench.tools, smallBench.queries,
		&Options{Ks: []int{1, 3, 10}})
	if err != nil {
		t.Fatal(err)
	}
	rep.IndexMS, rep.P50US, rep.P99US = 1.5, 12.25, 40
	var js bytes.Buffer
	if err := json.NewEncoder(&js).Encode(rep); err != nil {
		t.Fatal(err)
	}
	// The shape promised to `capbroker eval --json`, key order included.
	wantKeys := []string{`{"queries":`, `,"tools":`, `,"top1":`, `,"mrr":`, `,"recall":{"1":`, `,"ndcg":{"1":`, `,"comp":{"1":`,
		`,"index_ms":1.5`, `,"p50_us":12.25`, `,"p99_us":40`, `,"unknown_gold":1}`}
	rest := js.String()
	for _, k := range wantKeys {
		i := strings.Index(rest, k)
		if i < 0 {
			t.Fatalf("JSON %s: %q missing or out of order", js.String(), k)
		}
		rest = rest[i+len(k):]
	}
	var back Report
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(rep.NDCG, back.NDCG); diff != "" {
		t.Errorf("JSON round trip (-want +got):\n%s", diff)
	}

	var text bytes.Buffer
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	text.WriteString("--- misses at 1\n")
	if err := rep.WriteMisses(&text, 1, 0); err != nil {
		t.Fatal(err)
	}
	text.WriteString("--- misses at 3, at most 1\n")
	if err := rep.WriteMisses(&text, 3, 1); err != nil {
		t.Fatal(err)
	}
	text.WriteString("--- skipped\n")
	if err := rep.WriteSkipped(&text); err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteMisses(&text, 4, 0); err == nil {
		t.Error("misses at a k not in the report: no error")
	}
	golden(t, "report.golden", js.String()+text.String())
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./eval -update)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s (-want +got):\n%s", path, diff)
	}
}
