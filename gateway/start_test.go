package gateway

import (
	"context"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/capbroker/capbroker/policy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestInitializeDoesNotWait: with three upstreams that hang (they never
// answer; the gateway gives each the 30s start timeout), the gateway
// answers initialize and tools/list long before the hang, serves the
// upstream that is up, and adds an upstream that comes late as it comes:
// list_changed for clients that follow it, and find_capability plus
// call_capability reach it for clients that ignore list_changed (Claude
// Code). (The old gateway answered nothing until every upstream had
// connected or timed out: 30s here.)
func TestInitializeDoesNotWait(t *testing.T) {
	const hang = 30 * time.Second // the start timeout the hanging upstreams use up
	delayed := func(name, delay string) ServerConfig {
		c := testServer(name)
		c.Env[testServerEnv+"_DELAY"] = delay
		return c
	}
	servers := []ServerConfig{
		delayed("hang1", "1h"), delayed("hang2", "1h"), delayed("hang3", "1h"),
		testServer("alpha"),
		delayed("late", "2s"),
	}
	g, err := New(&Config{Servers: servers}, &Options{Family: policy.General, StartTimeout: hang, StartWait: 300 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(newTestWriter(t), &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { cancel(); g.Close() })
	begin := time.Now()
	if err := g.Start(ctx); err != nil {
		t.Fatal(err)
	}
	url := serveHTTP(t, g, nil)

	started := time.Since(begin)
	changed := make(chan struct{}, 10)
	begin = time.Now()
	all := connect(t, url, &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
		changed <- struct{}{}
	}}, map[string]string{ModeHeader: "all"})
	initialized := time.Since(begin)
	search := connect(t, url, nil, map[string]string{ModeHeader: "search"})
	call := connect(t, url, nil, map[string]string{ModeHeader: "call"})
	listed := listNames(t, call)
	took := time.Since(begin)
	if started*10 > hang {
		t.Errorf("Start took %s: more than 1/10 of the %s the hanging upstreams take", started, hang)
	}
	t.Logf("Start returned after %s; initialize answered after %s, three sessions and tools/list after %s (upstreams hang %s)", started, initialized, took, hang)
	// Generous bounds for a loaded machine; unloaded, each takes a few
	// milliseconds.
	if initialized*10 > hang {
		t.Errorf("initialize took %s: more than 1/10 of the %s the hanging upstreams take", initialized, hang)
	}
	if took*5 > hang {
		t.Errorf("three sessions and tools/list took %s: more than 1/5 of the %s the hanging upstreams take", took, hang)
	}
	if !slices.Contains(listed, policy.HatchName) || !slices.Contains(listed, CallName) {
		t.Errorf("call mode lists %v", listed)
	}
	// alpha starts at once, but on a loaded machine maybe not within
	// StartWait.
	eventually(t, "alpha is in the catalog", func() bool { return slices.Contains(g.Tools(), "alpha__echo") })
	if found := findNames(t, call, "echo the text back"); !slices.Contains(found, "alpha__echo") {
		t.Fatalf("find_capability before the late upstream: %v", found)
	}
	if text, isErr := callText(t, call, CallName, map[string]any{"name": "alpha__echo", "arguments": map[string]any{"text": "hi"}}); isErr || text != "alpha: hi" {
		t.Fatalf("call_capability on the upstream that is up: %v %q", isErr, text)
	}
	for _, st := range g.Status() {
		if st.Name != "alpha" && st.Connected {
			t.Errorf("%s connected before it could have: %+v", st.Name, st)
		}
	}

	// The late upstream comes: a client that ignores list_changed reaches
	// it through find_capability and call_capability.
	eventually(t, "the late upstream is in the catalog", func() bool { return slices.Contains(g.Tools(), "late__echo") })
	if found := findNames(t, call, "echo the text back"); !slices.Contains(found, "late__echo") {
		t.Fatalf("find_capability after the late upstream came: %v", found)
	}
	if text, isErr := callText(t, call, CallName, map[string]any{"name": "late__echo", "arguments": map[string]any{"text": "hi"}}); isErr || text != "late: hi" {
		t.Fatalf("call_capability on the late upstream: %v %q", isErr, text)
	}
	// A client that follows list_changed is told.
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Error("no list_changed when the late upstream came")
	}
	if names := listNames(t, all); !slices.Contains(names, "late__echo") || !slices.Contains(names, "alpha__echo") {
		t.Errorf("all mode lists %v after the late upstream came", names)
	}
	if found := findNames(t, search, "echo the text back"); !slices.Contains(found, "late__echo") {
		t.Fatalf("find_capability in search mode: %v", found)
	}
	if !slices.Contains(listNames(t, search), "late__echo") {
		t.Errorf("search mode does not list what it found on the late upstream")
	}
	if text, isErr := callText(t, search, "late__echo", map[string]any{"text": "yo"}); isErr || text != "late: yo" {
		t.Errorf("calling the late upstream's tool: %v %q", isErr, text)
	}
}

// TestLateFloor: a session that starts while the upstream offering its
// floor is still starting gets the floor added when the upstream comes
// (with list_changed), not a selection frozen on an empty catalog.
func TestLateFloor(t *testing.T) {
	late := testServer("late")
	late.Env[testServerEnv+"_DELAY"] = "1s"
	g, err := New(&Config{Servers: []ServerConfig{late}}, &Options{Family: policy.General, Task: "echo the text back",
		StartWait: -1, Logger: slog.New(slog.NewTextHandler(newTestWriter(t), &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { cancel(); g.Close() })
	if err := g.Start(ctx); err != nil {
		t.Fatal(err)
	}
	url := serveHTTP(t, g, nil)
	changed := make(chan struct{}, 10)
	cs := connect(t, url, &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
		changed <- struct{}{}
	}}, nil)
	if names := listNames(t, cs); slices.Contains(names, "late__echo") {
		t.Fatalf("listed before the upstream started: %v", names)
	}
	select {
	case <-changed:
	case <-time.After(20 * time.Second):
		t.Fatal("no list_changed when the upstream came")
	}
	eventually(t, "the task's tool is listed", func() bool { return slices.Contains(listNames(t, cs), "late__echo") })
}
