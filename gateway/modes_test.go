package gateway

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/capbroker/capbroker/internal/testenv"
	"github.com/capbroker/capbroker/policy"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// findNames calls find_capability and returns the names it found with
// confidence: those that join the session's list.
func findNames(t *testing.T, cs *mcp.ClientSession, query string) []string {
	t.Helper()
	text, isErr := callText(t, cs, policy.HatchName, map[string]any{"query": query})
	if isErr {
		t.Fatalf("find_capability(%q): %s", query, text)
	}
	var out struct {
		Matches []struct{ Name, Confidence string } `json:"matches"`
	}
	if err := json.Unmarshal([]byte(text), &out); err != nil {
		t.Fatalf("find_capability output %q: %v", text, err)
	}
	var names []string
	for _, m := range out.Matches {
		if m.Confidence != policy.Low { // the matches that join the session's list
			names = append(names, m.Name)
		}
	}
	return names
}

func TestModes(t *testing.T) {
	servers := []ServerConfig{testServer("alpha"), testServer("beta")}
	g := startGateway(t, servers, &Options{Mode: ModeSearch, Family: policy.General})
	url := serveHTTP(t, g, nil)

	t.Run("all", func(t *testing.T) {
		cs := connect(t, url, nil, map[string]string{ModeHeader: "all"})
		got := listNames(t, cs)
		// delete_all is irreversible and not allowed: held back.
		want := []string{"alpha__ask", "alpha__echo", "alpha__grow", "alpha__hang", "alpha__pid", "alpha__reword", "alpha__sleep",
			"beta__ask", "beta__echo", "beta__grow", "beta__hang", "beta__pid", "beta__reword", "beta__sleep"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("tools (-want +got):\n%s", diff)
		}
	})

	t.Run("search", func(t *testing.T) {
		changed := make(chan struct{}, 10)
		cs := connect(t, url, &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			changed <- struct{}{}
		}}, map[string]string{SessionHeader: "search-1"})
		if diff := cmp.Diff([]string{policy.HatchName}, listNames(t, cs)); diff != "" {
			t.Fatalf("initial tools (-want +got):\n%s", diff)
		}
		text, isErr := callText(t, cs, "beta__ecoh", map[string]any{"text": "x"})
		if !isErr || !strings.Contains(text, `did you mean "beta__echo"`) {
			t.Fatalf("calling a misspelt tool: isError=%v %q, want an error suggesting beta__echo", isErr, text)
		}
		found := findNames(t, cs, "echo the text back")
		if !slices.Contains(found, "beta__echo") {
			t.Fatalf("find found %v, want beta__echo among them", found)
		}
		select {
		case <-changed:
		case <-time.After(10 * time.Second):
			t.Fatal("no notifications/tools/list_changed after find_capability")
		}
		if got := listNames(t, cs); !slices.Contains(got, "beta__echo") || !slices.Contains(got, policy.HatchName) {
			t.Fatalf("tools after find: %v", got)
		}
		if text, isErr := callText(t, cs, "beta__echo", map[string]any{"text": "x"}); isErr || text != "beta: x" {
			t.Fatalf("beta__echo: isError=%v %q", isErr, text)
		}

		// The same session name gets the same tools back.
		again := connect(t, url, nil, map[string]string{SessionHeader: "search-1"})
		if diff := cmp.Diff(listNames(t, cs), listNames(t, again)); diff != "" {
			t.Errorf("a reconnecting session got other tools (-before +after):\n%s", diff)
		}
		other := connect(t, url, nil, map[string]string{SessionHeader: "search-2"})
		if diff := cmp.Diff([]string{policy.HatchName}, listNames(t, other)); diff != "" {
			t.Errorf("another session saw the first one's finds (-want +got):\n%s", diff)
		}
	})

	t.Run("call", func(t *testing.T) {
		cs := connect(t, url, nil, map[string]string{ModeHeader: "call"})
		if diff := cmp.Diff([]string{CallName, policy.HatchName}, listNames(t, cs)); diff != "" {
			t.Fatalf("initial tools (-want +got):\n%s", diff)
		}
		text, isErr := callText(t, cs, CallName, map[string]any{"name": "alpha__ecoh", "arguments": map[string]any{"text": "y"}})
		if !isErr || !strings.Contains(text, `did you mean "alpha__echo"`) {
			t.Fatalf("call_capability of a misspelt name: isError=%v %q", isErr, text)
		}
		if found := findNames(t, cs, "echo text"); !slices.Contains(found, "alpha__echo") {
			t.Fatalf("find found %v", found)
		}
		text, isErr = callText(t, cs, CallName, map[string]any{"name": "alpha__echo", "arguments": map[string]any{"text": "y"}})
		if isErr || text != "alpha: y" {
			t.Fatalf("call_capability: isError=%v %q", isErr, text)
		}
		if diff := cmp.Diff([]string{CallName, policy.HatchName}, listNames(t, cs)); diff != "" {
			t.Errorf("call mode changed the tool list (-want +got):\n%s", diff)
		}
	})
}

