package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/httpapi"
	"github.com/capbroker/capbroker/route"
	"github.com/capbroker/capbroker/source"
)

// testRouter routes over the plugins of testdata/plugins, found by
// capbroker's discovery as `capbroker serve --root` finds them.
func testRouter(t testing.TB) *route.Cache {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("testdata", "plugins"))
	if err != nil {
		t.Fatal(err)
	}
	scan := func(ctx context.Context) ([]card.Card, error) {
		res, err := source.Discover(ctx, &source.Options{Roots: []source.Root{{Path: root}}})
		if err != nil {
			return nil, err
		}
		return res.Cards, nil
	}
	return route.NewCache(route.New(nil, nil), scan, nil)
}

// strict decodes body into v, refusing fields v does not have: the
// response is exactly the Go type the CLI prints.
func strict(t *testing.T, body []byte, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("decoding %T: %v in %s", v, err, body)
	}
}

func TestRoute(t *testing.T) {
	st := newStore(t)
	python := t.TempDir()
	ts := newTestServer(t, &httpapi.Options{Router: testRouter(t), Traces: st, RouteRoots: []string{python}})
	os.WriteFile(filepath.Join(python, "requirements.txt"), []byte("flask\n"), 0o644)

	for _, tt := range []struct {
		name, body        string
		capability, agent string
		dflt              bool
		projectMatched    bool
	}{
		{"phase", `{"phase":"VERIFY"}`, "code-review", "review:code-reviewer", false, false},
		{"phase lower case", `{"phase":"verify"}`, "code-review", "review:code-reviewer", false, false},
		{"task", `{"task":"write unit tests first with tdd"}`, "tdd-implementation", "tdd:tdd-orchestrator", false, false},
		{"capability", `{"capability":"infrastructure","task":"deploy it"}`, "infrastructure", "cloud:deployer", false, false},
		{"project folder", `{"phase":"EXECUTE","task":"add the CSV export","project":"` + python + `"}`, "code-implementation", "python-development:python-pro", false, true},
		{"project types", `{"phase":"EXECUTE","project_types":["dotnet"]}`, "code-implementation", "csharp:csharp-pro", false, true},
		{"no plugin matches", `{"capability":"requirements-gathering"}`, "requirements-gathering", "defaults/interviewer", true, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			status, body := do(t, ts, "POST", "/v1/route", tt.body, nil)
			if status != 200 {
				t.Fatalf("status %d: %s", status, body)
			}
			var d route.Decision
			strict(t, body, &d)
			if d.Capability != tt.capability || d.Agent != tt.agent || d.Default != tt.dflt || d.Project.Matched != tt.projectMatched {
				t.Errorf("decision %s → %s (default %v, project matched %v), want %s → %s (%v, %v)",
					d.Capability, d.Agent, d.Default, d.Project.Matched, tt.capability, tt.agent, tt.dflt, tt.projectMatched)
			}
			if d.Announcement == "" || d.Line == "" || len(d.Reasons) == 0 {
				t.Errorf("decision without announcement, line or reasons: %s", body)
			}
		})
	}

	// Each decision was recorded in the trace, outside any session.
	status, body := do(t, ts, "GET", "/v1/traces?kind=route", "", nil)
	var recs []struct {
		Kind   string          `json:"kind"`
		Detail json.RawMessage `json:"detail"`
	}
	if status != 200 || json.Unmarshal(body, &recs) != nil || len(recs) != 7 || recs[6].Kind != "route" {
		t.Fatalf("route traces: %d %.300s", status, body)
	}
	var d route.Decision
	if err := json.Unmarshal(recs[0].Detail, &d); err != nil || d.Agent != "review:code-reviewer" {
		t.Errorf("first route record's detail: %v %s", err, recs[0].Detail)
	}
}

