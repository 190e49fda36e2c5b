package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/capbroker/capbroker/internal/testenv"
)

// fakeCapbroker writes an executable named capbroker in a folder of its
// own, for "client add --command".
func fakeCapbroker(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "bin", "capbroker")
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// selectedTools runs select --json and returns the names of the tools
// chosen.
func selectedTools(t *testing.T, env map[string]string, task string) ([]string, string) {
	t.Helper()
	out, stderr, code := runEnv(t, env, "select", "--json", "--no-index", task)
	if code != 0 {
		t.Fatalf("select: exit %d\n%s\n%s", code, out, stderr)
	}
	var sel struct{ Tools []struct{ Name string } }
	if err := json.Unmarshal([]byte(out), &sel); err != nil {
		t.Fatalf("select --json: %v in %s", err, out)
	}
	var names []string
	for _, tl := range sel.Tools {
		names = append(names, tl.Name)
	}
	return names, stderr
}

// TestSelectReadsClaudeJSON: a server in ~/.claude.json is ranked by
// "capbroker select" (not the example catalog), before and after "client
// add claude-code" moved it into capbroker's servers file, which is as
// private as ~/.claude.json (0600, in a 0700 folder).
func TestSelectReadsClaudeJSON(t *testing.T) {
	memory := testenv.NodeBin(t, "mcp-server-memory")
	home := t.TempDir()
	t.Chdir(t.TempDir())
	claudeJSON := filepath.Join(home, ".claude.json")
	cfg := `{"numStartups": 3, "mcpServers": {"memory": {"type": "stdio", "command": "` + memory + `", "args": [], "env": {"MEMORY_FILE_PATH": "` + filepath.Join(home, "memory.jsonl") + `"}}}}`
	if err := os.WriteFile(claudeJSON, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"HOME": home}
	task := "remember an entity in the knowledge graph with its observations"

	before, stderr := selectedTools(t, env, task)
	if !slices.Contains(before, "memory__create_entities") {
		t.Fatalf("before client add: tools %v, want the memory server's create_entities\n%s", before, stderr)
	}
	if strings.Contains(stderr, "example catalog") {
		t.Errorf("before client add: the example catalog was used:\n%s", stderr)
	}

	out, stderr, code := runEnv(t, env, "client", "add", "claude-code", "--command", fakeCapbroker(t))
	if code != 0 {
		t.Fatalf("client add: exit %d\n%s\n%s", code, out, stderr)
	}
	servers := filepath.Join(home, ".config", "capbroker", "clients", "claude-code.json")
	st, err := os.Stat(servers)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("%s is %v, want 0600 (it holds what a 0600 ~/.claude.json held)", servers, st.Mode().Perm())
	}
	if dst, _ := os.Stat(filepath.Dir(servers)); dst.Mode().Perm() != 0o700 {
		t.Errorf("%s is %v, want 0700", filepath.Dir(servers), dst.Mode().Perm())
	}
	after, stderr := selectedTools(t, env, task)
	if !slices.Contains(after, "memory__create_entities") {
		t.Fatalf("after client add: tools %v, want the memory server's create_entities (from %s)\n%s", after, servers, stderr)
	}

	// discover says where it read them.
	out, _, code = runEnv(t, env, "discover", "--no-index")
	if code != 0 || !strings.Contains(out, servers+" (Claude Code, behind capbroker's gateway: 1 servers)") ||
		!strings.Contains(out, claudeJSON+" (1 user servers") {
		t.Errorf("discover: exit %d, want the servers file and ~/.claude.json among the places read:\n%s", code, out)
	}
}