// TestAutoMode checks the default mode with two Go SDK clients: one that
// refreshes its tool list on list_changed and calls a found tool by name,
// and one that ignores list_changed (it keeps the list it got at the
// start) and calls the found tool through call_capability.
func TestAutoMode(t *testing.T) {
	g := startGateway(t, []ServerConfig{testServer("alpha"), testServer("beta")}, &Options{Family: policy.General})
	url := serveHTTP(t, g, nil)
	start := []string{CallName, policy.HatchName}

	t.Run("honors list_changed", func(t *testing.T) {
		var (
			mu    sync.Mutex
			tools []string
		)
		refreshed := make(chan struct{}, 10)
		var cs *mcp.ClientSession
		cs = connect(t, url, &mcp.ClientOptions{ToolListChangedHandler: func(ctx context.Context, _ *mcp.ToolListChangedRequest) {
			// What a client that honors list_changed does: list again.
			var names []string
			for tool, err := range cs.Tools(ctx, nil) {
				if err != nil {
					return
				}
				names = append(names, tool.Name)
			}
			mu.Lock()
			tools = names
			mu.Unlock()
			refreshed <- struct{}{}
		}}, map[string]string{SessionHeader: "auto-honors"})
		if diff := cmp.Diff(start, listNames(t, cs)); diff != "" {
			t.Fatalf("initial tools (-want +got):\n%s", diff)
		}
		if found := findNames(t, cs, "echo the text back"); !slices.Contains(found, "beta__echo") {
			t.Fatalf("find found %v, want beta__echo", found)
		}
		for {
			select {
			case <-refreshed:
			case <-time.After(10 * time.Second):
				t.Fatal("no notifications/tools/list_changed after find_capability in auto mode")
			}
			mu.Lock()
			got := slices.Clone(tools)
			mu.Unlock()
			if slices.Contains(got, "beta__echo") {
				if !slices.Contains(got, CallName) || !slices.Contains(got, policy.HatchName) {
					t.Fatalf("refreshed tools %v lack the hatch or call_capability", got)
				}
				break
			}
		}
		if text, isErr := callText(t, cs, "beta__echo", map[string]any{"text": "native"}); isErr || text != "beta: native" {
			t.Fatalf("beta__echo by name: isError=%v %q", isErr, text)
		}
	})

	t.Run("ignores list_changed", func(t *testing.T) {
		cs := connect(t, url, nil, map[string]string{SessionHeader: "auto-ignores"})
		listed := listNames(t, cs) // listed once, never refreshed
		if diff := cmp.Diff(start, listed); diff != "" {
			t.Fatalf("initial tools (-want +got):\n%s", diff)
		}
		text, isErr := callText(t, cs, CallName, map[string]any{"name": "qqq_zzz", "arguments": map[string]any{"text": "y"}})
		if !isErr || !strings.Contains(text, "find_capability") {
			t.Fatalf("call_capability of no tool: isError=%v %q, want an error naming find_capability", isErr, text)
		}
		text, _ = callText(t, cs, policy.HatchName, map[string]any{"query": "echo the text back"})
		if !strings.Contains(text, "alpha__echo") || !strings.Contains(text, "call_capability") {
			t.Fatalf("find_capability in auto mode: %q, want alpha__echo and how to call it through call_capability", text)
		}
		// The found tool is not in the list this client keeps; it calls it
		// through call_capability, the tool it has.
		if slices.Contains(listed, "alpha__echo") {
			t.Fatal("the kept list already had alpha__echo")
		}
		text, isErr = callText(t, cs, CallName, map[string]any{"name": "alpha__echo", "arguments": map[string]any{"text": "through"}})
		if isErr || text != "alpha: through" {
			t.Fatalf("call_capability alpha__echo: isError=%v %q", isErr, text)
		}
		// call_capability reaches exposed tools only, never the hatch.
		text, isErr = callText(t, cs, CallName, map[string]any{"name": CallName, "arguments": map[string]any{}})
		if !isErr {
			t.Fatalf("call_capability of itself: %q, want an error", text)
		}
	})
}

