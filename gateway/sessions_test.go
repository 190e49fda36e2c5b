package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/capbroker/capbroker/policy"
	"github.com/capbroker/capbroker/store"
	"github.com/capbroker/capbroker/trace"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// This file tests what happens when things run at the same time: sessions
// sharing a name, concurrent finds, catalog refreshes racing each other and
// the setup of a session, and sessions that end.

// setHook installs f as the test hook until t ends.
func setHook(t *testing.T, f func(ctx context.Context, point, session string)) {
	t.Helper()
	testHook.Store(&f)
	t.Cleanup(func() { testHook.Store(nil) })
}

// soon reports whether cond became true within a generous bound (the
// bound only keeps a broken build from hanging; nothing here is timed).
func soon(cond func() bool) bool {
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

// sessionsNamed returns the live sessions of g under key.
func sessionsNamed(g *Gateway, key string) []*session {
	var out []*session
	for _, s := range g.liveSessions() {
		if s.key == key {
			out = append(out, s)
		}
	}
	return out
}

// find calls find_capability from any goroutine.
func find(cs *mcp.ClientSession, query string) ([]string, error) {
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: policy.HatchName, Arguments: map[string]any{"query": query}})
	if err != nil {
		return nil, err
	}
	if res.IsError {
		return nil, fmt.Errorf("find_capability(%q): %s", query, resultText(res))
	}
	var out struct {
		Matches []struct{ Name, Confidence string } `json:"matches"`
	}
	if err := json.Unmarshal([]byte(resultText(res)), &out); err != nil {
		return nil, err
	}
	var names []string
	for _, m := range out.Matches {
		if m.Confidence != policy.Low { // the matches that join the session's list
			names = append(names, m.Name)
		}
	}
	return names, nil
}

