package session_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/capbroker/capbroker/plan"
	"github.com/capbroker/capbroker/rank"
	"github.com/capbroker/capbroker/session"
	"github.com/capbroker/capbroker/store"
	"github.com/capbroker/capbroker/trace"
)

// TestStartFromPlan: a session started from a plan task exposes the
// plan's names first, inferred capabilities for a task the plan left
// empty, records the plan's goal and task, and opens its trace with a plan
// record before the select record; a resumed run keeps all of it.
func TestStartFromPlan(t *testing.T) {
	ctx := context.Background()
	st := newSQLite(t)
	mgr := session.NewManager(newSelector(t), st, quiet)
	p := &plan.Plan{Goal: "Ship the weekly report", Tasks: []plan.Task{
		{ID: "t1", Description: "Query the analytics database for last week's sign-ups.", Capabilities: []string{"postgres_query", "create_chart"}},
		{ID: "t2", Description: "Post the chart in the team's Slack channel."},
	}}
	s, a, err := mgr.StartFromPlan(ctx, p, "t1", &session.StartOptions{ID: "p1"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"postgres_query", "create_chart"}, s.Exposed()); diff != "" {
		t.Errorf("t1 exposed (-want +got):\n%s", diff)
	}
	for _, pick := range s.Selection().Tools {
		if pick.Reason != "named by the plan" {
			t.Errorf("pick %s: reason %q", pick.Name, pick.Reason)
		}
	}
	if goal, task := s.Plan(); goal != p.Goal || task != "t1" || s.Task() != p.Tasks[0].Description {
		t.Errorf("plan %q %q, task %q", goal, task, s.Task())
	}
	if len(a.Pins) != 2 || len(a.Warnings) != 0 {
		t.Errorf("assembly pins %v, warnings %v", a.Pins, a.Warnings)
	}

	// The plan left t2 empty: inference fills it, and says so.
	s2, _, err := mgr.StartFromPlan(ctx, p, "t2", &session.StartOptions{ID: "p2"})
	if err != nil {
		t.Fatal(err)
	}
	sel := s2.Selection()
	if len(sel.Tools) == 0 || sel.Tools[0].Name != "slack_post_message" || !strings.HasPrefix(sel.Tools[0].Reason, "ranked #1 for the task") {
		t.Errorf("t2 selection: %+v", sel.Tools)
	}

	recs, err := st.Traces(ctx, &store.TraceQuery{SessionID: "p1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || recs[0].Kind != trace.KindPlan || recs[1].Kind != trace.KindSelect {
		t.Fatalf("trace: %+v", recs)
	}
	var d session.PlanDetail
	if err := json.Unmarshal(recs[0].Detail, &d); err != nil {
		t.Fatal(err)
	}
	want := session.PlanDetail{Goal: p.Goal, Tasks: []session.PlanTaskDetail{{ID: "t1", Named: []string{"postgres_query", "create_chart"}}},
		Pins: []session.PinDetail{{Name: "postgres_query", Digest: a.Pins[0].Digest}, {Name: "create_chart", Digest: a.Pins[1].Digest}}}
	if diff := cmp.Diff(want, d); diff != "" {
		t.Errorf("plan record detail (-want +got):\n%s", diff)
	}
	recs, _ = st.Traces(ctx, &store.TraceQuery{SessionID: "p2"})
	if !strings.Contains(recs[0].CapabilityReason, "started from task t2 of the plan \"Ship the weekly report\": 0 named by the plan, 1 inferred") {
		t.Errorf("t2 plan record: %q", recs[0].CapabilityReason)
	}

	r, err := mgr.Resume(ctx, "p1")
	if err != nil {
		t.Fatal(err)
	}
	if goal, task := r.Plan(); goal != p.Goal || task != "t1" || !cmp.Equal(r.Exposed(), s.Exposed()) {
		t.Errorf("resumed: %q %q %v", goal, task, r.Exposed())
	}
	if v := session.NewView(r); v.PlanTask != "t1" || v.PlanGoal != p.Goal {
		t.Errorf("view: %+v", v)
	}

	if _, _, err := mgr.StartFromPlan(ctx, p, "t9", nil); err == nil || !strings.Contains(err.Error(), `no task "t9" (the plan has t1, t2)`) {
		t.Errorf("unknown task: %v", err)
	}
}

// TestStoredPlan: a plan recorded in the trace is found again by its id.
func TestStoredPlan(t *testing.T) {
	ctx := context.Background()
	st := newSQLite(t)
	p := &plan.Plan{Goal: "g", Tasks: []plan.Task{{ID: "t1", Description: "d", Capabilities: []string{"git_log"}}}}
	rec := session.PlanRecord("planned", p, nil, nil)
	rec.At = time.Now()
	if err := st.AppendTraces(ctx, rec); err != nil {
		t.Fatal(err)
	}
	got, err := session.StoredPlan(ctx, st, p.ID())
	if err != nil || got.ID() != p.ID() {
		t.Fatalf("stored plan %v: %v", got, err)
	}
	if _, err := session.StoredPlan(ctx, st, "000000000000"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown id: %v", err)
	}
}

// BenchmarkStartFromPlan measures starting an in-memory session from a
// plan task (assembly, pin check, selection), against a plain start.
func BenchmarkStartFromPlan(b *testing.B) {
	ctx := context.Background()
	sel := newSelector(b)
	o := *quiet
	o.Ranker = rank.New(sel.Catalog().Cards(), nil) // as the CLI and the HTTP API give it
	mgr := session.NewManager(sel, nil, &o)
	p := &plan.Plan{Goal: "Ship the weekly report", Tasks: []plan.Task{
		{ID: "t1", Description: "Query the analytics database for last week's sign-ups.", Capabilities: []string{"postgres_query", "create_chart"}},
		{ID: "t2", Description: "Post the chart in the team's Slack channel."},
	}}
	p.Pins = plan.PinsOf(p, sel.Catalog())
	mgr.Start(ctx, p.Tasks[0].Description, nil) // warm: token vocabulary, word tables
	mgr.StartFromPlan(ctx, p, "t2", nil)
	for _, tt := range []struct{ name, task string }{{"named", "t1"}, {"inferred", "t2"}} {
		b.Run(tt.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := mgr.StartFromPlan(ctx, p, tt.task, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("plain", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			mgr.Start(ctx, p.Tasks[0].Description, nil)
		}
	})
}
