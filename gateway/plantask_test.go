package gateway

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	capbroker "github.com/capbroker/capbroker"
	"github.com/capbroker/capbroker/policy"
)

// testPlans is a plan of named tasks, each naming its tools.
type testPlans map[string][]string

func (p testPlans) PlanSelection(_ context.Context, ref string, b *capbroker.Broker, family policy.Family) (*policy.Selection, error) {
	names, ok := p[ref]
	if !ok {
		return nil, fmt.Errorf("the plan has no task %q", ref)
	}
	var picks []policy.NamedPick
	for _, n := range names {
		picks = append(picks, policy.NamedPick{Name: n, Reason: "the plan names it"})
	}
	return b.Selector().SelectNamed(ref, picks, &policy.Options{Family: family}), nil
}

// TestPlanAwareSession: a session says which plan task it is on through
// find_capability's task; its list becomes that task's, the tools of the
// task before leave the list (and stay callable by name), and its finds
// rank the task's named tools first.
func TestPlanAwareSession(t *testing.T) {
	plans := testPlans{"write": {"beta__echo"}, "wait": {"alpha__sleep", "beta__sleep"}}
	g := startGateway(t, []ServerConfig{testServer("alpha"), testServer("beta")}, &Options{Mode: ModeSearch, Family: policy.General, PlanTasks: plans})
	cs := connect(t, serveHTTP(t, g, nil), nil, nil)
	var hatchSchema string
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err == nil && tool.Name == policy.HatchName {
			hatchSchema = fmt.Sprint(tool.InputSchema)
		}
	}
	if !strings.Contains(hatchSchema, "task") {
		t.Fatalf("find_capability's schema has no task: %s", hatchSchema)
	}

	text, isErr := callText(t, cs, policy.HatchName, map[string]any{"task": "write"})
	if isErr || !strings.Contains(text, "plan task write") {
		t.Fatalf("entering task write: isError=%v %q", isErr, text)
	}
	if got := withoutHatch(listNames(t, cs)); !slices.Equal(got, []string{"beta__echo"}) {
		t.Errorf("on task write, tools %v, want [beta__echo]", got)
	}
	// Its finds rank the task's named tool first, ahead of its twin.
	if found := findNames(t, cs, "echo the text back"); len(found) == 0 || found[0] != "beta__echo" {
		t.Errorf("find on task write: %v, want beta__echo first", found)
	}

	text, isErr = callText(t, cs, policy.HatchName, map[string]any{"task": "wait", "query": "sleep for a while"})
	if isErr || !strings.Contains(text, "plan task wait") || !strings.Contains(text, "alpha__sleep") {
		t.Fatalf("entering task wait with a query: isError=%v %q", isErr, text)
	}
	got := withoutHatch(listNames(t, cs))
	if slices.Contains(got, "beta__echo") || !slices.Contains(got, "alpha__sleep") || !slices.Contains(got, "beta__sleep") {
		t.Errorf("on task wait, tools %v, want the sleeps and not beta__echo", got)
	}
	if text, isErr := callText(t, cs, "beta__echo", map[string]any{"text": "still"}); isErr || text != "beta: still" {
		t.Errorf("the previous task's tool by name: isError=%v %q", isErr, text)
	}
	if text, isErr := callText(t, cs, policy.HatchName, map[string]any{"task": "nope"}); !isErr || !strings.Contains(text, `no task "nope"`) {
		t.Errorf("an unknown task: isError=%v %q", isErr, text)
	}
}