func TestTaskAndTrace(t *testing.T) {
	var trace testenv.Buffer
	g := startGateway(t, []ServerConfig{testServer("alpha")}, &Options{Mode: ModeSearch, Task: "echo the text back", Trace: NewJSONLTracer(&trace)})
	cs := connect(t, serveHTTP(t, g, nil), nil, map[string]string{SessionHeader: "traced"})
	got := listNames(t, cs)
	if !slices.Contains(got, "alpha__echo") || !slices.Contains(got, policy.HatchName) {
		t.Errorf("with a task, tools = %v, want alpha__echo and the hatch", got)
	}
	findNames(t, cs, "process id")
	callText(t, cs, "alpha__pid", nil)
	var kinds []string
	for _, line := range strings.Split(strings.TrimSpace(trace.String()), "\n") {
		var e Event
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("trace line %q: %v", line, err)
		}
		if e.Session != "traced" {
			t.Errorf("event of session %q", e.Session)
		}
		switch e.Kind {
		case "select", "find":
			if e.TokensFull == 0 || e.TokensExposed == 0 {
				t.Errorf("%s event tokens: exposed %d of %d", e.Kind, e.TokensExposed, e.TokensFull)
			}
		case "call":
			if e.Tool != "alpha__pid" || e.Upstream != "alpha" || e.Outcome != "ok" {
				t.Errorf("call event %+v", e)
			}
		}
		kinds = append(kinds, e.Kind)
	}
	if diff := cmp.Diff([]string{"select", "find", "call"}, kinds); diff != "" {
		t.Errorf("traced events (-want +got):\n%s", diff)
	}
}

func TestIrreversible(t *testing.T) {
	confirmed := make(chan string, 1)
	elicit := func(answer string) *mcp.ClientOptions {
		return &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			confirmed <- r.Params.Message
			if answer == "accept" {
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}, nil
			}
			return &mcp.ElicitResult{Action: answer}, nil
		}}
	}
	srv := testServer("db")
	srv.AllowIrreversible = true
	tests := []struct {
		name     string
		opts     *mcp.ClientOptions
		unasked  bool
		wantErr  bool
		wantText string
		asked    bool
	}{
		{"accepted", elicit("accept"), false, false, "deleted", true},
		{"declined", elicit("decline"), false, true, "did not approve", true},
		{"no elicitation, refused", nil, false, true, "cannot ask the user", false},
		{"no elicitation, policy allows", nil, true, false, "deleted", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := startGateway(t, []ServerConfig{srv}, &Options{Mode: ModeAll, ConfirmUnasked: tc.unasked})
			cs := connect(t, serveHTTP(t, g, nil), tc.opts, nil)
			text, isErr := callText(t, cs, "db__delete_all", nil)
			if isErr != tc.wantErr || !strings.Contains(text, tc.wantText) {
				t.Errorf("isError=%v %q, want isError=%v containing %q", isErr, text, tc.wantErr, tc.wantText)
			}
			select {
			case msg := <-confirmed:
				if !tc.asked {
					t.Errorf("asked unexpectedly: %q", msg)
				} else if !strings.Contains(msg, "cannot be undone") {
					t.Errorf("question %q", msg)
				}
			default:
				if tc.asked {
					t.Error("the user was not asked")
				}
			}
		})
	}
	t.Run("held back", func(t *testing.T) {
		g := startGateway(t, []ServerConfig{testServer("db")}, &Options{Mode: ModeAll})
		if slices.Contains(g.Tools(), "db__delete_all") {
			t.Errorf("irreversible tool listed without allowIrreversible: %v", g.Tools())
		}
		var held bool
		for _, w := range g.Warnings() {
			held = held || (w.Name == "delete_all" && strings.Contains(w.Message, "irreversible"))
		}
		if !held {
			t.Errorf("no warning about the held tool: %v", g.Warnings())
		}
	})
}

