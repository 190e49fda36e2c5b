package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const codingReply = "../../plan/testdata/replay/coding-release.json"

// planRunEnv is the environment of a plan-then-run test: a recorded
// model reply, and a session database and home of the test's own.
func planRunEnv(t *testing.T) (env map[string]string, dir string) {
	dir = t.TempDir()
	return map[string]string{
		"CAPBROKER_LLM": "replay", "CAPBROKER_LLM_REPLAY": codingReply,
		"CAPBROKER_DB": filepath.Join(dir, "capbroker.db"), "HOME": filepath.Join(dir, "home"),
		"CAPBROKER_INDEX": filepath.Join(dir, "index"),
	}, dir
}

type planSessionJSON struct {
	ID       string   `json:"id"`
	Task     string   `json:"task"`
	PlanTask string   `json:"plan_task"`
	PlanGoal string   `json:"plan_goal"`
	Exposed  []string `json:"exposed_tools"`
	Selected []string `json:"selected_tools"`
	Reason   string   `json:"reason"`
}

func decodeJSON[T any](t *testing.T, out string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	return v
}

// TestPlanThenRun is the flow end to end on the CLI: plan (a recorded
// reply) → assemble → session start from task t2 → the exposed set is the
// plan's capabilities plus the floor (and the hatch) → find adds one →
// resume gives the same set → the trace shows the plan records and the
// rest.
func TestPlanThenRun(t *testing.T) {
	env, dir := planRunEnv(t)
	tools := filepath.Join("..", "..", "session", "testdata", "tools.json")
	planFile := filepath.Join(dir, "plan.json")
	run := func(stdin string, args ...string) (string, string) {
		t.Helper()
		out, errOut, code := runIO(t, env, stdin, args...)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
		}
		return out, errOut
	}

	_, stderr := run("", "plan", "--tools", tools, "--out", planFile, "Fix the parser regression and ship the fix")
	if !strings.Contains(stderr, "wrote "+planFile+": 3 tasks, 0 warnings (model replay); plan id ") {
		t.Errorf("plan stderr: %s", stderr)
	}
	out, _ := run("", "assemble", "--tools", tools, "--json", planFile)
	a := decodeJSON[assembled](t, out)
	wantCaps := map[string][]string{
		"t1": {"plan:git_log", "plan:git_blame"},
		"t2": {"plan:run_tests", "plan:git_diff"},
		"t3": {"plan:github_create_pull_request", "plan:slack_post_message"},
	}
	if diff := cmp.Diff(wantCaps, capsOf(a)); diff != "" {
		t.Errorf("assembly (-want +got):\n%s", diff)
	}

	out, _ = run("", "session", "start", "--tools", tools, "--plan", planFile, "--plan-task", "t2", "--id", "fix-1", "--json")
	s := decodeJSON[planSessionJSON](t, out)
	floor := []string{"read_file", "write_file", "edit_file", "list_directory", "grep_files"}
	want := append([]string{"run_tests", "git_diff"}, floor...)
	if diff := cmp.Diff(want, s.Exposed); diff != "" {
		t.Errorf("exposed (-want +got):\n%s", diff)
	}
	if s.PlanTask != "t2" || s.PlanGoal != "Fix the parser regression and ship the fix" ||
		s.Task != "Fix the failing test in parser.go and check that the whole test suite passes." {
		t.Errorf("session = %+v", s)
	}
	out, _ = run("", "session", "start", "--tools", tools, "--plan", planFile, "--plan-task", "t2", "--id", "fix-txt")
	for _, w := range []string{"plan:    task t2 of \"Fix the parser regression", "run_tests        -      named", "named by the plan", "floor for coding"} {
		if !strings.Contains(out, w) {
			t.Errorf("session start output lacks %q:\n%s", w, out)
		}
	}

	out, _ = run("", "session", "find", "--tools", tools, "--json", "-k", "1", "fix-1", "who last changed each line of a file")
	found := decodeJSON[planSessionJSON](t, out)
	if diff := cmp.Diff(append(slices.Clone(want), "git_blame"), found.Exposed); diff != "" {
		t.Errorf("after find (-want +got):\n%s", diff)
	}
	out, _ = run("", "session", "resume", "--tools", tools, "--json", "fix-1")
	resumed := decodeJSON[planSessionJSON](t, out)
	if diff := cmp.Diff(found.Exposed, resumed.Exposed); diff != "" || resumed.PlanTask != "t2" {
		t.Errorf("resumed %+v (-found +resumed):\n%s", resumed, diff)
	}
	out, _ = run("", "session", "show", "fix-1")
	if !strings.Contains(out, `plan:    task t2 of "Fix the parser regression and ship the fix"`) {
		t.Errorf("session show:\n%s", out)
	}

	out, _ = run("", "trace", "--session", "fix-1", "--json")
	type rec struct {
		Kind   string          `json:"kind"`
		Reason string          `json:"capability_reason"`
		Detail json.RawMessage `json:"detail"`
	}
	recs := decodeJSON[[]rec](t, out)
	var kinds []string
	for _, r := range recs {
		kinds = append(kinds, r.Kind)
	}
	if diff := cmp.Diff([]string{"plan", "select", "find", "resume"}, kinds); diff != "" {
		t.Fatalf("trace kinds (-want +got):\n%s", diff)
	}
	var d struct {
		Goal  string
		Tasks []struct {
			ID              string
			Named, Inferred []string
		}
		Pins []struct{ Name, Digest string }
	}
	json.Unmarshal(recs[0].Detail, &d)
	if d.Goal != "Fix the parser regression and ship the fix" || len(d.Tasks) != 1 || d.Tasks[0].ID != "t2" ||
		!cmp.Equal(d.Tasks[0].Named, []string{"run_tests", "git_diff"}) || len(d.Pins) != 2 {
		t.Errorf("plan record detail: %s", recs[0].Detail)
	}
	out, _ = run("", "trace", "--session", "fix-1")
	if !strings.Contains(out, "started from task t2 of the plan") {
		t.Errorf("trace table:\n%s", out)
	}
	// plan and assemble recorded themselves too, outside any session.
	out, _ = run("", "trace", "--kind", "plan", "--json")
	var reasons []string
	for _, r := range decodeJSON[[]rec](t, out) {
		reasons = append(reasons, r.Reason)
	}
	if len(reasons) != 4 || !strings.Contains(reasons[0], "planned 3 tasks: 6 capabilities named by the plan") ||
		!strings.Contains(reasons[1], "assembled 3 tasks: 6 capabilities named by the plan, 0 inferred") {
		t.Errorf("plan records: %q", reasons)
	}
}

