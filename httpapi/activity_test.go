package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/capbroker/capbroker/gateway"
	"github.com/capbroker/capbroker/httpapi"
	"github.com/capbroker/capbroker/session"
	"github.com/capbroker/capbroker/store"
	"github.com/capbroker/capbroker/store/sqlite"
	"github.com/capbroker/capbroker/trace"
)

// opsServer is a real MCP server over streamable HTTP with three tools,
// one of them destructive (the gateway holds it back).
func opsServer(t *testing.T) string {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "ops", Version: "1"}, nil)
	type args struct {
		Service string `json:"service"`
	}
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	f := false
	yes := true
	mcp.AddTool(srv, &mcp.Tool{Name: "service_status", Description: "Show the status of a running service: up or down, its uptime and its version.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *mcp.CallToolRequest, a args) (*mcp.CallToolResult, any, error) {
			return text(a.Service + " is up"), nil, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "tail_logs", Description: "Tail the log lines of a service, newest last.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *mcp.CallToolRequest, a args) (*mcp.CallToolResult, any, error) {
			return text("no errors in the logs of " + a.Service), nil, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "delete_service", Description: "Delete a service and all of its data permanently.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: false, DestructiveHint: &yes, IdempotentHint: f}},
		func(_ context.Context, _ *mcp.CallToolRequest, a args) (*mcp.CallToolResult, any, error) {
			return text("deleted " + a.Service), nil, nil
		})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	return ts.URL
}

// gatewayRun runs a real capbroker gateway in front of opsServer,
// persisting its sessions and traces in the SQLite file db, and drives
// two clients through it: "alice" (named: stored) finds, calls a found
// tool and a held-back one; an anonymous client calls by name a tool it
// was not given, which runs (calls by name go through). It returns when every record is written.
func gatewayRun(t *testing.T, db string) {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, db, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ss := gateway.NewStoreSessions(st, &gateway.StoreOptions{Task: "capbroker gateway", Logger: quiet()})
	g, err := gateway.New(&gateway.Config{Servers: []gateway.ServerConfig{{Name: "ops", URL: opsServer(t)}}},
		&gateway.Options{Mode: gateway.ModeSearch, Store: ss, Trace: ss, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	gctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := g.Start(gctx); err != nil {
		t.Fatal(err)
	}
	if err := g.Ready(gctx); err != nil {
		t.Fatal(err)
	}
	if held := g.Held(); len(held) != 1 || held[0].Name != "ops__delete_service" {
		t.Fatalf("held back: %+v, want ops__delete_service", held)
	}
	hs := httptest.NewServer(g.Handler(nil))
	defer hs.Close()
	client := func(name string) *mcp.ClientSession {
		hdr := http.Header{}
		if name != "" {
			hdr.Set(gateway.SessionHeader, name)
		}
		c := mcp.NewClient(&mcp.Implementation{Name: "explorer-test", Version: "1"}, nil)
		cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: hs.URL + "/mcp",
			HTTPClient: &http.Client{Transport: headerRT{hdr, http.DefaultTransport}}}, nil)
		if err != nil {
			t.Fatalf("connecting to the gateway: %v", err)
		}
		return cs
	}
	call := func(cs *mcp.ClientSession, tool string, args map[string]any) *mcp.CallToolResult {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			t.Fatalf("calling %s: %v", tool, err)
		}
		return res
	}
	alice := client("alice")
	if res := call(alice, "find_capability", map[string]any{"query": "tail the logs of a service"}); res.IsError {
		t.Fatalf("find: %+v", res.Content[0])
	}
	if res := call(alice, "find_capability", map[string]any{"query": "delete a service permanently"}); res.IsError {
		t.Fatalf("find: %+v", res.Content[0])
	}
	if res := call(alice, "ops__tail_logs", map[string]any{"service": "api"}); res.IsError {
		t.Fatalf("ops__tail_logs: %+v", res.Content[0])
	}
	if res := call(alice, "ops__delete_service", map[string]any{"service": "api"}); !res.IsError {
		t.Fatal("the held-back ops__delete_service was called")
	}
	alice.Close()
	anon := client("")
	if res := call(anon, "ops__service_status", map[string]any{"service": "api"}); res.IsError {
		t.Errorf("an anonymous session's call by name of a tool it was not given: %+v", res.Content)
	}
	anon.Close()
	cancel()
	g.Close()
	ss.Close()
}

