package plan

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/llm"
	"github.com/capbroker/capbroker/rank"
	"github.com/google/go-cmp/cmp"
)

// wantCaps are the capabilities each of fourTasks needs.
var wantCaps = map[string][]string{
	"t1": {"summarization"},
	"t2": {"brainstorming"},
	"t3": {"structured_extraction"},
	"t4": {"data_analysis", "code_generation"},
}

// score counts the tasks whose capabilities are exactly the wanted set
// (in any order) and all came from origin.
func score(t *testing.T, a *Assembly, origin string) int {
	t.Helper()
	exact := 0
	for _, at := range a.Tasks {
		got := map[string]bool{}
		for _, c := range at.Capabilities {
			got[c.Name] = true
			if c.Origin != origin {
				t.Errorf("task %s: %s has origin %q, want %q", at.ID, c.Name, c.Origin, origin)
			}
		}
		want := map[string]bool{}
		for _, n := range wantCaps[at.ID] {
			want[n] = true
		}
		if cmp.Equal(want, got) {
			exact++
		} else {
			t.Errorf("task %s: capabilities %v, want exactly %v (%+v)", at.ID, at.Names(), wantCaps[at.ID], at.Capabilities)
		}
	}
	return exact
}

// TestClaimPlanned: the planner sees the registry, a replayed model reply
// names the capabilities, and assembly selects exactly those.
func TestClaimPlanned(t *testing.T) {
	ctx := context.Background()
	cat := builtinCatalog(t)
	planner := NewPlanner(&llm.Replay{Path: "testdata/replay/four-tasks.json"}, &PromptOptions{Catalog: cat})
	res, err := planner.Plan(ctx, testGoal)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Warnings) != 0 {
		t.Errorf("warnings: %v", res.Warnings)
	}
	if !strings.Contains(res.Prompt.User, "Capabilities available") {
		t.Error("the planner was not shown the registry")
	}
	a := Assemble(ctx, res.Plan, cat, nil)
	if got := score(t, a, OriginPlan); got != 4 {
		t.Errorf("planned: %d of 4 tasks exact", got)
	}
	t.Logf("planned: %d of 4 tasks got exactly their capabilities", score(t, a, OriginPlan))
	for _, at := range a.Tasks {
		for _, c := range at.Capabilities {
			if c.Reason != "named by the plan" {
				t.Errorf("%s/%s: reason %q", at.ID, c.Name, c.Reason)
			}
		}
	}
}

// TestClaimRankerAlone: with no capabilities in the plan, inference from
// the same task descriptions finds the same sets.
func TestClaimRankerAlone(t *testing.T) {
	a := Assemble(context.Background(), &Plan{Goal: testGoal, Tasks: fourTasks()}, builtinCatalog(t), nil)
	got := score(t, a, OriginInferred)
	if got != 4 {
		t.Errorf("ranker alone: %d of 4 tasks exact", got)
	}
	t.Logf("ranker alone: %d of 4 tasks got exactly their capabilities", got)
	for _, at := range a.Tasks {
		for _, c := range at.Capabilities {
			if !strings.HasPrefix(c.Reason, "ranked #") || !strings.Contains(c.Reason, "matched ") {
				t.Errorf("%s/%s: reason %q does not explain the match", at.ID, c.Name, c.Reason)
			}
			t.Logf("%s %s: %s", at.ID, c.Name, c.Reason)
		}
	}
}

// TestClaimUnknownDropped: an unknown name in the reply is dropped with a
// warning naming the task; the rest of the plan stands.
func TestClaimUnknownDropped(t *testing.T) {
	ctx := context.Background()
	cat := builtinCatalog(t)
	res, err := NewPlanner(&llm.Replay{Path: "testdata/replay/four-tasks-unknown.json"}, &PromptOptions{Catalog: cat}).Plan(ctx, testGoal)
	if err != nil {
		t.Fatal(err)
	}
	want := []Warning{{Task: "t1", Field: "capabilities", Message: `dropped unknown capability "sentiment_analysis" (not in the catalog)`}}
	if diff := cmp.Diff(want, res.Warnings); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	if got := score(t, Assemble(ctx, res.Plan, cat, nil), OriginPlan); got != 4 {
		t.Errorf("after dropping: %d of 4 tasks exact", got)
	}
}

