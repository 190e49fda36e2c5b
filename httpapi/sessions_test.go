package httpapi_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	capbroker "github.com/capbroker/capbroker"
	"github.com/capbroker/capbroker/httpapi"
	"github.com/capbroker/capbroker/internal/testenv"
	"github.com/capbroker/capbroker/session"
	"github.com/capbroker/capbroker/source/toolfile"
	"github.com/capbroker/capbroker/store"
	"github.com/capbroker/capbroker/store/postgres"
	"github.com/capbroker/capbroker/store/sqlite"
)

// newStore opens a SQLite store in a temporary folder.
func newStore(t testing.TB) store.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "capbroker.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// newPostgres opens a store in a fresh schema of the test database,
// dropped at the end of the test.
func newPostgres(t testing.TB) store.Store {
	t.Helper()
	dsn := testenv.Postgres(t)
	var b [6]byte
	rand.Read(b[:])
	schema := "capbroker_httpapi_" + hex.EncodeToString(b[:])
	ctx := context.Background()
	st, err := postgres.Open(ctx, dsn, &postgres.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		st.Close()
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Errorf("dropping schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, `DROP SCHEMA IF EXISTS `+pgx.Identifier{schema}.Sanitize()+` CASCADE`); err != nil {
			t.Errorf("dropping schema %s: %v", schema, err)
		}
	})
	return st
}

