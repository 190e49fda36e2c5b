package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/capbroker/capbroker/policy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// npmServers configures the three reference npm servers over stdio: the
// everything server, the filesystem server over dir, and the memory server
// storing its graph in dir.
func npmServers(t *testing.T, dir string) []ServerConfig {
	d := deps{t}
	return []ServerConfig{
		{Name: "everything", Command: d.npmBin("mcp-server-everything")},
		{Name: "filesystem", Command: d.npmBin("mcp-server-filesystem"), Args: []string{dir}},
		{Name: "memory", Command: d.npmBin("mcp-server-memory"), Env: map[string]string{"MEMORY_FILE_PATH": filepath.Join(dir, "memory.jsonl")}},
	}
}

// TestEndToEndGoClient drives the gateway over the real npm servers with
// the Go SDK client in search and call modes.
func TestEndToEndGoClient(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three Node.js servers")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("gateway notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	g := startGateway(t, npmServers(t, dir), &Options{Mode: ModeSearch, StartTimeout: time.Minute})
	url := serveHTTP(t, g, nil)
	for _, st := range g.Status() {
		if !st.Connected || st.Tools == 0 {
			t.Fatalf("upstream not ready: %+v", st)
		}
	}
	// The coding floor as the catalog has it: filesystem's list_directory
	// and read_text_file (read_file says it is deprecated for it; write_file
	// and edit_file are irreversible, held back).
	floor := []string{"filesystem__list_directory", "filesystem__read_text_file"}

	t.Run("search", func(t *testing.T) {
		changed := make(chan struct{}, 10)
		cs := connect(t, url, &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			changed <- struct{}{}
		}}, nil)
		got := listNames(t, cs)
		want := append(slices.Clone(floor), policy.HatchName)
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("initial tools %v, want floor + hatch %v", got, want)
		}
		if text, _ := callText(t, cs, "filesystem__read_text_file", map[string]any{"path": filepath.Join(dir, "notes.txt")}); !strings.Contains(text, "gateway notes") {
			t.Fatalf("floor tool read_text_file: %q", text)
		}
		found := findNames(t, cs, "create entities in the knowledge graph memory")
		if !slices.Contains(found, "memory__create_entities") {
			t.Fatalf("find found %v, want memory__create_entities", found)
		}
		select {
		case <-changed:
		case <-time.After(10 * time.Second):
			t.Fatal("no list_changed after find_capability")
		}
		if got := listNames(t, cs); !slices.Contains(got, "memory__create_entities") {
			t.Fatalf("after find, tools = %v", got)
		}
		text, isErr := callText(t, cs, "memory__create_entities", map[string]any{"entities": []any{
			map[string]any{"name": "capbroker", "entityType": "project", "observations": []string{"fronts MCP servers"}},
		}})
		if isErr || !strings.Contains(text, "capbroker") {
			t.Fatalf("create_entities: isError=%v %q", isErr, text)
		}
		// Right upstream: the memory server wrote its graph file.
		data, err := os.ReadFile(filepath.Join(dir, "memory.jsonl"))
		if err != nil || !bytes.Contains(data, []byte("fronts MCP servers")) {
			t.Fatalf("the memory server's file: %q, %v", data, err)
		}

		found = findNames(t, cs, "echo a message back")
		if !slices.Contains(found, "everything__echo") {
			t.Fatalf("find found %v, want everything__echo", found)
		}
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "everything__echo", Arguments: map[string]any{"message": "hello"}})
		if err != nil || res.IsError || !strings.Contains(resultText(res), "hello") {
			t.Fatalf("echo: %v %+v", err, res)
		}
	})

	t.Run("call", func(t *testing.T) {
		cs := connect(t, url, nil, map[string]string{ModeHeader: "call"})
		got := listNames(t, cs)
		want := append(slices.Clone(floor), policy.HatchName, CallName)
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("initial tools %v, want %v", got, want)
		}
		found := findNames(t, cs, "add two numbers sum")
		if !slices.Contains(found, "everything__get-sum") {
			t.Fatalf("find found %v, want everything__get-sum", found)
		}
		text, isErr := callText(t, cs, CallName, map[string]any{"name": "everything__get-sum", "arguments": map[string]any{"a": 2, "b": 40}})
		if isErr || !strings.Contains(text, "42") {
			t.Fatalf("call_capability get-sum: isError=%v %q", isErr, text)
		}
	})
}

// inspector runs the MCP inspector CLI against url and decodes its JSON.
func inspector(t *testing.T, url, session string, args ...string) map[string]any {
	t.Helper()
	d := deps{t}
	node := d.node()
	cli := d.path("conformance/node_modules/@modelcontextprotocol/inspector-cli/build/index.js", "MCP inspector CLI (npm @modelcontextprotocol/inspector-cli)")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	full := append([]string{cli, url, "--transport", "http", "--header", SessionHeader + ": " + session}, args...)
	cmd := exec.CommandContext(ctx, node, full...)
	cmd.Dir = filepath.Dir(cli) // it reads ../package.json relative to the working directory
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("inspector %v: %v\n%s%s", args, err, stdout.String(), stderr.String())
	}
	var out map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("inspector %v printed %q: %v", args, stdout.String(), err)
	}
	return out
}

func toolNames(out map[string]any) []string {
	var names []string
	tools, _ := out["tools"].([]any)
	for _, x := range tools {
		if m, ok := x.(map[string]any); ok {
			names = append(names, m["name"].(string))
		}
	}
	slices.Sort(names)
	return names
}

