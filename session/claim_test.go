package session_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/capbroker/capbroker/llm"
	"github.com/capbroker/capbroker/plan"
	"github.com/capbroker/capbroker/policy"
	"github.com/capbroker/capbroker/session"
)

var update = flag.Bool("update", false, "rewrite the recorded planner replies of testdata/claim from tasks.json")

// claimTask is one task of testdata/claim/tasks.json: a task written to
// need particular capabilities of the test catalog, and the capabilities
// the planner's recorded reply names for it.
type claimTask struct {
	ID      string   `json:"id"`
	Task    string   `json:"task"`
	Planned []string `json:"planned"`
}

// TestPlanClaim shows the seed's claim on 24 tasks written to need
// different capabilities of the test catalog (9 of them two): planned by
// a model (recorded replies in testdata/claim/replies, one per task, keyed
// by the request as llm.Replay reads them), a session started from the
// plan's task exposes exactly the planned capabilities, first, plus the
// floor of the task's family. The ranker alone, selecting for the same
// task text with no plan, is reported beside it with its misses; it is
// not held to a figure.
//
// The replies were written by hand, as a person writes a reply for
// llm.Replay: no model can be reached here. "go test -run TestPlanClaim
// -update" rewrites them from tasks.json when the planner prompt changes.
func TestPlanClaim(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "claim", "tasks.json"))
	if err != nil {
		t.Fatal(err)
	}
	var tasks []claimTask
	if err := json.Unmarshal(data, &tasks); err != nil {
		t.Fatal(err)
	}
	if len(tasks) < 20 {
		t.Fatalf("%d tasks, want at least 20", len(tasks))
	}
	ctx := context.Background()
	sel := newSelector(t)
	cat := sel.Catalog()
	replies := filepath.Join("testdata", "claim", "replies")
	if *update {
		writeClaimReplies(t, tasks, replies, &plan.PromptOptions{Catalog: cat})
	}
	planner := plan.NewPlanner(&llm.Replay{Path: replies}, &plan.PromptOptions{Catalog: cat})
	mgr := session.NewManager(sel, nil, quiet)

	var (
		slots, planHit, rankHit     int
		planWhole, rankWhole, multi int
		rankExposed                 int
		report                      strings.Builder
	)
	fmt.Fprintf(&report, "%-14s %-45s %-45s %s\n", "TASK", "PLANNED (exposed with the plan)", "RANKER ALONE EXPOSES", "RANKER MISSES")
	for _, tk := range tasks {
		for _, n := range tk.Planned {
			if _, ok := cat.Lookup(n); !ok {
				t.Fatalf("%s: %q is not in the test catalog", tk.ID, n)
			}
		}
		if len(tk.Planned) > 1 {
			multi++
		}
		res, err := planner.Plan(ctx, tk.Task)
		if err != nil {
			t.Fatalf("%s: planning: %v", tk.ID, err)
		}
		if len(res.Warnings) > 0 || len(res.Plan.Tasks) != 1 {
			t.Fatalf("%s: plan %+v, warnings %v", tk.ID, res.Plan, res.Warnings)
		}
		s, _, err := mgr.StartFromPlan(ctx, res.Plan, res.Plan.Tasks[0].ID, nil)
		if err != nil {
			t.Fatalf("%s: %v", tk.ID, err)
		}
		exposed := s.Exposed()
		floor := policy.DefaultFloors[s.Selection().Family]
		var rest []string
		for _, n := range exposed[min(len(tk.Planned), len(exposed)):] {
			if !slices.Contains(floor, n) {
				rest = append(rest, n)
			}
		}
		if !slices.Equal(exposed[:min(len(tk.Planned), len(exposed))], tk.Planned) || len(rest) > 0 {
			t.Errorf("%s: with the plan, exposed %v; want the planned %v first, then only floor tools", tk.ID, exposed, tk.Planned)
		}

		alone, err := mgr.Start(ctx, tk.Task, nil)
		if err != nil {
			t.Fatal(err)
		}
		got := alone.Exposed()
		rankExposed += len(got)
		var misses []string
		for _, n := range tk.Planned {
			slots++
			if slices.Contains(exposed, n) {
				planHit++
			}
			if slices.Contains(got, n) {
				rankHit++
			} else {
				misses = append(misses, n)
			}
		}
		if len(misses) == 0 {
			rankWhole++
		}
		if !slices.ContainsFunc(tk.Planned, func(n string) bool { return !slices.Contains(exposed, n) }) {
			planWhole++
		}
		fmt.Fprintf(&report, "%-14s %-45s %-45s %s\n", tk.ID, strings.Join(tk.Planned, ","), firstN(got, 45), strings.Join(misses, ","))
	}
	fmt.Fprintf(&report, "\n%d tasks (%d needing two capabilities), %d capability slots\n", len(tasks), multi, slots)
	fmt.Fprintf(&report, "with the plan:  %d/%d slots exposed, %d/%d tasks with every capability\n", planHit, slots, planWhole, len(tasks))
	fmt.Fprintf(&report, "ranker alone:   %d/%d slots exposed, %d/%d tasks with every capability, %.1f tools exposed per task\n",
		rankHit, slots, rankWhole, len(tasks), float64(rankExposed)/float64(len(tasks)))
	t.Log("\n" + report.String())
	if planHit != slots {
		t.Errorf("with the plan, %d of %d planned capabilities were exposed", planHit, slots)
	}
}

func firstN(names []string, width int) string {
	s := strings.Join(names, ",")
	if len(s) > width {
		s = s[:width-1] + "…"
	}
	return s
}

// writeClaimReplies writes, for each task, the planner's reply: a plan
// of one task naming the planned capabilities, under the request's key.
func writeClaimReplies(t *testing.T, tasks []claimTask, dir string, opts *plan.PromptOptions) {
	t.Helper()
	os.RemoveAll(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tk := range tasks {
		pr, err := plan.BuildPrompt(context.Background(), tk.Task, opts)
		if err != nil {
			t.Fatal(err)
		}
		reply := &plan.Plan{Goal: tk.Task, Tasks: []plan.Task{{ID: "t1", Description: tk.Task,
			AgentSpec:    plan.AgentSpec{Name: strings.ReplaceAll(tk.ID, "-", "_") + "_agent", Description: "Carries out the task.", Instructions: "Do what the task says."},
			Instructions: "Report what was done.", Capabilities: tk.Planned}}}
		data, err := plan.Encode(reply)
		if err != nil {
			t.Fatal(err)
		}
		key := llm.Key(llm.Request{System: pr.System, User: pr.User, Schema: pr.Schema, SchemaName: pr.SchemaName})
		if err := os.WriteFile(filepath.Join(dir, key+".json"), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