func TestRouteErrors(t *testing.T) {
	ts := newTestServer(t, &httpapi.Options{Router: testRouter(t)})
	for _, tt := range []struct {
		name, method, path, body string
		status                   int
		code, msg                string
	}{
		{"bad json", "POST", "/v1/route", `{"task":`, 400, "invalid", "bad JSON"},
		{"unknown field", "POST", "/v1/route", `{"task":"x","agent":"y"}`, 400, "invalid", `unknown field "agent"`},
		{"wrong type", "POST", "/v1/route", `{"project_types":"python","task":"x"}`, 400, "invalid", `"project_types"`},
		{"nothing to route", "POST", "/v1/route", `{"project_types":["python"]}`, 400, "invalid", `one of "task", "phase" or "capability"`},
		{"unknown phase", "POST", "/v1/route", `{"phase":"SHIP"}`, 400, "invalid", `unknown phase (known: DISCUSS, PLAN, EXECUTE, VERIFY)`},
		{"unknown capability", "POST", "/v1/route", `{"capability":"magic"}`, 400, "invalid", "unknown capability"},
		{"unknown project type", "POST", "/v1/route", `{"phase":"PLAN","project_types":["cobol"]}`, 400, "invalid", `unknown project type "cobol"`},
		{"relative project", "POST", "/v1/route", `{"phase":"PLAN","project":"."}`, 400, "invalid", "absolute path"},
		{"project outside every route root", "POST", "/v1/route", `{"phase":"PLAN","project":"/nonexistent/project"}`, 403, "forbidden", "--route-root"},
		{"project twice", "POST", "/v1/route", `{"phase":"PLAN","project":"/tmp","project_types":["go"]}`, 400, "invalid", "not both"},
		{"session without sessions", "POST", "/v1/route", `{"phase":"PLAN","session":"abc"}`, 501, "not_configured", "sessions"},
		{"route wrong method", "GET", "/v1/route", ``, 405, "method_not_allowed", "use POST"},
		{"capabilities wrong method", "POST", "/v1/capabilities", `{}`, 405, "method_not_allowed", "use GET"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			status, body := do(t, ts, tt.method, tt.path, tt.body, nil)
			checkError(t, status, body, tt.status, tt.code, tt.msg)
		})
	}
}

// checkError checks an error answer: status, code and a message part.
func checkError(t *testing.T, status int, body []byte, wantStatus int, code, msg string) {
	t.Helper()
	if status != wantStatus {
		t.Fatalf("status %d, want %d: %s", status, wantStatus, body)
	}
	var e apiError
	if err := json.Unmarshal(body, &e); err != nil || e.Error.Code != code || !strings.Contains(e.Error.Message, msg) {
		t.Errorf("error body %s, want code %q and a message with %q", body, code, msg)
	}
}

func TestCapabilitiesEndpoint(t *testing.T) {
	ts := newTestServer(t, &httpapi.Options{Router: testRouter(t)})
	status, body := do(t, ts, "GET", "/v1/capabilities", "", nil)
	if status != 200 {
		t.Fatalf("status %d: %s", status, body)
	}
	var sum route.Summary
	strict(t, body, &sum)
	if sum.Plugins != 5 || sum.Cards != 6 || len(sum.Capabilities) != len(route.Default().Categories) {
		t.Errorf("summary: %d plugins, %d cards, %d capabilities", sum.Plugins, sum.Cards, len(sum.Capabilities))
	}
	for _, c := range sum.Capabilities {
		if c.Name == "code-review" {
			if len(c.Candidates) != 2 || c.Candidates[0].Name != "review:code-reviewer" || c.Candidates[0].Confidence != route.High || c.Default != "defaults/validator" {
				t.Errorf("code-review: %+v", c)
			}
		}
	}
}