// withoutHatch returns the sorted names other than the gateway's own tools.
func withoutHatch(names []string) []string {
	var out []string
	for _, n := range names {
		if n != policy.HatchName && n != CallName {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

func union(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		for _, n := range l {
			if !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	sort.Strings(out)
	return out
}

// TestExposedStoreSave checks the exposed-set writes of every store: a
// session's tools only grow, whatever order the writes come in; stored
// order is kept; concurrent writers of one session lose nothing.
func TestExposedStoreSave(t *testing.T) {
	stores := []struct {
		name string
		open func(t *testing.T) ExposedStore
	}{
		{"memory", func(*testing.T) ExposedStore { return NewMemoryStore() }},
	}
	for _, db := range persistentStores {
		stores = append(stores, struct {
			name string
			open func(t *testing.T) ExposedStore
		}{db.name, func(t *testing.T) ExposedStore {
			st := db.db(t)()
			t.Cleanup(func() { st.Close() })
			ss := NewStoreSessions(st, nil)
			t.Cleanup(func() { ss.Close() })
			return ss
		}})
	}
	for _, tc := range stores {
		t.Run(tc.name, func(t *testing.T) {
			es := tc.open(t)
			ctx := context.Background()
			if _, ok, err := es.Load(ctx, "s"); ok || err != nil {
				t.Fatalf("load of an unknown session: %v %v", ok, err)
			}
			// Saves arriving out of order: the smaller set last.
			for _, names := range [][]string{{"b", "a"}, {"a", "b", "c"}, {"b"}} {
				if err := es.Save(ctx, "s", names); err != nil {
					t.Fatal(err)
				}
			}
			got, ok, err := es.Load(ctx, "s")
			if !ok || err != nil || !cmp.Equal(got, []string{"b", "a", "c"}) {
				t.Errorf("load = %v %v %v, want [b a c] (stored order kept, new ones appended, nothing dropped)", got, ok, err)
			}
			// Racing writers: each saves only its own name.
			var wg sync.WaitGroup
			for i := range 8 {
				wg.Go(func() {
					if err := es.Save(ctx, "race", []string{string(rune('a' + i))}); err != nil {
						t.Error(err)
					}
				})
			}
			wg.Wait()
			got, _, _ = es.Load(ctx, "race")
			sort.Strings(got)
			if diff := cmp.Diff([]string{"a", "b", "c", "d", "e", "f", "g", "h"}, got); diff != "" {
				t.Errorf("racing saves lost names (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSharedSessionKey connects three clients under one session name, two
// in search mode and one in call mode: what any of them finds becomes
// every one's, and the store keeps all of it.
func TestSharedSessionKey(t *testing.T) {
	mem := NewMemoryStore()
	g := startGateway(t, []ServerConfig{testServer("alpha"), testServer("beta")}, &Options{Mode: ModeSearch, Family: policy.General, Store: mem})
	url := serveHTTP(t, g, nil)
	const key = "shared"
	a := connect(t, url, nil, map[string]string{SessionHeader: key})
	changed := make(chan struct{}, 10)
	b := connect(t, url, &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
		changed <- struct{}{}
	}}, map[string]string{SessionHeader: key})
	c := connect(t, url, nil, map[string]string{SessionHeader: key, ModeHeader: "call"})

	foundA := findNames(t, a, "echo the text back")
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Error("no list_changed in a session when another one under its name found tools")
	}
	foundB := findNames(t, b, "sleep for milliseconds")
	var onlyB string
	for _, n := range foundB {
		if !slices.Contains(foundA, n) {
			onlyB = n
			break
		}
	}
	if len(foundA) == 0 || onlyB == "" {
		t.Fatalf("the queries found %v and %v: want something, and something new the second time", foundA, foundB)
	}
	want := union(foundA, foundB)
	for name, cs := range map[string]*mcp.ClientSession{"a": a, "b": b} {
		if diff := cmp.Diff(want, withoutHatch(listNames(t, cs))); diff != "" {
			t.Errorf("session %s lists (-want +got):\n%s", name, diff)
		}
	}
	args := map[string]map[string]any{"echo": {"text": "x"}, "sleep": {"ms": 1}, "reword": {"text": "x"}}
	for _, n := range []string{foundA[0], onlyB} {
		_, tool, _ := strings.Cut(n, "__")
		if text, isErr := callText(t, c, CallName, map[string]any{"name": n, "arguments": args[tool]}); isErr {
			t.Errorf("call mode session under the same name: call_capability(%s): %s", n, text)
		}
	}
	stored, _, _ := mem.Load(context.Background(), key)
	if diff := cmp.Diff(want, withoutHatch(stored)); diff != "" {
		t.Errorf("stored exposed tools (-want +got):\n%s", diff)
	}
	d := connect(t, url, nil, map[string]string{SessionHeader: key})
	if diff := cmp.Diff(want, withoutHatch(listNames(t, d))); diff != "" {
		t.Errorf("a reconnecting client lists (-want +got):\n%s", diff)
	}
}

// TestConcurrentFinds runs finds of one session at the same time: every
// tool found stays exposed, listed and stored.
func TestConcurrentFinds(t *testing.T) {
	mem := NewMemoryStore()
	g := startGateway(t, []ServerConfig{testServer("alpha"), testServer("beta")}, &Options{Mode: ModeSearch, Family: policy.General, Store: mem, FindK: 2})
	const key = "busy"
	cs := connect(t, serveHTTP(t, g, nil), nil, map[string]string{SessionHeader: key})
	queries := []string{"echo the text back", "process id", "sleep for milliseconds", "add a tool named grown",
		"give the echo tool another description", "never answer"}
	var (
		wg  sync.WaitGroup
		mu  sync.Mutex
		all []string
	)
	for _, q := range queries {
		wg.Go(func() {
			names, err := find(cs, q)
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			all = union(all, names)
			mu.Unlock()
		})
	}
	wg.Wait()
	if len(all) < 4 {
		t.Fatalf("the finds found only %v", all)
	}
	if diff := cmp.Diff(all, withoutHatch(listNames(t, cs))); diff != "" {
		t.Errorf("listed after concurrent finds (-found +listed):\n%s", diff)
	}
	stored, _, _ := mem.Load(context.Background(), key)
	if diff := cmp.Diff(all, withoutHatch(stored)); diff != "" {
		t.Errorf("stored after concurrent finds (-found +stored):\n%s", diff)
	}
}

// TestAnonymousSessions checks that sessions without a name leave nothing
// behind once they end: not in memory, not in the store, whether or not
// the client sent the initialized notification.
func TestAnonymousSessions(t *testing.T) {
	mem := NewMemoryStore()
	g := startGateway(t, []ServerConfig{testServer("alpha")}, &Options{Mode: ModeSearch, Family: policy.General, Store: mem})
	url := serveHTTP(t, g, nil)

	named := connect(t, url, nil, map[string]string{SessionHeader: "kept"})
	findNames(t, named, "echo the text back")
	for range 3 {
		cs := connect(t, url, nil, nil)
		if found := findNames(t, cs, "echo the text back"); len(found) == 0 {
			t.Fatal("find found nothing")
		}
		if text, isErr := callText(t, cs, "alpha__echo", map[string]any{"text": "x"}); isErr {
			t.Fatalf("anonymous session calling a found tool: %s", text)
		}
		cs.Close()
	}
	// A client that initializes and then only ends the session.
	id := rawInitialize(t, url, nil)
	req, _ := http.NewRequest(http.MethodDelete, url, nil)
	req.Header.Set("Mcp-Session-Id", id)
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()

	if !soon(func() bool { return len(g.liveSessions()) == 1 }) {
		var keys []string
		for _, s := range g.liveSessions() {
			keys = append(keys, s.key)
		}
		t.Errorf("live sessions after the anonymous ones ended: %v, want only kept", keys)
	}
	mem.mu.Lock()
	var keys []string
	for k := range mem.m {
		keys = append(keys, k)
	}
	mem.mu.Unlock()
	if diff := cmp.Diff([]string{"kept"}, keys); diff != "" {
		t.Errorf("stored sessions (-want +got):\n%s", diff)
	}
}

// TestAnonymousSessionsStore checks that a database gets no session row
// for an anonymous session, and that its trace still counts its finds.
func TestAnonymousSessionsStore(t *testing.T) {
	for _, db := range persistentStores {
		t.Run(db.name, func(t *testing.T) {
			st := db.db(t)()
			t.Cleanup(func() { st.Close() })
			ss := NewStoreSessions(st, nil)
			g := startGateway(t, []ServerConfig{testServer("alpha")}, &Options{Mode: ModeSearch, Family: policy.General, Store: ss, Trace: ss})
			url := serveHTTP(t, g, nil)
			cs := connect(t, url, nil, nil)
			findNames(t, cs, "echo the text back")
			findNames(t, cs, "process id")
			callText(t, cs, "alpha__pid", nil)
			id := cs.ID()
			named := connect(t, url, nil, map[string]string{SessionHeader: "kept"})
			findNames(t, named, "echo the text back")
			cs.Close()
			named.Close()
			ss.Close()

			ctx := context.Background()
			sessions, err := st.Sessions(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, s := range sessions {
				ids = append(ids, s.ID)
			}
			if diff := cmp.Diff([]string{"kept"}, ids); diff != "" {
				t.Errorf("stored sessions (-want +got):\n%s", diff)
			}
			recs, err := st.Traces(ctx, &store.TraceQuery{SessionID: id})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range recs {
				if r.Kind == trace.KindEnd {
					continue // when the end lands races the test's close (TestSessionEnds has it)
				}
				got = append(got, fmt.Sprintf("%s %d", r.Kind, r.FindCapabilityCalls))
			}
			if diff := cmp.Diff([]string{"select 0", "find 1", "find 2", "call 2"}, got); diff != "" {
				t.Errorf("trace of the anonymous session: kind and finds so far (-want +got):\n%s", diff)
			}
		})
	}
}

// rawInitialize sends an initialize request without a client library and
// returns the session ID; it sends no initialized notification.
func rawInitialize(t *testing.T, url string, headers map[string]string) string {
	t.Helper()
	res, body := post(t, url, headers, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("initialize: %s: %s", res.Status, body)
	}
	id := res.Header.Get("Mcp-Session-Id")
	if id == "" {
		t.Fatal("initialize: no Mcp-Session-Id")
	}
	return id
}

func post(t *testing.T, url string, headers map[string]string, body string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

// TestBadMode checks that an unknown mode is refused with a message that
// names it.
func TestBadMode(t *testing.T) {
	g := startGateway(t, []ServerConfig{testServer("alpha")}, nil)
	url := serveHTTP(t, g, nil)
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	tests := []struct {
		name    string
		query   string
		headers map[string]string
		status  int
		want    []string
	}{
		{"query", "?mode=bogus", nil, http.StatusBadRequest, []string{`unknown mode "bogus"`, "auto, search, call or all"}},
		{"header", "", map[string]string{ModeHeader: "nope"}, http.StatusBadRequest, []string{ModeHeader, `unknown mode "nope"`}},
		{"good", "?mode=call", nil, http.StatusOK, []string{`"result"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, body := post(t, url+tc.query, tc.headers, init)
			if res.StatusCode != tc.status {
				t.Errorf("status %s, want %d: %s", res.Status, tc.status, body)
			}
			for _, w := range tc.want {
				if !strings.Contains(body, w) {
					t.Errorf("answer %q does not contain %q", body, w)
				}
			}
		})
	}
}

// grow makes alpha add its tool grown (so its listing changes) and waits
// until the gateway's catalog has it.
func grow(g *Gateway, cs *mcp.ClientSession) error {
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "alpha__grow"})
	if err != nil {
		return err
	}
	if res.IsError {
		return fmt.Errorf("alpha__grow: %s", resultText(res))
	}
	if !soon(func() bool { return slices.Contains(g.Tools(), "alpha__grown") }) {
		return fmt.Errorf("alpha__grown never reached the catalog")
	}
	return nil
}

type refreshKey struct{}

// TestRefreshOrder runs a refresh that builds its catalog before an
// upstream changes and finishes after the refresh that saw the change: the
// older catalog must not replace the newer one.
func TestRefreshOrder(t *testing.T) {
	g := startGateway(t, []ServerConfig{testServer("alpha")}, &Options{Mode: ModeAll})
	cs := connect(t, serveHTTP(t, g, nil), nil, nil)
	built, release := make(chan struct{}), make(chan struct{})
	setHook(t, func(ctx context.Context, point, _ string) {
		if point == hookRefreshBuilt && ctx.Value(refreshKey{}) != nil {
			close(built)
			<-release
		}
	})
	done := make(chan error, 1)
	go func() { done <- g.refresh(context.WithValue(context.Background(), refreshKey{}, true)) }()
	<-built
	if err := grow(g, cs); err != nil {
		t.Fatal(err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(g.Tools(), "alpha__grown") {
		t.Errorf("a refresh built before alpha grew replaced the newer catalog: %v", g.Tools())
	}
	if !slices.Contains(listNames(t, cs), "alpha__grown") {
		t.Errorf("a refresh built before alpha grew left a session without alpha__grown: %v", listNames(t, cs))
	}
}

// TestSessionSetupRefresh changes the catalog while a session is being
// set up: the new session must get the change. (A client may open more
// than one session to connect, a version probe first: each one's setup
// changes the catalog again, and the session kept must show the last.)
func TestSessionSetupRefresh(t *testing.T) {
	g := startGateway(t, []ServerConfig{testServer("alpha")}, &Options{Mode: ModeAll})
	url := serveHTTP(t, g, nil)
	first := connect(t, url, nil, nil)
	var (
		mu   sync.Mutex
		last string
	)
	setHook(t, func(_ context.Context, point, session string) {
		if point != hookSessionSynced || session != "late" {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if err := reword(g, first, fmt.Sprintf("Echo the text, version %d.", len(last))); err != nil {
			t.Error(err)
		}
		last += "."
	})
	late := connect(t, url, nil, map[string]string{SessionHeader: "late"})
	mu.Lock()
	want := fmt.Sprintf("Echo the text, version %d.", len(last)-1)
	mu.Unlock()
	var got string
	if !soon(func() bool { got = description(t, late, "alpha__echo"); return got == want }) {
		t.Errorf("a session set up while the catalog changed lists alpha__echo as %q, want %q", got, want)
	}
}

// reword gives alpha's echo the description desc and waits until the
// gateway's catalog has it.
func reword(g *Gateway, cs *mcp.ClientSession, desc string) error {
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "alpha__reword", Arguments: map[string]any{"text": desc}})
	if err != nil {
		return err
	}
	if res.IsError {
		return fmt.Errorf("alpha__reword: %s", resultText(res))
	}
	if !soon(func() bool {
		e, ok := g.catalog().tools["alpha__echo"]
		return ok && e.tool.Description == desc
	}) {
		return fmt.Errorf("the description %q never reached the catalog", desc)
	}
	return nil
}

// description returns how cs lists the tool name.
func description(t *testing.T, cs *mcp.ClientSession, name string) string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range res.Tools {
		if tool.Name == name {
			return tool.Description
		}
	}
	return ""
}

// TestFindRefresh changes a found tool's definition while find_capability
// runs: the find must not bring the old definition back.
func TestFindRefresh(t *testing.T) {
	g := startGateway(t, []ServerConfig{testServer("alpha")}, &Options{Mode: ModeSearch, Family: policy.General})
	url := serveHTTP(t, g, nil)
	all := connect(t, url, nil, map[string]string{ModeHeader: "all"})
	cs := connect(t, url, nil, map[string]string{SessionHeader: "finder"})
	if found := findNames(t, cs, "echo the text back"); !slices.Contains(found, "alpha__echo") {
		t.Fatalf("find found %v", found)
	}
	const desc = "Repeat the words."
	var once sync.Once
	setHook(t, func(_ context.Context, point, session string) {
		if point != hookFindSearched || session != "finder" {
			return
		}
		once.Do(func() {
			res, err := all.CallTool(context.Background(), &mcp.CallToolParams{Name: "alpha__reword", Arguments: map[string]any{"text": desc}})
			if err != nil || res.IsError {
				t.Errorf("alpha__reword: %v %v", err, res)
				return
			}
			// Wait until the refresh listed the new echo in this session.
			if !soon(func() bool {
				cat := g.catalog()
				e, ok := cat.tools["alpha__echo"]
				if !ok || e.tool.Description != desc {
					return false
				}
				for _, s := range sessionsNamed(g, "finder") {
					s.mu.Lock()
					k := s.listed["alpha__echo"]
					s.mu.Unlock()
					if k != e.key {
						return false
					}
				}
				return true
			}) {
				t.Error("the reworded echo never reached the session")
			}
		})
	})
	if found := findNames(t, cs, "sleep for milliseconds"); !slices.Contains(found, "alpha__sleep") {
		t.Fatalf("find found %v", found)
	}
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range res.Tools {
		if tool.Name == "alpha__echo" && tool.Description != desc {
			t.Errorf("after a find that raced a refresh, alpha__echo is described %q, want %q", tool.Description, desc)
		}
	}
}