func TestNamespaceCollisions(t *testing.T) {
	g := startGateway(t, []ServerConfig{testServer("a"), testServer("b")}, &Options{Mode: ModeAll, Namespace: NamespaceCollisions})
	if diff := cmp.Diff([]string{"a__ask", "a__echo", "a__grow", "a__hang", "a__pid", "a__reword", "a__sleep",
		"b__ask", "b__echo", "b__grow", "b__hang", "b__pid", "b__reword", "b__sleep"}, g.Tools()); diff != "" {
		t.Errorf("colliding names (-want +got):\n%s", diff)
	}
	var reported int
	for _, w := range g.Warnings() {
		if strings.Contains(w.Message, "renamed to") {
			reported++
		}
	}
	if reported != 14 {
		t.Errorf("%d renames reported, want 14: %v", reported, g.Warnings())
	}
	g1 := startGateway(t, []ServerConfig{testServer("solo")}, &Options{Mode: ModeAll, Namespace: NamespaceCollisions})
	if diff := cmp.Diff([]string{"ask", "echo", "grow", "hang", "pid", "reword", "sleep"}, g1.Tools()); diff != "" {
		t.Errorf("without collisions (-want +got):\n%s", diff)
	}
}

// TestUpstreamListChanged checks that a tool an upstream adds at run time
// reaches a connected client, with list_changed.
func TestUpstreamListChanged(t *testing.T) {
	g := startGateway(t, []ServerConfig{testServer("a")}, &Options{Mode: ModeAll})
	changed := make(chan struct{}, 10)
	cs := connect(t, serveHTTP(t, g, nil), &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
		changed <- struct{}{}
	}}, nil)
	if slices.Contains(listNames(t, cs), "a__grown") {
		t.Fatal("a__grown listed before it exists")
	}
	if text, isErr := callText(t, cs, "a__grow", nil); isErr {
		t.Fatal(text)
	}
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("no list_changed after the upstream added a tool")
	}
	// The notification may come before the catalog holds the tool if the
	// upstream sent two; wait for it.
	for i := 0; !slices.Contains(listNames(t, cs), "a__grown"); i++ {
		if i == 100 {
			t.Fatalf("a__grown never listed: %v", listNames(t, cs))
		}
		time.Sleep(50 * time.Millisecond)
	}
	if text, isErr := callText(t, cs, "a__grown", nil); isErr || text != "grown" {
		t.Errorf("a__grown: isError=%v %q", isErr, text)
	}
}

// TestElicitationRouting: an upstream's question goes to the client whose
// call is in flight; with calls from two clients in flight, which one it
// belongs to is unknown, and the gateway refuses it rather than ask the
// wrong user.
func TestElicitationRouting(t *testing.T) {
	g := startGateway(t, []ServerConfig{testServer("srv")}, &Options{Mode: ModeAll})
	url := serveHTTP(t, g, nil)
	client := func(name string, asked chan<- string) *mcp.ClientSession {
		return connect(t, url, &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked <- name + ": " + r.Params.Message
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"ok": true}}, nil
		}}, nil)
	}
	asked := make(chan string, 4)
	a, b := client("a", asked), client("b", asked)

	// One client's call in flight: its client is asked.
	if text, isErr := callText(t, b, "srv__ask", map[string]any{"text": "proceed?"}); isErr || text != "answer: accept" {
		t.Fatalf("ask alone: isError=%v %q", isErr, text)
	}
	if got := <-asked; got != "b: proceed?" {
		t.Errorf("asked %q, want b", got)
	}

	// Client a has a call in flight on the same upstream: b's question
	// could be either's.
	done := make(chan struct{})
	go func() {
		defer close(done)
		callText(t, a, "srv__sleep", map[string]any{"ms": 3000})
	}()
	for c, _ := g.upstream("srv").route(nil); c == nil; c, _ = g.upstream("srv").route(nil) {
		time.Sleep(10 * time.Millisecond)
	}
	text, _ := callText(t, b, "srv__ask", map[string]any{"text": "again?"})
	if !strings.Contains(text, "calls from 2 client sessions") || !strings.Contains(text, "refuses rather than ask the wrong client") {
		t.Errorf("ask with two sessions in flight: %q, want the gateway's refusal", text)
	}
	select {
	case got := <-asked:
		t.Errorf("a client was asked while the owner was unknown: %q", got)
	default:
	}
	<-done
}
