package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"testing"

	capbroker "github.com/capbroker/capbroker"
	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/httpapi"
	"github.com/capbroker/capbroker/internal/apischema"
	"github.com/capbroker/capbroker/internal/testenv"
	"github.com/capbroker/capbroker/llm"
	"github.com/capbroker/capbroker/route"
	"github.com/capbroker/capbroker/session"
	"github.com/capbroker/capbroker/source"
	"github.com/capbroker/capbroker/source/toolfile"
)

// neverEmpty are the required arrays no valid answer leaves empty, and why.
var neverEmpty = map[string]string{
	"Plan.tasks":                 "a plan without tasks is refused (plan.Validate)",
	"Assembly.tasks":             "it assembles a plan, which has tasks",
	"Match.fields":               "a query term matches because a card field holds it",
	"RouteDecision.reasons":      "every decision says why, the default one too",
	"CapabilityMap.capabilities": "the taxonomy's capabilities are listed with or without plugins",
}

// TestResponsesMatchOpenAPI drives every endpoint that answers JSON, on a
// server whose catalog, plugins, sessions and traces are empty and on one
// with real ones, and checks every answer against /openapi.json: an empty
// list is [] (never null, never missing) wherever the document says
// array. Every required array of the document must have been answered,
// and answered empty unless neverEmpty says why it cannot be: a schema
// that grows one must grow a request here too.
func TestResponsesMatchOpenAPI(t *testing.T) {
	c, err := apischema.New(httpapi.OpenAPI())
	if err != nil {
		t.Fatal(err)
	}
	// The planner replays a recorded reply; its plan names the session
	// test catalog's tools.
	planner := &llm.Replay{Path: filepath.Join(testenv.Root(), "plan", "testdata", "replay", "coding-release.json")}
	serve := func(t *testing.T, cards []card.Card, plugins string) *httptest.Server {
		b, err := capbroker.New(context.Background(), &capbroker.Options{Cards: cards, Logger: quiet()})
		if err != nil {
			t.Fatal(err)
		}
		scan := func(ctx context.Context) ([]card.Card, error) {
			res, err := source.Discover(ctx, &source.Options{Roots: []source.Root{{Path: plugins}}})
			if err != nil {
				return nil, err
			}
			return res.Cards, nil
		}
		st := newStore(t)
		mgr := session.NewManager(b.Selector(), st, &session.Options{Logger: quiet(), Ranker: b})
		s, err := httpapi.New(b, &httpapi.Options{Logger: quiet(), Sessions: mgr, Traces: st, Planner: planner,
			Router: route.NewCache(route.New(nil, nil), scan, nil)})
		if err != nil {
			t.Fatal(err)
		}
		ts := httptest.NewServer(s.Handler())
		t.Cleanup(ts.Close)
		return ts
	}
	type call struct {
		method, pattern, path, body string
		status                      int
	}
	drive := func(t *testing.T, ts *httptest.Server, calls []call) map[string][]byte {
		t.Helper()
		bodies := map[string][]byte{}
		for _, cl := range calls {
			path := cl.path
			if path == "" {
				path = cl.pattern
			}
			status, body := do(t, ts, cl.method, path, cl.body, nil)
			if status != cl.status {
				t.Fatalf("%s %s: status %d, want %d: %s", cl.method, path, status, cl.status, body)
			}
			schema, err := c.Response(cl.method, cl.pattern, status)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range c.Check(schema, body) {
				t.Errorf("%s %s (%d): %s", cl.method, path, status, p)
			}
			bodies[cl.method+" "+path] = body
		}
		return bodies
	}
	const plan = `{"goal":"Fix the parser regression and ship the fix"}`

	t.Run("empty", func(t *testing.T) {
		// No cards, no plugins, no sessions, no traces.
		ts := serve(t, nil, t.TempDir())
		drive(t, ts, []call{
			{"GET", "/v1/sessions", "", "", 200},
			{"GET", "/v1/traces", "", "", 200},
			{"GET", "/v1/activity", "", "", 200},
			{"GET", "/v1/cards", "", "", 200},
			{"POST", "/v1/select", "", `{"task":"roll back the kubernetes deployment"}`, 200},
			{"POST", "/v1/find", "", `{"query":"roll back the kubernetes deployment"}`, 200},
			{"GET", "/v1/capabilities", "", "", 200},
			{"POST", "/v1/route", "", `{"task":"write the release notes"}`, 200},
			{"POST", "/v1/sessions", "", `{"task":"roll back the kubernetes deployment","id":"empty"}`, 201},
			{"POST", "/v1/sessions/{id}/find", "/v1/sessions/empty/find", `{"query":"undo the rollout"}`, 200},
			{"POST", "/v1/sessions/{id}/call", "/v1/sessions/empty/call", `{"tool":"kubectl_rollout_undo"}`, 200},
			{"POST", "/v1/sessions/{id}/resume", "/v1/sessions/empty/resume", `{"format":"anthropic"}`, 200},
			{"GET", "/v1/sessions/{id}", "/v1/sessions/empty", "", 200},
			{"POST", "/v1/sessions", "", `{"task":"nothing called yet","id":"idle"}`, 201},
			{"GET", "/v1/sessions", "", "", 200},
			{"GET", "/v1/traces", "", "", 200},
			{"GET", "/v1/activity", "", "", 200},
			{"POST", "/v1/plan", "", plan, 200},
		})
	})

	t.Run("full", func(t *testing.T) {
		// The session tests' coding tools and the routing test plugins.
		cards, errs := toolfile.LoadAll([]string{filepath.Join(testenv.Root(), "session", "testdata", "tools.json")})
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		plugins, err := filepath.Abs(filepath.Join("testdata", "plugins"))
		if err != nil {
			t.Fatal(err)
		}
		ts := serve(t, cards, plugins)
		got := drive(t, ts, []call{
			{"GET", "/v1/cards", "", "", 200},
			{"POST", "/v1/select", "", `{"task":"` + codingTask + `","format":"mcp"}`, 200},
			{"POST", "/v1/find", "", `{"query":"who last changed each line of a file","k":3}`, 200},
			{"GET", "/v1/capabilities", "", "", 200},
			{"POST", "/v1/route", "", `{"task":"refactor the python service and add tests"}`, 200},
			{"POST", "/v1/route", "", `{"task":"fix the flaky test","phase":"EXECUTE"}`, 200},
			{"POST", "/v1/plan", "", plan, 200},
		})
		var planned struct{ Plan json.RawMessage }
		json.Unmarshal(got["POST /v1/plan"], &planned)
		drive(t, ts, []call{
			{"POST", "/v1/assemble", "", `{"plan":` + string(planned.Plan) + `}`, 200},
			{"POST", "/v1/assemble", "", `{"plan":{"goal":"g","tasks":[{"id":"t1","description":"blorp the zingle"}]}}`, 200},
			{"POST", "/v1/sessions", "", `{"task":"` + codingTask + `","id":"fix"}`, 201},
			{"POST", "/v1/sessions", "", `{"plan":` + string(planned.Plan) + `,"plan_task":"t2","id":"planned"}`, 201},
			{"POST", "/v1/sessions/{id}/find", "/v1/sessions/fix/find", `{"query":"who last changed each line of a file","k":1}`, 200},
			{"POST", "/v1/sessions/{id}/call", "/v1/sessions/fix/call", `{"tool":"git_blame"}`, 200},
			{"POST", "/v1/sessions/{id}/call", "/v1/sessions/fix/call", `{"tool":"git_blam"}`, 200},
			{"POST", "/v1/sessions/{id}/resume", "/v1/sessions/fix/resume", `{"format":"openai"}`, 200},
			{"GET", "/v1/sessions/{id}", "/v1/sessions/planned", "", 200},
			{"GET", "/v1/sessions", "", "", 200},
			{"GET", "/v1/traces", "", "", 200},
			{"GET", "/v1/activity", "", "", 200},
		})
	})

	if t.Failed() {
		return
	}
	required := c.RequiredArrays()
	for _, key := range required {
		why, full := neverEmpty[key]
		held, empty := c.Seen(key)
		switch {
		case held == 0:
			t.Errorf("required array %s: no response held it; add a request that answers it", key)
		case empty == 0 && !full:
			t.Errorf("required array %s: never answered empty; add a request whose answer has none (or say in neverEmpty why none can)", key)
		case empty > 0 && full:
			t.Errorf("required array %s was answered empty, but neverEmpty says %s", key, why)
		}
	}
	for key := range neverEmpty {
		if !slices.Contains(required, key) {
			t.Errorf("neverEmpty names %s, which is not a required array of /openapi.json", key)
		}
	}
}
