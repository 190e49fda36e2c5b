package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/capbroker/capbroker/internal/buildinfo"
	"github.com/capbroker/capbroker/internal/testenv"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestGatewayUsageErrors(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "servers.json")
	os.WriteFile(good, []byte(`{"mcpServers": {"a": {"command": "true"}}}`), 0o644)
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte("{\n\"mcpServers\": {\"a\": {\"command\": }}}"), 0o644)
	sse := filepath.Join(dir, "sse.json")
	os.WriteFile(sse, []byte(`{"mcpServers": {"old": {"type": "http", "url": "http://127.0.0.1:1/mcp", "headers": {"K": "${input:key}"}}}}`), 0o644)
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantErr  string
	}{
		{"bad mode", []string{"gateway", "--mcp-config", good, "--mode", "most"}, 2, "--mode"},
		{"bad namespace", []string{"gateway", "--mcp-config", good, "--namespace", "never"}, 2, "--namespace"},
		{"public address without token", []string{"gateway", "--mcp-config", good, "--addr", "0.0.0.0:0"}, 2, "bearer token is required to listen on an address that is not loopback: give --token (or $CAPBROKER_TOKEN) or --identities FILE"},
		{"missing file", []string{"gateway", "--mcp-config", filepath.Join(dir, "nope.json")}, 1, "nope.json"},
		{"malformed file", []string{"gateway", "--mcp-config", bad}, 1, "bad.json: line 2"},
		{"only unusable servers", []string{"gateway", "--mcp-config", sse}, 1, "no usable MCP server in " + sse + "\n  " + sse + ":1: server old: needs VS Code input key"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := run(t, tc.args...)
			if code != tc.wantCode || !strings.Contains(stderr, tc.wantErr) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, stderr, tc.wantCode, tc.wantErr)
			}
		})
	}
}

// TestGatewayStdio runs "capbroker gateway" over stdio in front of the npm
// memory server and talks to it with the Go SDK client.
func TestGatewayStdio(t *testing.T) {
	memory := testenv.NodeBin(t, "mcp-server-memory")
	dir := t.TempDir()
	cfg := filepath.Join(dir, "servers.json")
	os.WriteFile(cfg, []byte(`{"mcpServers": {"memory": {"command": "`+memory+`", "env": {"MEMORY_FILE_PATH": "`+filepath.Join(dir, "m.jsonl")+`"}}}}`), 0o644)

	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr strings.Builder
	m := &Main{Stdin: inR, Stdout: outW, Stderr: &stderr, Getenv: func(string) string { return "" }}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		// --start-wait: the requests wait for the memory server, however
		// slow Node starts on a loaded machine.
		done <- m.Run(ctx, []string{"gateway", "--mcp-config", cfg, "--mode", "search", "--family", "general",
			"--index", filepath.Join(dir, "index"), "--db", filepath.Join(dir, "sessions.db"), "--start-wait", "1m"})
		outW.Close()
	}()
	defer func() {
		cancel()
		inW.Close()
		<-done
	}()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).
		Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatalf("connecting: %v\n%s", err, stderr.String())
	}
	// serverInfo.version is the version "capbroker version" prints.
	if got, want := cs.InitializeResult().ServerInfo.Version, buildinfo.Read().Short(); got != want {
		t.Errorf("serverInfo.version = %q, want %q", got, want)
	}
	var names []string
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
	}
	if !slices.Equal(names, []string{"find_capability"}) {
		t.Fatalf("tools = %v, want only find_capability", names)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "find_capability", Arguments: map[string]any{"query": "read the whole knowledge graph"}})
	if err != nil || res.IsError {
		t.Fatalf("find: %v %+v", err, res)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "memory__read_graph", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("read_graph after find: %v %+v", err, res)
	}
}