// sessionServer serves the session tests' catalog (session/testdata,
// real-looking coding tools) with sessions and traces in st.
func sessionServer(t *testing.T, st store.Store) *httptest.Server {
	t.Helper()
	cards, errs := toolfile.LoadAll([]string{filepath.Join(testenv.Root(), "session", "testdata", "tools.json")})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	b, err := capbroker.New(context.Background(), &capbroker.Options{Cards: cards, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	mgr := session.NewManager(b.Selector(), st, &session.Options{Logger: quiet()})
	s, err := httpapi.New(b, &httpapi.Options{Logger: quiet(), Sessions: mgr, Traces: st, Router: testRouter(t)})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	return ts
}

const codingTask = "fix the failing test in parser.go and run the tests again"

// decodeSession decodes a session answer strictly into the CLI's type.
func decodeSession(t *testing.T, status int, body []byte, want int) httpapi.SessionResponse {
	t.Helper()
	if status != want {
		t.Fatalf("status %d, want %d: %s", status, want, body)
	}
	var v struct {
		session.View
		Payload json.RawMessage `json:"payload"`
	}
	strict(t, body, &v)
	return httpapi.SessionResponse{View: &v.View, Payload: v.Payload}
}

// TestSessionFlow runs a whole session through the API, on SQLite and
// PostgreSQL: start, a refused call, a find that exposes, an allowed call,
// show, resume with a payload, the budget running out, the trace.
func TestSessionFlow(t *testing.T) {
	for _, tc := range []struct {
		name string
		open func(testing.TB) store.Store
	}{{"sqlite", newStore}, {"postgres", newPostgres}} {
		t.Run(tc.name, func(t *testing.T) {
			ts := sessionServer(t, tc.open(t))
			req := func(method, path, body string) (int, []byte) {
				t.Helper()
				return do(t, ts, method, path, body, nil)
			}

			status, body := req("POST", "/v1/sessions", `{"task":"`+codingTask+`","max_iterations":4}`)
			s := decodeSession(t, status, body, 201)
			if s.ID == "" || s.Task != codingTask || !slices.Contains(s.ExposedTools, "read_file") || slices.Contains(s.ExposedTools, "git_blame") ||
				s.Hatch != "find_capability" || s.MaxIterations != 4 || s.Reason == "" || s.Tokens == nil {
				t.Fatalf("start: %s", body)
			}
			id := s.ID

			status, body = req("POST", "/v1/sessions/"+id+"/call", `{"tool":"git_blame"}`)
			c := decodeSession(t, status, body, 200)
			if c.Call == nil || c.Call.Allowed || !strings.Contains(c.Call.Error, "find_capability") || c.Iterations != 1 {
				t.Errorf("call of an unexposed tool: %s", body)
			}

			status, body = req("POST", "/v1/sessions/"+id+"/find", `{"query":"who last changed a line of a file","k":2}`)
			f := decodeSession(t, status, body, 200)
			if f.Find == nil || !slices.Contains(f.Find.Added, "git_blame") || len(f.Find.Matches[0].InputSchema) == 0 || f.Iterations != 2 || f.FindCalls != 1 {
				t.Fatalf("find: %s", body)
			}
			want := append(slices.Clone(s.ExposedTools), f.Find.Added...)
			if d := cmp.Diff(want, f.ExposedTools); d != "" {
				t.Errorf("exposed after find (-want +got):\n%s", d)
			}

			status, body = req("POST", "/v1/sessions/"+id+"/call", `{"tool":"git_blame"}`)
			if c := decodeSession(t, status, body, 200); !c.Call.Allowed || c.Iterations != 3 {
				t.Errorf("call after the find: %s", body)
			}

			status, body = req("GET", "/v1/sessions/"+id, "")
			if g := decodeSession(t, status, body, 200); !slices.Equal(g.ExposedTools, f.ExposedTools) || g.Iterations != 3 || g.Find != nil {
				t.Errorf("show: %s", body)
			}

			status, body = req("POST", "/v1/sessions/"+id+"/resume", "")
			r := decodeSession(t, status, body, 200)
			if !slices.Equal(r.ExposedTools, f.ExposedTools) || len(r.Missing) != 0 || r.Payload != nil {
				t.Errorf("resume: %s", body)
			}
			status, body = req("POST", "/v1/sessions/"+id+"/resume", `{"format":"anthropic"}`)
			r = decodeSession(t, status, body, 200)
			var tools []struct {
				Name string `json:"name"`
			}
			if err := json.Unmarshal(r.Payload, &tools); err != nil || len(tools) != len(f.ExposedTools)+1 || tools[len(tools)-1].Name != "find_capability" {
				t.Errorf("resume payload (%v): %s", err, r.Payload)
			}

			// The fourth iteration is the last.
			status, body = req("POST", "/v1/sessions/"+id+"/call", `{"tool":"read_file"}`)
			decodeSession(t, status, body, 200)
			status, body = req("POST", "/v1/sessions/"+id+"/find", `{"query":"delete a branch"}`)
			checkError(t, status, body, 409, "budget_exhausted", "4 of 4 iterations used")
			status, body = req("POST", "/v1/sessions/"+id+"/call", `{"tool":"read_file"}`)
			checkError(t, status, body, 409, "budget_exhausted", "iteration budget exhausted")

			// The trace holds every event of the session, in order.
			status, body = req("GET", "/v1/traces?session="+id, "")
			var recs []struct {
				Kind          string   `json:"kind"`
				SelectedTools []string `json:"selected_tools"`
			}
			if status != 200 || json.Unmarshal(body, &recs) != nil {
				t.Fatalf("traces: %d %s", status, body)
			}
			var kinds []string
			for _, r := range recs {
				kinds = append(kinds, r.Kind)
			}
			wantKinds := []string{"select", "call", "find", "call", "resume", "resume", "call", "find", "call"}
			if d := cmp.Diff(wantKinds, kinds); d != "" {
				t.Errorf("trace kinds (-want +got):\n%s", d)
			}

			// A route made for the session joins its trace.
			status, body = req("POST", "/v1/route", `{"phase":"VERIFY","session":"`+id+`"}`)
			if status != 200 {
				t.Fatalf("route in a session: %d %s", status, body)
			}
			status, body = req("GET", "/v1/traces?kind=route&session="+id, "")
			if status != 200 || !strings.Contains(string(body), `"session_id":"`+id+`"`) || !strings.Contains(string(body), "review:code-reviewer") {
				t.Errorf("route record of the session: %d %.400s", status, body)
			}
			status, body = req("POST", "/v1/route", `{"phase":"VERIFY","session":"no-such-session"}`)
			checkError(t, status, body, 404, "not_found", "no-such-session")

			status, body = req("GET", "/v1/sessions", "")
			var list httpapi.SessionsResponse
			if status != 200 || json.Unmarshal(body, &list) != nil || list.Count != 1 || list.Sessions[0].ID != id {
				t.Errorf("list: %d %s", status, body)
			}
		})
	}
}

func TestSessionErrors(t *testing.T) {
	ts := sessionServer(t, newStore(t))
	status, body := do(t, ts, "POST", "/v1/sessions", `{"task":"`+codingTask+`","id":"run-1.a_b"}`, nil)
	if s := decodeSession(t, status, body, 201); s.ID != "run-1.a_b" {
		t.Fatalf("start with an ID: %s", body)
	}
	for _, tt := range []struct {
		name, method, path, body string
		status                   int
		code, msg                string
	}{
		{"start bad json", "POST", "/v1/sessions", `{"task":`, 400, "invalid", "bad JSON"},
		{"start unknown field", "POST", "/v1/sessions", `{"task":"x","tools":["a"]}`, 400, "invalid", `unknown field "tools"`},
		{"start no task", "POST", "/v1/sessions", `{"id":"x"}`, 400, "invalid", `"task" is required`},
		{"start bad id", "POST", "/v1/sessions", `{"task":"x","id":"../etc"}`, 400, "invalid", `"id" "../etc"`},
		{"start negative budget", "POST", "/v1/sessions", `{"task":"x","max_iterations":-1}`, 400, "invalid", "max_iterations"},
		{"start taken id", "POST", "/v1/sessions", `{"task":"x","id":"run-1.a_b"}`, 409, "conflict", "already exists"},
		{"start wrong method", "PUT", "/v1/sessions", `{}`, 405, "method_not_allowed", "use GET or POST"},
		{"list bad limit", "GET", "/v1/sessions?limit=-2", ``, 400, "invalid", "limit"},
		{"show unknown", "GET", "/v1/sessions/nope", ``, 404, "not_found", "session not found"},
		{"show bad id", "GET", "/v1/sessions/%2e%2e", ``, 404, "not_found", "session IDs are"},
		{"show wrong method", "DELETE", "/v1/sessions/run-1.a_b", ``, 405, "method_not_allowed", "use GET"},
		{"find bad json", "POST", "/v1/sessions/run-1.a_b/find", `{"query":`, 400, "invalid", "bad JSON"},
		{"find unknown field", "POST", "/v1/sessions/run-1.a_b/find", `{"query":"x","top":3}`, 400, "invalid", `unknown field "top"`},
		{"find no query", "POST", "/v1/sessions/run-1.a_b/find", `{"k":3}`, 400, "invalid", `"query" is required`},
		{"find bad k", "POST", "/v1/sessions/run-1.a_b/find", `{"query":"x","k":101}`, 400, "invalid", `"k"`},
		{"find unknown session", "POST", "/v1/sessions/nope/find", `{"query":"x"}`, 404, "not_found", "nope"},
		{"find wrong method", "GET", "/v1/sessions/run-1.a_b/find", ``, 405, "method_not_allowed", "use POST"},
		{"call no tool", "POST", "/v1/sessions/run-1.a_b/call", `{}`, 400, "invalid", `"tool" is required`},
		{"call the hatch", "POST", "/v1/sessions/run-1.a_b/call", `{"tool":"find_capability"}`, 400, "invalid", "/find"},
		{"call unknown field", "POST", "/v1/sessions/run-1.a_b/call", `{"tool":"x","args":{}}`, 400, "invalid", `unknown field "args"`},
		{"call unknown session", "POST", "/v1/sessions/nope/call", `{"tool":"read_file"}`, 404, "not_found", "nope"},
		{"resume bad json", "POST", "/v1/sessions/run-1.a_b/resume", `{`, 400, "invalid", "bad JSON"},
		{"resume unknown field", "POST", "/v1/sessions/run-1.a_b/resume", `{"fmt":"x"}`, 400, "invalid", `unknown field "fmt"`},
		{"resume bad format", "POST", "/v1/sessions/run-1.a_b/resume", `{"format":"gemini"}`, 400, "invalid", `"format"`},
		{"resume unknown session", "POST", "/v1/sessions/nope/resume", ``, 404, "not_found", "nope"},
		{"resume wrong method", "GET", "/v1/sessions/run-1.a_b/resume", ``, 405, "method_not_allowed", "use POST"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			status, body := do(t, ts, tt.method, tt.path, tt.body, nil)
			checkError(t, status, body, tt.status, tt.code, tt.msg)
		})
	}
}

func TestSessionsNotConfigured(t *testing.T) {
	ts := newTestServer(t, nil)
	for _, p := range []struct{ method, path, body string }{
		{"POST", "/v1/sessions", `{"task":"x"}`},
		{"GET", "/v1/sessions", ``},
		{"GET", "/v1/sessions/abc", ``},
		{"POST", "/v1/sessions/abc/find", `{"query":"x"}`},
		{"POST", "/v1/sessions/abc/call", `{"tool":"x"}`},
		{"POST", "/v1/sessions/abc/resume", ``},
	} {
		t.Run(p.method+" "+p.path, func(t *testing.T) {
			status, body := do(t, ts, p.method, p.path, p.body, nil)
			checkError(t, status, body, 501, "not_configured", "sessions are not configured")
		})
	}
}