func TestAssemble(t *testing.T) {
	ctx := context.Background()
	cat := builtinCatalog(t)
	summarize := Task{ID: "s", Description: "Summarize the meeting transcript into key points.", DependsOn: []string{}, Needs: []Need{}}
	withCaps := func(tk Task, caps ...string) Task { tk.Capabilities = caps; return tk }
	tests := []struct {
		name string
		task Task
		opts *AssembleOptions
		want []Capability
	}{
		{
			name: "plan names enough: no inference",
			task: withCaps(summarize, "web_search"),
			want: []Capability{{Name: "web_search", Origin: OriginPlan, Reason: "named by the plan"}},
		},
		{
			name: "plan names none: inferred",
			task: summarize,
			want: []Capability{{Name: "summarization", Origin: OriginInferred,
				Reason: `ranked #1 for the task (100% of the best score): matched "summarize" in name, "transcript" in description, "key" in description, "points" in description, "summary" in description`}},
		},
		{
			name: "plan names fewer than the minimum: gap filled after the plan's",
			task: withCaps(summarize, "web_search"),
			opts: &AssembleOptions{MinCapabilities: 2},
			want: []Capability{
				{Name: "web_search", Origin: OriginPlan, Reason: "named by the plan"},
				{Name: "summarization", Origin: OriginInferred,
					Reason: `ranked #1 for the task (100% of the best score): matched "summarize" in name, "transcript" in description, "key" in description, "points" in description, "summary" in description`},
			},
		},
		{
			name: "a named capability is not inferred twice",
			task: withCaps(summarize, "summarization"),
			opts: &AssembleOptions{MinCapabilities: 2},
			want: []Capability{
				{Name: "summarization", Origin: OriginPlan, Reason: "named by the plan"},
				{Name: "brainstorming", Origin: OriginInferred, Reason: `weak match added to reach the minimum of 2: matched "points" in description`},
			},
		},
		{
			name: "inference off",
			task: summarize,
			opts: &AssembleOptions{MinCapabilities: -1},
			want: []Capability{},
		},
		{
			name: "nothing matches",
			task: Task{ID: "x", Description: "Zzyzx qwop", DependsOn: []string{}, Needs: []Need{}},
			want: []Capability{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := Assemble(ctx, &Plan{Goal: "g", Tasks: []Task{tt.task}}, cat, tt.opts)
			if diff := cmp.Diff(tt.want, a.Tasks[0].Capabilities); diff != "" {
				t.Errorf("capabilities (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAssembleMinimumReachedByWeakMatches(t *testing.T) {
	a := Assemble(context.Background(), &Plan{Goal: "g", Tasks: []Task{{ID: "s", Description: "Summarize the web pages about the data."}}},
		builtinCatalog(t), &AssembleOptions{MinCapabilities: 3, MaxInferred: 1})
	caps := a.Tasks[0].Capabilities
	if len(caps) != 3 {
		t.Fatalf("got %+v, want 3 capabilities", caps)
	}
	if !strings.HasPrefix(caps[0].Reason, "ranked #1") {
		t.Errorf("first: %q", caps[0].Reason)
	}
	for _, c := range caps[1:] {
		if !strings.HasPrefix(c.Reason, "weak match added to reach the minimum of 3") {
			t.Errorf("%s: %q", c.Name, c.Reason)
		}
	}
}

func TestAssembleIrreversibleNeedsStrongerEvidence(t *testing.T) {
	tk := Task{ID: "t", Description: "Get rid of old customer records."}
	for _, tt := range []struct {
		risk card.Risk
		want []string
	}{
		// purge_records scores 0.47 of archive_records: enough for a write
		// card at MinRelative 0.4, not for an irreversible one (0.8).
		{card.RiskWrite, []string{"archive_records", "purge_records"}},
		{card.RiskIrreversible, []string{"archive_records"}},
	} {
		cards := append(Builtin(),
			card.Card{Name: "archive_records", Kind: card.KindTool, Risk: card.RiskWrite, Description: "Move old customer records from the live database to cold storage."},
			card.Card{Name: "purge_records", Kind: card.KindTool, Risk: tt.risk, Description: "Remove customer records permanently."})
		cat, _ := card.NewCatalog(cards)
		got := Assemble(context.Background(), &Plan{Goal: "g", Tasks: []Task{tk}}, cat, &AssembleOptions{MinRelative: 0.4}).Tasks[0].Names()
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("purge_records %s (-want +got):\n%s", tt.risk, diff)
		}
	}
}

type failingRanker struct{ panic bool }

func (f failingRanker) Rank(context.Context, string, int) ([]rank.Hit, error) {
	if f.panic {
		panic("index corrupt")
	}
	return nil, errors.New("embedding server down")
}

func TestAssembleRankerFailureDegrades(t *testing.T) {
	for _, r := range []failingRanker{{}, {panic: true}} {
		p := &Plan{Goal: "g", Tasks: []Task{{ID: "a", Description: "Summarize it.", Capabilities: []string{"web_search"}}, {ID: "b", Description: "Summarize it."}}}
		a := Assemble(context.Background(), p, builtinCatalog(t), &AssembleOptions{MinCapabilities: 2, Ranker: r})
		if diff := cmp.Diff([]string{"web_search"}, a.Tasks[0].Names()); diff != "" {
			t.Error(diff)
		}
		if len(a.Tasks[1].Capabilities) != 0 {
			t.Errorf("b: %v", a.Tasks[1].Names())
		}
		if len(a.Warnings) != 2 || a.Warnings[0].Field != "inference" || !strings.Contains(a.Warnings[0].Message, "ranking failed, kept only what the plan names") {
			t.Errorf("warnings: %v", a.Warnings)
		}
	}
}

func TestAssembleCarriesValidation(t *testing.T) {
	p := &Plan{Goal: "g", Tasks: []Task{{ID: "a", Description: "Summarize the report.", Capabilities: []string{"summarise"}, DependsOn: []string{"a"}}}}
	a := Assemble(context.Background(), p, builtinCatalog(t), nil)
	want := []Warning{
		{Task: "a", Field: "capabilities", Message: `dropped unknown capability "summarise" (not in the catalog)`},
		{Task: "a", Field: "depends_on", Message: `dropped "a": a task cannot depend on itself`},
	}
	if diff := cmp.Diff(want, a.Warnings); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	// The dropped plan name leaves a gap that inference fills, best
	// first.
	if names := a.Tasks[0].Names(); len(names) == 0 || names[0] != "summarization" {
		t.Errorf("inferred %v, want summarization first", names)
	}
	for _, c := range a.Tasks[0].Capabilities {
		if c.Origin != OriginInferred {
			t.Errorf("%s: origin %q, want %q", c.Name, c.Origin, OriginInferred)
		}
	}
}

func TestAssembleDeterministic(t *testing.T) {
	cat := bigCatalog(t, 300)
	p := &Plan{Goal: "g", Tasks: fourTasks()}
	first := Assemble(context.Background(), p, cat, &AssembleOptions{MaxInferred: 5, MinRelative: 0.2})
	for range 5 {
		again := Assemble(context.Background(), p, cat, &AssembleOptions{MaxInferred: 5, MinRelative: 0.2})
		if diff := cmp.Diff(first, again); diff != "" {
			t.Fatalf("assembly changed:\n%s", diff)
		}
	}
}

func TestPlannerBadReply(t *testing.T) {
	dir := t.TempDir()
	reply := `{"goal": "g", "tasks": [{"id": "t1", "description": 42}]}`
	path := dir + "/reply.json"
	if err := os.WriteFile(path, []byte(reply), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := NewPlanner(&llm.Replay{Path: path}, nil).Plan(context.Background(), "g")
	var pe *ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v, want a *ParseError", err)
	}
	if string(pe.Raw) != reply || res == nil || res.Reply.Text != reply {
		t.Errorf("raw reply not kept: %q", pe.Raw)
	}
	if want := "planning: the model's reply is not a valid plan: line 1, column 53: tasks[0].description: want a string, got a number"; err.Error() != want {
		t.Errorf("err = %q\nwant %q", err, want)
	}
}

func TestPlannerProviderError(t *testing.T) {
	_, err := NewPlanner(&llm.Replay{Path: t.TempDir()}, nil).Plan(context.Background(), "g")
	if !errors.Is(err, llm.ErrNoReply) {
		t.Errorf("err = %v, want ErrNoReply", err)
	}
}

func TestPlannerFillsEmptyGoal(t *testing.T) {
	path := t.TempDir() + "/reply.json"
	os.WriteFile(path, []byte(`{"goal":"","tasks":[{"id":"t1","description":"d","agent_spec":{"name":"","description":"","instructions":""},"instructions":"","depends_on":[],"needs":[]}]}`), 0o644)
	res, err := NewPlanner(&llm.Replay{Path: path}, nil).Plan(context.Background(), "  Ship it ")
	if err != nil {
		t.Fatal(err)
	}
	if res.Plan.Goal != "Ship it" {
		t.Errorf("goal %q", res.Plan.Goal)
	}
}

func BenchmarkAssemble(b *testing.B) {
	cat := bigCatalog(b, 2000)
	ix := rank.New(cat.Cards(), nil)
	p := &Plan{Goal: "g", Tasks: fourTasks()}
	for b.Loop() {
		Assemble(context.Background(), p, cat, &AssembleOptions{Ranker: ix})
	}
}

// TestAssemblePerStep: a compound task gets one capability per step, not
// only its main step's.
func TestAssemblePerStep(t *testing.T) {
	cat := builtinCatalog(t)
	for _, tt := range []struct {
		desc string
		want []string
	}{
		{"Compute churn statistics and trends from the renewal table and write a Python script that charts them",
			[]string{"data_analysis", "code_generation"}},
		{"Search the web for reviews of the new phone, then translate the best one into French",
			[]string{"web_search", "translation"}},
		// One step: as before, the best hits of the whole task.
		{"Summarize the meeting transcript into key points.", []string{"summarization"}},
	} {
		a := Assemble(context.Background(), &Plan{Goal: "g", Tasks: []Task{{ID: "t", Description: tt.desc}}}, cat, nil)
		got := a.Tasks[0].Names()
		for _, w := range tt.want {
			if !slices.Contains(got, w) {
				t.Errorf("%q: capabilities %v, want %s among them", tt.desc, got, w)
			}
		}
		for _, c := range a.Tasks[0].Capabilities {
			if c.Origin != OriginInferred || c.Reason == "" {
				t.Errorf("%q: %+v", tt.desc, c)
			}
		}
	}
}