// TestGatewayRouteCapability runs "capbroker gateway --plugins DIR" over
// stdio: with plugin agents installed, route_capability is listed next to
// find_capability and routes a task to the plugin agent, with the
// announcement.
func TestGatewayRouteCapability(t *testing.T) {
	memory := testenv.NodeBin(t, "mcp-server-memory")
	dir := t.TempDir()
	cfg := filepath.Join(dir, "servers.json")
	os.WriteFile(cfg, []byte(`{"mcpServers": {"memory": {"command": "`+memory+`", "env": {"MEMORY_FILE_PATH": "`+filepath.Join(dir, "m.jsonl")+`"}}}}`), 0o644)
	plugins := filepath.Join(dir, "plugins")
	os.MkdirAll(filepath.Join(plugins, "review-kit", "agents"), 0o755)
	os.WriteFile(filepath.Join(plugins, "review-kit", "agents", "reviewer.md"),
		[]byte("---\nname: reviewer\ndescription: Code review specialist. Reviews pull requests for security and quality.\n---\nReview.\n"), 0o644)

	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr strings.Builder
	m := &Main{Stdin: inR, Stdout: outW, Stderr: &stderr, Getenv: func(string) string { return "" }}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- m.Run(ctx, []string{"gateway", "--mcp-config", cfg, "--mode", "search", "--family", "general", "--plugins", plugins,
			"--index", filepath.Join(dir, "index"), "--db", filepath.Join(dir, "sessions.db"), "--start-wait", "1m"})
		outW.Close()
	}()
	defer func() {
		cancel()
		inW.Close()
		<-done
	}()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).
		Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatalf("connecting: %v\n%s", err, stderr.String())
	}
	var names []string
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
	}
	if !slices.Equal(names, []string{"find_capability", "route_capability"}) {
		t.Fatalf("tools = %v, want find_capability and route_capability", names)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "route_capability", Arguments: map[string]any{"task": "review the pull request"}})
	if err != nil || res.IsError {
		t.Fatalf("route_capability: %v %+v", err, res)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if !strings.Contains(text, `"agent": "review-kit:reviewer"`) || !strings.Contains(text, `**Delegating code-review** → review-kit:reviewer`) {
		t.Errorf("route_capability answered:\n%s", text)
	}
}

// TestGatewayOldFlagNames: the gateway's former flag names still work,
// each with one warning naming the new one.
func TestGatewayOldFlagNames(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "servers.json")
	os.WriteFile(good, []byte(`{"mcpServers": {"a": {"command": "true"}}}`), 0o644)
	_, stderr, code := run(t, "gateway", "--config", good, "--http", "0.0.0.0:0", "--timeout", "5s")
	if code != 2 || !strings.Contains(stderr, "bearer token is required") {
		t.Fatalf("exit %d, stderr %q; want the address refused", code, stderr)
	}
	for _, want := range []string{"--http is deprecated; use --addr", "--timeout is deprecated; use --call-timeout",
		"gateway --config now names capbroker.yaml; " + good + " is an MCP servers file, read as --mcp-config"} {
		if strings.Count(stderr, want) != 1 {
			t.Errorf("stderr %q: want %q once", stderr, want)
		}
	}
}

func TestEnvToken(t *testing.T) {
	for _, tc := range []struct {
		env        map[string]string
		want, warn string
	}{
		{map[string]string{"CAPBROKER_TOKEN": "a", "CAPBROKER_GATEWAY_TOKEN": "b"}, "a", ""},
		{map[string]string{"CAPBROKER_GATEWAY_TOKEN": "b"}, "b", "$CAPBROKER_GATEWAY_TOKEN is deprecated; set $CAPBROKER_TOKEN"},
		{map[string]string{}, "", ""},
	} {
		var stderr strings.Builder
		m := &Main{Stderr: &stderr, Getenv: func(k string) string { return tc.env[k] }}
		if got := m.envToken(); got != tc.want || (tc.warn == "") != (stderr.Len() == 0) || !strings.Contains(stderr.String(), tc.warn) {
			t.Errorf("%v: token %q, stderr %q; want %q and %q", tc.env, got, stderr.String(), tc.want, tc.warn)
		}
	}
}
