package policy_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/policy"
)

func TestSelectNamed(t *testing.T) {
	floor := []string{"read_file", "write_file", "edit_file", "list_directory", "grep_files"}
	named := func(names ...string) []policy.NamedPick {
		out := make([]policy.NamedPick, len(names))
		for i, n := range names {
			out[i] = policy.NamedPick{Name: n, Reason: "named by the plan"}
		}
		return out
	}
	for _, tt := range []struct {
		name         string
		task         string
		names        []policy.NamedPick
		opts         *policy.Options
		want         []string // the picks, in order
		wantRejected []string // "name: reason prefix"
		wantReason   string
	}{
		{
			name: "named first, then the floor", task: "fix the failing tests in the parser code",
			names: named("run_tests", "git_commit"), want: append([]string{"run_tests", "git_commit"}, floor...),
			wantReason: "2 named before the run (run_tests, git_commit), plus the coding floor",
		},
		{
			name: "no floor for a general task", task: "plot the chart",
			names: named("plot_chart", "csv_query"), want: []string{"plot_chart", "csv_query"},
			wantReason: "2 named before the run (plot_chart, csv_query)",
		},
		{
			name: "a floor tool that is named is listed once, at its named place", task: "fix the parser code",
			names: named("grep_files", "run_tests"), want: []string{"grep_files", "run_tests", "read_file", "write_file", "edit_file", "list_directory"},
		},
		{
			name: "the bound keeps the floor's places", task: "fix the parser code", opts: &policy.Options{MaxSelected: 6},
			names: named("run_tests", "git_commit", "csv_query"), want: append([]string{"run_tests"}, floor...),
			wantRejected: []string{"git_commit: bound: at most 6 picks", "csv_query: bound: at most 6 picks"},
			wantReason:   "; 2 left out",
		},
		{
			name: "unknown, repeated and held names", task: "plot the chart",
			names: named("plot_chart", "no_such_tool", "plot_chart", "web_search"),
			opts:  &policy.Options{Allow: func(c *card.Card) bool { return c.Name != "web_search" }},
			want:  []string{"plot_chart"}, wantRejected: []string{"no_such_tool: not in catalog", "web_search: held"},
		},
		{
			name: "nothing named and no floor: the hatch alone", task: "plot the chart", names: nil, want: []string{},
			wantReason: "only find_capability is exposed",
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newSelector(t, testCards(), nil)
			sel := s.SelectNamed(tt.task, tt.names, tt.opts)
			if diff := cmp.Diff(tt.want, sel.Names()); diff != "" {
				t.Errorf("picks (-want +got):\n%s", diff)
			}
			var rejected []string
			for _, r := range sel.Rejected {
				rejected = append(rejected, r.Name+": "+r.Reason)
			}
			if len(rejected) != len(tt.wantRejected) {
				t.Errorf("rejected %q, want %q", rejected, tt.wantRejected)
			}
			for i := range min(len(rejected), len(tt.wantRejected)) {
				if !strings.HasPrefix(rejected[i], tt.wantRejected[i]) {
					t.Errorf("rejected[%d] = %q, want prefix %q", i, rejected[i], tt.wantRejected[i])
				}
			}
			if !strings.Contains(sel.Reason, tt.wantReason) {
				t.Errorf("reason %q lacks %q", sel.Reason, tt.wantReason)
			}
			for _, p := range sel.Tools {
				if p.Reason == "" || (p.Confidence != policy.Named && p.Confidence != policy.Floor) {
					t.Errorf("pick %+v", p)
				}
			}
			if sel.Hatch != policy.HatchName || sel.Tokens.Exposed <= 0 || sel.Degraded {
				t.Errorf("selection %+v", sel)
			}
		})
	}
}

// TestSelectNamedBudget: the token budget bounds named picks as it bounds
// ranked ones.
func TestSelectNamedBudget(t *testing.T) {
	s := newSelector(t, testCards(), nil)
	all := s.SelectNamed("plot the chart", []policy.NamedPick{{Name: "plot_chart"}, {Name: "csv_query"}}, nil)
	one := s.SelectNamed("plot the chart", []policy.NamedPick{{Name: "plot_chart"}}, nil)
	budget := one.Tokens.Exposed + (all.Tokens.Exposed-one.Tokens.Exposed)/2
	sel := s.SelectNamed("plot the chart", []policy.NamedPick{{Name: "plot_chart"}, {Name: "csv_query"}}, &policy.Options{TokenBudget: budget})
	if diff := cmp.Diff([]string{"plot_chart"}, sel.Names()); diff != "" || len(sel.Rejected) != 1 || !strings.HasPrefix(sel.Rejected[0].Reason, "token budget") {
		t.Errorf("budget %d: picks %v, rejected %+v", budget, sel.Names(), sel.Rejected)
	}
}

// BenchmarkSelectNamed measures exposing a plan task's capabilities,
// against Select ranking the same task, on the test catalog.
func BenchmarkSelectNamed(b *testing.B) {
	s := newSelector(b, testCards(), nil)
	names := []policy.NamedPick{{Name: "run_tests", Reason: "named by the plan"}, {Name: "git_commit", Reason: "named by the plan"}}
	const task = "fix the failing tests in the parser code"
	s.Select(b.Context(), task, nil) // warm: token vocabulary, word tables
	b.Run("named", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			s.SelectNamed(task, names, nil)
		}
	})
	b.Run("ranked", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			s.Select(b.Context(), task, nil)
		}
	})
}