// TestEndToEndInspector drives the gateway with the MCP inspector CLI:
// each invocation is a new connection under the same session name, so
// what find_capability exposes is still there on the next one.
func TestEndToEndInspector(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three Node.js servers")
	}
	dir := t.TempDir()
	g := startGateway(t, npmServers(t, dir), &Options{Mode: ModeSearch, StartTimeout: time.Minute})
	url := serveHTTP(t, g, nil)

	got := toolNames(inspector(t, url, "insp", "--method", "tools/list"))
	want := []string{"filesystem__list_directory", "filesystem__read_text_file", policy.HatchName}
	if !slices.Equal(got, want) {
		t.Fatalf("tools/list = %v, want %v", got, want)
	}
	out := inspector(t, url, "insp", "--method", "tools/call", "--tool-name", policy.HatchName, "--tool-arg", "query=echo a message back")
	if !strings.Contains(mustJSON(out), "everything__echo") {
		t.Fatalf("find_capability: %s", mustJSON(out))
	}
	got = toolNames(inspector(t, url, "insp", "--method", "tools/list"))
	if !slices.Contains(got, "everything__echo") {
		t.Fatalf("tools/list after find = %v", got)
	}
	out = inspector(t, url, "insp", "--method", "tools/call", "--tool-name", "everything__echo", "--tool-arg", "message=from the inspector")
	if !strings.Contains(mustJSON(out), "Echo: from the inspector") {
		t.Fatalf("echo: %s", mustJSON(out))
	}
	// Another session starts from the floor.
	if got := toolNames(inspector(t, url, "other", "--method", "tools/list")); !slices.Equal(got, want) {
		t.Errorf("a new session's tools/list = %v, want %v", got, want)
	}
}

// TestEndToEndAuto drives the default mode over the real npm servers with
// clients of both kinds: the MCP inspector CLI (the TypeScript SDK; one
// connection per command, so it never acts on list_changed) and a Go SDK
// client that keeps its first tool list both call a found tool through
// call_capability; a Go SDK client that refreshes on list_changed calls it
// by name.
func TestEndToEndAuto(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three Node.js servers")
	}
	dir := t.TempDir()
	g := startGateway(t, npmServers(t, dir), &Options{StartTimeout: time.Minute})
	url := serveHTTP(t, g, nil)
	start := []string{CallName, "filesystem__list_directory", "filesystem__read_text_file", policy.HatchName}
	slices.Sort(start)

	t.Run("inspector, call_capability", func(t *testing.T) {
		if got := toolNames(inspector(t, url, "auto-insp", "--method", "tools/list")); !slices.Equal(got, start) {
			t.Fatalf("tools/list = %v, want %v", got, start)
		}
		out := inspector(t, url, "auto-insp", "--method", "tools/call", "--tool-name", policy.HatchName, "--tool-arg", "query=add two numbers sum")
		if !strings.Contains(mustJSON(out), "everything__get-sum") {
			t.Fatalf("find_capability: %s", mustJSON(out))
		}
		out = inspector(t, url, "auto-insp", "--method", "tools/call", "--tool-name", CallName,
			"--tool-arg", "name=everything__get-sum", "--tool-arg", `arguments={"a": 2, "b": 40}`)
		if s := mustJSON(out); !strings.Contains(s, "42") || strings.Contains(s, `"isError":true`) {
			t.Fatalf("call_capability everything__get-sum: %s", s)
		}
	})

	t.Run("Go client ignoring list_changed", func(t *testing.T) {
		cs := connect(t, url, nil, nil)
		listed := listNames(t, cs)
		slices.Sort(listed)
		if !slices.Equal(listed, start) {
			t.Fatalf("tools = %v, want %v", listed, start)
		}
		if found := findNames(t, cs, "echo a message back"); !slices.Contains(found, "everything__echo") {
			t.Fatalf("find found %v, want everything__echo", found)
		}
		text, isErr := callText(t, cs, CallName, map[string]any{"name": "everything__echo", "arguments": map[string]any{"message": "kept list"}})
		if isErr || !strings.Contains(text, "Echo: kept list") {
			t.Fatalf("call_capability everything__echo: isError=%v %q", isErr, text)
		}
	})

	t.Run("Go client honoring list_changed", func(t *testing.T) {
		changed := make(chan struct{}, 10)
		cs := connect(t, url, &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			changed <- struct{}{}
		}}, nil)
		if found := findNames(t, cs, "create entities in the knowledge graph memory"); !slices.Contains(found, "memory__create_entities") {
			t.Fatalf("find found %v, want memory__create_entities", found)
		}
		select {
		case <-changed:
		case <-time.After(10 * time.Second):
			t.Fatal("no list_changed after find_capability")
		}
		if got := listNames(t, cs); !slices.Contains(got, "memory__create_entities") || !slices.Contains(got, CallName) {
			t.Fatalf("refreshed tools = %v", got)
		}
		text, isErr := callText(t, cs, "memory__create_entities", map[string]any{"entities": []any{
			map[string]any{"name": "auto", "entityType": "mode", "observations": []string{"called by name"}},
		}})
		if isErr || !strings.Contains(text, "called by name") {
			t.Fatalf("memory__create_entities by name: isError=%v %q", isErr, text)
		}
	})
}
