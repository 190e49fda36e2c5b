package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	capbroker "github.com/capbroker/capbroker"
	"github.com/capbroker/capbroker/httpapi"
	"github.com/capbroker/capbroker/internal/testenv"
	"github.com/capbroker/capbroker/llm"
	"github.com/capbroker/capbroker/session"
	"github.com/capbroker/capbroker/source/toolfile"
	"github.com/capbroker/capbroker/store"
)

// planServer serves the session tests' catalog with sessions and traces
// in st, planning with the recorded reply of plan/testdata/replay.
func planServer(t *testing.T, st store.Store, reply string) *httptest.Server {
	t.Helper()
	cards, errs := toolfile.LoadAll([]string{filepath.Join(testenv.Root(), "session", "testdata", "tools.json")})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	b, err := capbroker.New(context.Background(), &capbroker.Options{Cards: cards, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	mgr := session.NewManager(b.Selector(), st, &session.Options{Logger: quiet(), Ranker: b})
	s, err := httpapi.New(b, &httpapi.Options{Logger: quiet(), Sessions: mgr, Traces: st,
		Planner: &llm.Replay{Path: filepath.Join(testenv.Root(), "plan", "testdata", "replay", reply)}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	return ts
}

// TestPlanThenRunHTTP is the flow end to end over HTTP: POST /v1/plan (a
// recorded reply) → /v1/assemble → POST /v1/sessions from task t2 → the
// exposed set is the plan's capabilities plus the floor → find adds one →
// resume gives the same set → the session's trace shows the plan record
// and the rest, and /v1/plan and /v1/assemble recorded themselves.
func TestPlanThenRunHTTP(t *testing.T) {
	ts := planServer(t, newStore(t), "coding-release.json")
	req := func(method, path, body string, want int) []byte {
		t.Helper()
		status, out := do(t, ts, method, path, body, nil)
		if status != want {
			t.Fatalf("%s %s: status %d, want %d: %s", method, path, status, want, out)
		}
		return out
	}
	var planned struct {
		Plan     json.RawMessage `json:"plan"`
		Warnings []any           `json:"warnings"`
	}
	json.Unmarshal(req("POST", "/v1/plan", `{"goal":"Fix the parser regression and ship the fix"}`, 200), &planned)
	if len(planned.Warnings) != 0 || !strings.Contains(string(planned.Plan), `"pins"`) {
		t.Fatalf("plan: %s", planned.Plan)
	}
	var a struct {
		Tasks []struct {
			ID           string
			Capabilities []struct{ Name, Origin string }
		}
		Pins []struct{ Name, Digest string }
	}
	json.Unmarshal(req("POST", "/v1/assemble", `{"plan":`+string(planned.Plan)+`}`, 200), &a)
	if len(a.Tasks) != 3 || len(a.Tasks[1].Capabilities) != 2 || a.Tasks[1].Capabilities[0].Origin != "plan" || len(a.Pins) != 6 {
		t.Fatalf("assembly: %+v", a)
	}

	type view struct {
		session.View
		Warnings []any `json:"warnings"`
	}
	var s view
	json.Unmarshal(req("POST", "/v1/sessions", `{"plan":`+string(planned.Plan)+`,"plan_task":"t2","id":"fix-1"}`, 201), &s)
	want := []string{"run_tests", "git_diff", "read_file", "write_file", "edit_file", "list_directory", "grep_files"}
	if diff := cmp.Diff(want, s.ExposedTools); diff != "" {
		t.Errorf("exposed (-want +got):\n%s", diff)
	}
	if s.PlanTask != "t2" || s.PlanGoal != "Fix the parser regression and ship the fix" || !strings.HasPrefix(s.Task, "Fix the failing test in parser.go") ||
		s.Hatch != "find_capability" || len(s.Warnings) != 0 {
		t.Errorf("session: %+v", s)
	}
	var f view
	json.Unmarshal(req("POST", "/v1/sessions/fix-1/find", `{"query":"who last changed each line of a file","k":1}`, 200), &f)
	if diff := cmp.Diff(append(slices.Clone(want), "git_blame"), f.ExposedTools); diff != "" {
		t.Errorf("after find (-want +got):\n%s", diff)
	}
	var r view
	json.Unmarshal(req("POST", "/v1/sessions/fix-1/resume", "", 200), &r)
	if !slices.Equal(r.ExposedTools, f.ExposedTools) || r.PlanTask != "t2" {
		t.Errorf("resume: %+v", r)
	}

	var recs []struct {
		Kind   string          `json:"kind"`
		Reason string          `json:"capability_reason"`
		Detail json.RawMessage `json:"detail"`
	}
	json.Unmarshal(req("GET", "/v1/traces?session=fix-1", "", 200), &recs)
	var kinds []string
	for _, rec := range recs {
		kinds = append(kinds, rec.Kind)
	}
	if diff := cmp.Diff([]string{"plan", "select", "find", "resume"}, kinds); diff != "" {
		t.Fatalf("trace kinds (-want +got):\n%s", diff)
	}
	if !strings.Contains(recs[0].Reason, `started from task t2 of the plan "Fix the parser regression and ship the fix": 2 named by the plan, 0 inferred`) ||
		!strings.Contains(string(recs[0].Detail), `"named":["run_tests","git_diff"]`) {
		t.Errorf("plan record: %s %s", recs[0].Reason, recs[0].Detail)
	}
	json.Unmarshal(req("GET", "/v1/traces?kind=plan", "", 200), &recs)
	if len(recs) != 3 || !strings.Contains(recs[0].Reason, "planned 3 tasks") || !strings.Contains(recs[1].Reason, "assembled 3 tasks") {
		t.Errorf("plan records: %+v", recs)
	}

	// Bad requests say what is wrong.
	for body, msg := range map[string]string{
		`{"plan":` + string(planned.Plan) + `}`:                             `"plan" and "plan_task" go together`,
		`{"plan":` + string(planned.Plan) + `,"plan_task":"t9"}`:            `the plan has no task "t9"`,
		`{"task":"x","plan":` + string(planned.Plan) + `,"plan_task":"t1"}`: `"task" and "plan": give one`,
		`{"plan":{"goal":"g","tasks":[{"id":"t1"}]},"plan_task":"t1"}`:      `tasks[0]: missing field "description"`,
	} {
		var e struct{ Error struct{ Message string } }
		json.Unmarshal(req("POST", "/v1/sessions", body, 400), &e)
		if !strings.Contains(e.Error.Message, msg) {
			t.Errorf("%.80s: %q, want %q", body, e.Error.Message, msg)
		}
	}
}