// TestPlanPinsChanged: a card the plan named that changed before the
// session starts is reported with what changed; one that is gone is
// dropped with a warning.
func TestPlanPinsChanged(t *testing.T) {
	env, dir := planRunEnv(t)
	orig, err := os.ReadFile(filepath.Join("..", "..", "session", "testdata", "tools.json"))
	if err != nil {
		t.Fatal(err)
	}
	tools := filepath.Join(dir, "tools.json")
	os.WriteFile(tools, orig, 0o644)
	planFile := filepath.Join(dir, "plan.json")
	if _, stderr, code := runIO(t, env, "", "plan", "--tools", tools, "--out", planFile, "ship"); code != 0 {
		t.Fatal(stderr)
	}
	changed := strings.Replace(string(orig), "Run the project's test suite", "Run the project's test suite and upload the results to a public dashboard", 1)
	var list []map[string]any
	json.Unmarshal([]byte(changed), &list)
	list = slices.DeleteFunc(list, func(m map[string]any) bool {
		f, _ := m["function"].(map[string]any)
		return f != nil && f["name"] == "git_diff" || m["name"] == "git_diff"
	})
	data, _ := json.Marshal(list)
	os.WriteFile(tools, data, 0o644)

	out, stderr, code := runIO(t, env, "", "session", "start", "--tools", tools, "--plan", planFile, "--plan-task", "t2", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, w := range []string{
		`warning: pins: "run_tests" changed since the plan was made (digest `,
		"  description:\n    - Run the project's test suite, or the tests matching a pattern",
		"    + Run the project's test suite and upload the results to a public dashboard, or the tests matching a pattern",
		`warning: pins: dropped "git_diff": it was in the catalog when the plan was made and is no longer (named by task t2)`,
	} {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, stderr)
		}
	}
	s := decodeJSON[planSessionJSON](t, out)
	if slices.Contains(s.Exposed, "git_diff") || s.Exposed[0] != "run_tests" {
		t.Errorf("exposed: %v", s.Exposed)
	}
	// assemble says the same.
	_, stderr, _ = runIO(t, env, "", "assemble", "--tools", tools, planFile)
	if !strings.Contains(stderr, `"run_tests" changed since the plan was made`) || !strings.Contains(stderr, `dropped "git_diff"`) {
		t.Errorf("assemble stderr:\n%s", stderr)
	}
}

// TestPlanCatalogFlags: --catalog still works, as a hidden alias of
// --tools that warns once however often it is given; --tools is the name.
func TestPlanCatalogFlags(t *testing.T) {
	tools := filepath.Join("..", "..", "session", "testdata", "tools.json")
	for _, cmd := range []string{"plan", "assemble"} {
		args := []string{"plan", "--prompt", "--catalog", tools, "--catalog", tools, "ship"}
		if cmd == "assemble" {
			args = []string{"assemble", "--catalog", tools, "--catalog", tools, "--json", "-"}
		}
		stdin := `{"goal":"g","tasks":[{"id":"t1","description":"blame the line","depends_on":[],"needs":[]}]}`
		out, stderr, code := runIO(t, nil, stdin, args...)
		warning := "warning: --catalog is deprecated; use --tools (capbroker " + cmd + ")"
		if code != 0 || strings.Count(stderr, warning) != 1 || strings.Count(stderr, "deprecated") != 1 {
			t.Errorf("%s --catalog twice: exit %d, want the warning %q once:\n%s%s", cmd, code, warning, out, stderr)
		}
		if cmd == "plan" && !strings.Contains(out, "git_blame: ") {
			t.Errorf("plan --catalog: the prompt lacks the catalog:\n%s", out)
		}
		for i, a := range args {
			if a == "--catalog" {
				args[i] = "--tools"
			}
		}
		out2, stderr, code := runIO(t, nil, stdin, args...)
		if code != 0 || strings.Contains(stderr, "deprecated") || out2 != out {
			t.Errorf("%s --tools: exit %d, same output %v\n%s", cmd, code, out2 == out, stderr)
		}
	}
}