func TestRoutingNotConfiguredOrFailing(t *testing.T) {
	ts := newTestServer(t, nil)
	for _, p := range []struct{ method, path, body string }{{"POST", "/v1/route", `{"phase":"PLAN"}`}, {"GET", "/v1/capabilities", ""}} {
		status, body := do(t, ts, p.method, p.path, p.body, nil)
		checkError(t, status, body, 501, "not_configured", "routing is not configured")
	}
	// A scan that fails (a plugins folder on a dead network share) is a
	// dependency that cannot be reached.
	broken := route.NewCache(route.New(nil, nil), func(ctx context.Context) ([]card.Card, error) {
		return nil, errors.New("reading /mnt/plugins: input/output error")
	}, nil)
	ts = newTestServer(t, &httpapi.Options{Router: broken})
	status, body := do(t, ts, "GET", "/v1/capabilities", "", nil)
	checkError(t, status, body, 503, "unavailable", "scanning plugins: reading /mnt/plugins")
	status, body = do(t, ts, "POST", "/v1/route", `{"phase":"PLAN"}`, nil)
	checkError(t, status, body, 503, "unavailable", "scanning plugins")
}

// TestRouteWritesFlow checks that /v1/route writes the capability
// warnings into the project's FLOW.md, as `capbroker route` does, keeping
// the rest of the file; "state" names another file or "none".
func TestRouteWritesFlow(t *testing.T) {
	root := t.TempDir()
	ts := newTestServer(t, &httpapi.Options{Router: testRouter(t), RouteRoots: []string{root}})
	project := filepath.Join(root, "project")
	os.Mkdir(project, 0o755)
	os.WriteFile(filepath.Join(project, "requirements.txt"), []byte("flask\n"), 0o644)
	flow := filepath.Join(project, "FLOW.md")
	os.WriteFile(flow, []byte("# Flow\n\nNotes kept as they are.\n"), 0o644)

	status, body := do(t, ts, "POST", "/v1/route", `{"capability":"requirements-gathering","project":"`+project+`"}`, nil)
	if status != 200 {
		t.Fatalf("status %d: %s", status, body)
	}
	var d route.Decision
	strict(t, body, &d)
	if !d.Default || len(d.Warnings) != 0 {
		t.Fatalf("decision %s (default %v), warnings %q", d.Agent, d.Default, d.Warnings)
	}
	data, _ := os.ReadFile(flow)
	text := string(data)
	if !strings.HasPrefix(text, "# Flow\n\nNotes kept as they are.\n") || !strings.Contains(text, "## Capability Warnings") ||
		!strings.Contains(text, "- **requirements-gathering** → defaults/interviewer") || !strings.Contains(text, "project type python") {
		t.Errorf("FLOW.md:\n%s", text)
	}

	// A phase whose secondary capability falls back is written too.
	status, body = do(t, ts, "POST", "/v1/route", `{"phase":"DISCUSS","project":"`+project+`"}`, nil)
	if status != 200 {
		t.Fatalf("status %d: %s", status, body)
	}
	data, _ = os.ReadFile(flow)
	if !strings.Contains(string(data), "- **brainstorming** → defaults/interviewer") {
		t.Errorf("FLOW.md after DISCUSS:\n%s", data)
	}

	other := filepath.Join(root, "STATE.md")
	if status, body = do(t, ts, "POST", "/v1/route", `{"capability":"brainstorming","state":"`+other+`"}`, nil); status != 200 {
		t.Fatalf("status %d: %s", status, body)
	}
	if data, err := os.ReadFile(other); err != nil || !strings.Contains(string(data), "- **brainstorming**") {
		t.Errorf("state file: %v\n%s", err, data)
	}

	quiet := filepath.Join(root, "quiet")
	os.Mkdir(quiet, 0o755)
	if status, body = do(t, ts, "POST", "/v1/route", `{"capability":"brainstorming","project":"`+quiet+`","state":"none"}`, nil); status != 200 {
		t.Fatalf("status %d: %s", status, body)
	}
	if _, err := os.Stat(filepath.Join(quiet, "FLOW.md")); err == nil {
		t.Errorf(`"state":"none" wrote FLOW.md`)
	}
	status, body = do(t, ts, "POST", "/v1/route", `{"capability":"brainstorming","state":"FLOW.md"}`, nil)
	checkError(t, status, body, 400, "invalid", `"state" "FLOW.md": want an absolute path`)
}