type headerRT struct {
	h  http.Header
	rt http.RoundTripper
}

func (h headerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.h {
		r.Header[k] = v
	}
	return h.rt.RoundTrip(r)
}

// explorerOnDB serves the API over the SQLite file db, as capbroker serve
// --db does, with a bearer token.
func explorerOnDB(t *testing.T, db, token string) (*httptest.Server, store.Store) {
	t.Helper()
	st, err := sqlite.Open(context.Background(), db, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	b := testBroker(t)
	mgr := session.NewManager(b.Selector(), st, &session.Options{Logger: quiet()})
	srv, err := httpapi.New(b, &httpapi.Options{Logger: quiet(), Token: token, Sessions: mgr, Traces: st})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	return ts, st
}

func activity(t *testing.T, ts *httptest.Server, query string, header map[string]string) httpapi.ActivityResponse {
	t.Helper()
	code, body := do(t, ts, "GET", "/v1/activity"+query, "", header)
	if code != http.StatusOK {
		t.Fatalf("GET /v1/activity%s: %d %s", query, code, body)
	}
	var a httpapi.ActivityResponse
	if err := json.Unmarshal(body, &a); err != nil {
		t.Fatal(err)
	}
	return a
}

// TestActivityOfGateway runs a real gateway writing into a SQLite file
// and reads what it did through GET /v1/activity of a server sharing the
// file: the named session's given, found, called and held-back tools, the
// anonymous one's refused call, and an API session beside them.
func TestActivityOfGateway(t *testing.T) {
	db := filepath.Join(t.TempDir(), "capbroker.db")
	ts, _ := explorerOnDB(t, db, "")

	empty := activity(t, ts, "", nil)
	code, raw := do(t, ts, "GET", "/v1/activity", "", nil)
	if empty.Count != 0 || code != 200 || !strings.Contains(string(raw), `"sessions":[]`) {
		t.Errorf("empty database: %d %s, want sessions []", code, raw)
	}

	gatewayRun(t, db)
	if code, body := do(t, ts, "POST", "/v1/sessions", `{"task":"roll back the kubernetes deployment","id":"api-run"}`, nil); code != http.StatusCreated {
		t.Fatalf("starting an API session: %d %s", code, body)
	}
	if code, body := do(t, ts, "POST", "/v1/sessions/api-run/call", `{"tool":"no_such_tool"}`, nil); code != http.StatusOK {
		t.Fatalf("an API session's call: %d %s", code, body)
	}

	a := activity(t, ts, "", nil)
	byID := map[string]httpapi.SessionActivity{}
	for _, s := range a.Sessions {
		byID[s.ID] = s
	}
	if a.Count != 3 || len(a.Sessions) != 3 || a.Partial {
		t.Fatalf("activity: %d sessions (partial %v), want alice, an anonymous one and api-run: %+v", a.Count, a.Partial, a.Sessions)
	}
	if a.Sessions[0].ID != "api-run" {
		t.Errorf("newest first: %s first, want api-run", a.Sessions[0].ID)
	}
	alice := byID["alice"]
	if !alice.Gateway || !alice.Stored || alice.Mode != "search" || alice.FindCalls != 2 {
		t.Errorf("alice: gateway %v stored %v mode %q finds %d", alice.Gateway, alice.Stored, alice.Mode, alice.FindCalls)
	}
	// alice's client closed her session: ended, not live, and when.
	if alice.Live || !alice.Ended || alice.EndedAt == nil || time.Since(*alice.EndedAt) > time.Minute ||
		!strings.Contains(alice.EndReason, "session ended: closed by its client") {
		t.Errorf("alice's session was closed: live %v ended %v at %v (%q)", alice.Live, alice.Ended, alice.EndedAt, alice.EndReason)
	}
	if !slices.Contains(alice.Exposed, "ops__tail_logs") {
		t.Errorf("alice's exposed tools after her end: %v", alice.Exposed)
	}
	if !slices.Contains(alice.Found, "ops__tail_logs") || slices.Contains(alice.Found, "ops__delete_service") {
		t.Errorf("alice found %v, want ops__tail_logs and not the held-back tool", alice.Found)
	}
	wantCalls := []httpapi.CallCount{
		{Tool: "ops__tail_logs", Upstream: "ops", Outcome: "ok", Count: 1},
		{Tool: "ops__delete_service", Outcome: "held", Count: 1},
	}
	if d := cmp.Diff(wantCalls, alice.Called); d != "" {
		t.Errorf("alice called (-want +got):\n%s", d)
	}
	if len(alice.Held) != 1 || alice.Held[0].Name != "ops__delete_service" || alice.Held[0].Refused != 1 || !strings.Contains(alice.Held[0].Why, "irreversible") {
		t.Errorf("alice held: %+v", alice.Held)
	}
	var anon httpapi.SessionActivity
	for _, s := range a.Sessions {
		if s.ID != "alice" && s.ID != "api-run" {
			anon = s
		}
	}
	if !anon.Gateway || anon.Stored || len(anon.Called) != 1 || anon.Called[0].Outcome != "ok" || anon.Failures != 0 {
		t.Errorf("anonymous session: %+v", anon)
	}
	api := byID["api-run"]
	if api.Gateway || !api.Stored || len(api.Given) == 0 || len(api.Called) != 1 || api.Called[0].Outcome != "refused" || !api.Live || api.Ended {
		t.Errorf("API session: %+v", api)
	}
	for _, s := range a.Sessions {
		for name, list := range map[string]any{"given": s.Given, "found": s.Found, "exposed": s.Exposed, "called": s.Called, "held": s.Held} {
			if list == nil {
				t.Errorf("%s: %s is nil (prints null)", s.ID, name)
			}
		}
	}

	if got := activity(t, ts, "?limit=1", nil); got.Count != 1 || got.Sessions[0].ID != "api-run" {
		t.Errorf("limit=1: %+v", got)
	}
	if got := activity(t, ts, "?records=1", nil); !got.Partial || got.Records != 1 {
		t.Errorf("records=1: partial %v, records %d", got.Partial, got.Records)
	}
	for _, q := range []string{"?limit=0", "?limit=x", "?records=0", "?records=10001"} {
		if code, body := do(t, ts, "GET", "/v1/activity"+q, "", nil); code != http.StatusBadRequest || !strings.Contains(string(body), strings.Split(strings.TrimPrefix(q, "?"), "=")[0]) {
			t.Errorf("GET /v1/activity%s: %d %s, want 400 naming the parameter", q, code, body)
		}
	}
	if code, body := do(t, newTestServer(t, nil), "GET", "/v1/activity", "", nil); code != http.StatusNotImplemented {
		t.Errorf("without a database: %d %s, want 501", code, body)
	}
}

// TestActivityLive: a session whose last record is older than the live
// window is listed as recent, not live.
func TestActivityLive(t *testing.T) {
	db := filepath.Join(t.TempDir(), "capbroker.db")
	ts, st := explorerOnDB(t, db, "")
	old := time.Now().Add(-2 * httpapi.LiveWindow)
	ss := gateway.NewStoreSessions(st, &gateway.StoreOptions{Logger: quiet()})
	ss.Record(context.Background(), gateway.Event{Time: old, Session: "yesterday", Kind: "select", Mode: "auto", Query: "check the logs", Exposed: []string{"ops__tail_logs"}})
	ss.Record(context.Background(), gateway.Event{Session: "now", Kind: "select", Mode: "auto", Query: "check the logs"})
	ss.Close()
	a := activity(t, ts, "", nil)
	live := map[string]bool{}
	for _, s := range a.Sessions {
		live[s.ID] = s.Live
	}
	if d := cmp.Diff(map[string]bool{"yesterday": false, "now": true}, live); d != "" {
		t.Errorf("live (-want +got):\n%s", d)
	}
	if a.Sessions[1].ID != "yesterday" || !slices.Equal(a.Sessions[1].Given, []string{"ops__tail_logs"}) || a.Sessions[1].Task != "check the logs" {
		t.Errorf("yesterday: %+v", a.Sessions[1])
	}
	var recs []trace.Record
	if recs, _ = st.Traces(context.Background(), nil); len(recs) != 2 {
		t.Errorf("%d records stored, want 2", len(recs))
	}
}

// TestExplorerShowsGateway runs a real gateway writing into a SQLite
// file, then opens the explorer of a server sharing the file (with a
// token) in headless Chromium: the Sessions tab asks for the token, then
// lists the gateway's sessions with what each was given, found and
// called and the held-back tool, and a session's trace opens on a click.
func TestExplorerShowsGateway(t *testing.T) {
	ctx := browser(t)
	db := filepath.Join(t.TempDir(), "capbroker.db")
	gatewayRun(t, db)
	ts, _ := explorerOnDB(t, db, "tok-19c")

	err := chromedp.Do(ctx,
		chromedp.EmulateViewport(1280, 900),
		chromedp.Navigate(ts.URL+"/"),
		chromedp.WaitVisible(chromedp.CSS(`nav button[data-tab=sessions]`)),
		chromedp.Click(chromedp.CSS(`nav button[data-tab=sessions]`)),
		chromedp.WaitVisible(chromedp.ID("sessions-error")),
	)
	if err != nil {
		t.Fatalf("driving Chromium: %v", err)
	}
	msg, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("sessions-error")))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(msg, "enter it in the token field") {
		t.Errorf("without the token the Sessions tab says %q", msg)
	}
	err = chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.ID("token"), "tok-19c"),
		chromedp.Click(chromedp.ID("sessions-refresh")),
		chromedp.WaitVisible(chromedp.CSS(`#sessions tr.session[data-id=alice]`)),
	)
	if err != nil {
		t.Fatalf("listing sessions with the token: %v", err)
	}
	type row struct {
		ID     string `json:"id"`
		Live   string `json:"live"`
		State  string `json:"state"`
		Text   string `json:"text"`
		Found  string `json:"found"`
		Called string `json:"called"`
		Held   string `json:"held"`
	}
	rows, err := chromedp.Run(ctx, chromedp.Evaluate[[]row](`[...document.querySelectorAll("#sessions tr.session")].map(r => ({
		id: r.dataset.id, live: r.dataset.live, state: r.dataset.state, text: r.innerText,
		found: r.querySelector("td.found").innerText, called: r.querySelector("td.called").innerText, held: r.querySelector("td.held").innerText,
	}))`))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 {
		t.Fatalf("rendered %d sessions, want alice and the anonymous one: %+v", len(rows), rows)
	}
	var alice row
	for _, r := range rows {
		if r.ID == "alice" {
			alice = r
		}
	}
	if alice.Live != "false" || alice.State != "ended" || !regexp.MustCompile(`ended \d`).MatchString(alice.Text) ||
		!strings.Contains(alice.Text, "gateway · search · stored") || !strings.Contains(alice.Found, "ops__tail_logs") ||
		!strings.Contains(alice.Called, "ops__tail_logs ×1 ok") || !strings.Contains(alice.Held, "ops__delete_service refused ×1") {
		t.Errorf("alice's row: %+v", alice)
	}
	summary, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("sessions-summary")))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(summary, "2 sessions, 0 live") || !strings.Contains(summary, "2 ended") {
		t.Errorf("summary %q", summary)
	}

	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`#sessions tr.session[data-id=alice]`)),
		chromedp.WaitVisible(chromedp.CSS(`#trace-records tr.record`)),
	)
	if err != nil {
		t.Fatalf("opening alice's trace: %v", err)
	}
	type rec struct {
		Kind string `json:"kind"`
		Text string `json:"text"`
	}
	recs, err := chromedp.Run(ctx, chromedp.Evaluate[[]rec](`[...document.querySelectorAll("#trace-records tr.record")].map(r => ({kind: r.dataset.kind, text: r.innerText}))`))
	if err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "explorer-sessions.png")
	var kinds []string
	for _, r := range recs {
		kinds = append(kinds, r.Kind)
	}
	if d := cmp.Diff([]string{"select", "find", "find", "call", "call", "end"}, kinds); d != "" {
		t.Errorf("alice's trace kinds (-want +rendered):\n%s", d)
	}
	if len(recs) == 5 && (!strings.Contains(recs[2].Text, "held back: ops__delete_service") || !strings.Contains(recs[4].Text, "irreversible")) {
		t.Errorf("alice's trace: %+v", recs)
	}

	// A session starting meanwhile (another writer of the file) shows up
	// without a click: the tab refreshes itself.
	st, err := sqlite.Open(context.Background(), db, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ss := gateway.NewStoreSessions(st, &gateway.StoreOptions{Logger: quiet()})
	ss.Record(context.Background(), gateway.Event{Session: "bob", Kind: "select", Mode: "auto", Query: "check the logs", Exposed: []string{"ops__tail_logs"}})
	ss.Close()
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`#sessions tr.session[data-id=bob][data-state=live]`))); err != nil {
		t.Fatalf("waiting for a new session to appear, live: %v", err)
	}
	// bob's session ends: his row says so, with when, without a click.
	ss = gateway.NewStoreSessions(st, &gateway.StoreOptions{Logger: quiet()})
	ss.Record(context.Background(), gateway.Event{Session: "bob", Kind: "end", Mode: "auto", Reason: "session ended: its client disconnected"})
	ss.Close()
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`#sessions tr.session[data-id=bob][data-state=ended]`))); err != nil {
		t.Fatalf("waiting for bob's session to show as ended: %v", err)
	}
	badge, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]string](`(() => { const b = document.querySelector("#sessions tr.session[data-id=bob] .badge"); return {text: b.innerText, title: b.title}; })()`))
	if err != nil || !regexp.MustCompile(`^ended \d`).MatchString(badge["text"]) || badge["title"] != "session ended: its client disconnected" {
		t.Errorf("bob's badge: %v %v, want ended with when, and why as its title", badge, err)
	}
	chosen, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("#sessions tr.chosen").dataset.id`))
	if err != nil || chosen != "alice" {
		t.Errorf("after a refresh the chosen session is %q (%v), want alice still", chosen, err)
	}
}

// BenchmarkActivity answers GET /v1/activity over a SQLite file holding
// 5000 gateway trace records of 100 sessions (the default read).
func BenchmarkActivity(b *testing.B) {
	db := filepath.Join(b.TempDir(), "capbroker.db")
	st, err := sqlite.Open(context.Background(), db, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	var recs []trace.Record
	for i := range httpapi.DefaultActivityRecords {
		e := gateway.Event{Session: fmt.Sprintf("s%03d", i%100), Kind: []string{"select", "find", "call", "call"}[i%4], Mode: "auto",
			Query: "tail the logs", Tool: "ops__tail_logs", Upstream: "ops", Outcome: "ok",
			Exposed: []string{"ops__tail_logs", "ops__service_status", "ops__restart"}, Found: []string{"ops__tail_logs"}, Held: []string{"ops__delete_service"},
			TokensExposed: 300, TokensFull: 9000}
		recs = append(recs, gateway.Record(e))
	}
	if err := st.AppendTraces(context.Background(), recs...); err != nil {
		b.Fatal(err)
	}
	srv, err := httpapi.New(testBroker(b), &httpapi.Options{Logger: quiet(), Traces: st})
	if err != nil {
		b.Fatal(err)
	}
	h := srv.Handler()
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("GET", "http://127.0.0.1/v1/activity", nil)
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"count":20`) {
			b.Fatalf("%d %.300s", rec.Code, rec.Body.String())
		}
	}
}