// TestSourcesFollowGatewayEntry: a client entry that runs "capbroker
// gateway --mcp-config FILE" is left out and FILE's servers are read in
// its place, wherever FILE is.
func TestSourcesFollowGatewayEntry(t *testing.T) {
	home := t.TempDir()
	t.Chdir(t.TempDir())
	elsewhere := filepath.Join(t.TempDir(), "mine.json")
	writeFile(t, elsewhere, `{"mcpServers": {"notes": {"command": "notes-mcp"}}}`)
	writeFile(t, filepath.Join(home, ".claude.json"),
		`{"mcpServers": {"capbroker": {"command": "/opt/bin/capbroker", "args": ["gateway", "--mcp-config", "`+elsewhere+`"]}, "web": {"url": "https://example.com/mcp"}}}`)
	m := m0(map[string]string{"HOME": home})
	set, err := m.sources(t.Context(), &discoveryFlags{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range set.servers {
		names = append(names, s.Name)
	}
	if !slices.Equal(names, []string{"notes", "web"}) {
		t.Errorf("servers %v, want notes (behind the entry) and web", names)
	}
	if !strings.Contains(set.placesLine(), elsewhere+" (servers behind") {
		t.Errorf("places %q do not name %s", set.placesLine(), elsewhere)
	}
}

// TestSourcesNamedPlaceMissing: a place named on the command line that
// cannot be read is an error saying why, for every command.
func TestSourcesNamedPlaceMissing(t *testing.T) {
	t.Chdir(t.TempDir())
	writeFile(t, "bad.json", `{"mcpServers": [}`)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"select", "--mcp-config", "missing.json", "read a file"}, "--mcp-config missing.json: no such file or directory"},
		{[]string{"select", "--mcp-config", "bad.json", "read a file"}, "--mcp-config bad.json: "},
		{[]string{"discover", "--root", "/nope"}, "--root /nope: no such file or directory"},
		{[]string{"find", "--root", "/nope", "read a file"}, "--root /nope: no such file or directory"},
		{[]string{"discover", "--tools", "nope.json"}, "--tools nope.json: no such file or directory"},
	} {
		_, stderr, code := run(t, tc.args...)
		if code == 0 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want non-zero and %q", tc.args, code, stderr, tc.want)
		}
	}
}

// TestSkippedSaysWhy: an entry discovery leaves out (a VS Code server
// needing an ${input:...} only VS Code can prompt for) is named on
// stderr with why, by select and route alike, not only counted.
func TestSkippedSaysWhy(t *testing.T) {
	home := t.TempDir()
	t.Chdir(t.TempDir())
	writeFile(t, filepath.Join(home, ".config", "Code", "User", "mcp.json"),
		`{"servers": {"secret": {"type": "stdio", "command": "x", "env": {"K": "${input:key}"}}}, "inputs": [{"id": "key", "type": "promptString"}]}`)
	for _, args := range [][]string{{"select", "read a file"}, {"route", "--no-flow", "review the code"}} {
		_, stderr, code := runEnv(t, map[string]string{"HOME": home}, args...)
		if code != 0 || !strings.Contains(stderr, "note: discovery skipped "+filepath.Join(home, ".config", "Code", "User", "mcp.json")) || !strings.Contains(stderr, "server secret: needs VS Code input key") {
			t.Errorf("%v: exit %d, stderr does not say which entry was skipped and why:\n%s", args, code, stderr)
		}
	}
}

// TestServeAddrCheckedFirst: serve --addr nonsense is refused before
// discovery runs (no note about the places it found nothing in).
func TestServeAddrCheckedFirst(t *testing.T) {
	for _, addr := range []string{"nonsense", "127.0.0.1:http-nope", "0.0.0.0:8080"} {
		_, stderr, code := run(t, "serve", "--addr", addr)
		if code != 2 || !strings.Contains(stderr, "--addr") || strings.Contains(stderr, "no capabilities found") {
			t.Errorf("serve --addr %s: exit %d, stderr %q; want 2, naming --addr, before discovery", addr, code, stderr)
		}
	}
}

// TestHelpNoLearn: the help of --no-learn does not show "learn: false" as
// the flag's value name (cobra reads `...` in a usage as one).
func TestHelpNoLearn(t *testing.T) {
	for _, cmd := range []string{"select", "gateway"} {
		out, _, _ := run(t, cmd, "--help")
		for _, line := range strings.Split(out, "\n") {
			if strings.Contains(line, "--no-learn") && strings.Contains(line, "--no-learn learn") {
				t.Errorf("%s --help: %q", cmd, line)
			}
		}
	}
}

// TestStartTimeoutOneDefault: discovery and the gateway wait as long for
// an MCP server to start, and their help says the same.
func TestStartTimeoutOneDefault(t *testing.T) {
	var defaults []string
	for _, cmd := range []string{"discover", "gateway"} {
		out, _, _ := run(t, cmd, "--help")
		for _, line := range strings.Split(out, "\n") {
			if strings.Contains(line, "--start-timeout") {
				defaults = append(defaults, line)
				if !strings.Contains(line, "30s") {
					t.Errorf("%s --help: %q does not say 30s", cmd, line)
				}
			}
		}
	}
	if len(defaults) != 2 {
		t.Errorf("--start-timeout lines: %q", defaults)
	}
}
