package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/capbroker/capbroker/source/mcpconfig"
)

// TestServerCommands manages the servers file by command: add (stdio and
// remote), list, disable, enable, tool patterns, remove; the file keeps
// its order and stays 0600, and the gateway reads every change as meant.
func TestServerCommands(t *testing.T) {
	home := t.TempDir()
	env := map[string]string{"HOME": home}
	servers := filepath.Join(home, ".config", "capbroker", "clients", "claude-code.json")
	step := func(args ...string) string {
		t.Helper()
		out, stderr, code := runEnv(t, env, append([]string{"server"}, args...)...)
		if code != 0 {
			t.Fatalf("server %v: exit %d\n%s\n%s", args, code, out, stderr)
		}
		return out
	}
	read := func() map[string]mcpconfig.Server {
		t.Helper()
		list, _, err := mcpconfig.Load(servers, &mcpconfig.Options{Getenv: func(string) string { return "tok" }})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]mcpconfig.Server{}
		for _, s := range list {
			out[s.Name] = s
		}
		return out
	}

	step("add", "memory", "--env", "MEMORY_FILE_PATH=/tmp/m.jsonl", "--", "npx", "-y", "@modelcontextprotocol/server-memory")
	step("add", "docs", "--url", "https://example.com/mcp", "--header", "Authorization=Bearer ${DOCS_TOKEN}")
	step("add", "github", "--", "github-mcp-server", "stdio")
	if st, err := os.Stat(servers); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("servers file: %v %v, want 0600", st, err)
	}
	got := read()
	if s := got["memory"]; s.Command != "npx" || s.Env["MEMORY_FILE_PATH"] != "/tmp/m.jsonl" {
		t.Errorf("memory: %+v", s)
	}
	if s := got["docs"]; s.URL != "https://example.com/mcp" || s.Headers["Authorization"] != "Bearer tok" {
		t.Errorf("docs: %+v", s)
	}

	step("disable", "memory")
	step("tools", "github", "--deny", "delete_*", "--deny", "merge_pull_request")
	out := step("list")
	if !regexp.MustCompile(`(?m)^memory +no +all +npx -y @modelcontextprotocol/server-memory$`).MatchString(out) {
		t.Errorf("list: the disabled memory server's row should say what it runs:\n%s", out)
	}
	for _, want := range []string{"memory  no", "github  yes      all but not delete_*,merge_pull_request", "3 servers in " + servers} {
		if !strings.Contains(out, want) {
			t.Errorf("list lacks %q:\n%s", want, out)
		}
	}
	got = read()
	if _, ok := got["memory"]; ok {
		t.Error("a disabled server is still read")
	}
	gh := got["github"]
	for tool, want := range map[string]bool{"delete_repository": false, "merge_pull_request": false, "create_issue": true} {
		if gh.ToolAllowed(tool) != want {
			t.Errorf("github tool %s allowed = %v, want %v", tool, !want, want)
		}
	}

	step("enable", "memory")
	step("tools", "github", "--clear")
	step("remove", "docs")
	data, _ := os.ReadFile(servers)
	var doc struct{ MCPServers map[string]json.RawMessage }
	json.Unmarshal(data, &doc)
	if _, ok := doc.MCPServers["docs"]; ok || strings.Contains(string(data), "disabled") || strings.Contains(string(data), "excludeTools") {
		t.Errorf("after enable, clear and remove:\n%s", data)
	}
	if i, j := strings.Index(string(data), `"memory"`), strings.Index(string(data), `"github"`); i < 0 || j < i {
		t.Errorf("order not kept:\n%s", data)
	}

	// Mistakes are refused, saying why.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"add", "memory", "--", "other"}, "already defines server memory"},
		{[]string{"add", "x"}, "give either -- COMMAND"},
		{[]string{"remove", "nope"}, "defines no server nope"},
		{[]string{"disable", "nope"}, "defines no server nope"},
		{[]string{"tools", "github", "--allow", "[x"}, "not a valid pattern"},
		{[]string{"add", "y", "--env", "NOEQUALS", "--", "cmd"}, "want KEY=VALUE"},
	} {
		_, stderr, code := runEnv(t, env, append([]string{"server"}, tc.args...)...)
		if code == 0 || !strings.Contains(stderr, tc.want) {
			t.Errorf("server %v: exit %d, %q; want an error with %q", tc.args, code, stderr, tc.want)
		}
	}
}

// TestServerAddChecksCommand: server add writes a stdio server whose
// command would not start here, but warns, saying why and how to fix the
// entry; one that would start gets no warning.
func TestServerAddChecksCommand(t *testing.T) {
	home := t.TempDir()
	notExec := filepath.Join(home, "script.sh")
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, command, want string
	}{
		{"onpath", "sh", ""},
		{"absolute", sh, ""},
		{"missing", "capbroker-no-such-server-xyz", "capbroker-no-such-server-xyz is not on $PATH here"},
		{"gone", filepath.Join(home, "nope", "server"), "does not exist here"},
		{"notexec", notExec, "is not an executable file"},
		{"relative", "./bin/server", "does not exist here"},
	}
	for _, tt := range tests {
		_, stderr, code := runEnv(t, map[string]string{"HOME": home}, "server", "add", tt.name, "--", tt.command)
		if code != 0 {
			t.Errorf("server add %s -- %s: exit %d, %s; want the entry written", tt.name, tt.command, code, stderr)
		}
		switch {
		case tt.want == "" && strings.Contains(stderr, "warning"):
			t.Errorf("server add %s -- %s warns: %s", tt.name, tt.command, stderr)
		case tt.want != "" && (!strings.Contains(stderr, "warning: server "+tt.name+": ") || !strings.Contains(stderr, tt.want) || !strings.Contains(stderr, "--replace")):
			t.Errorf("server add %s -- %s: stderr %q, want a warning with %q and how to fix the entry", tt.name, tt.command, stderr, tt.want)
		}
	}
}

// TestServerDefaultFile: with no --client, server edits Claude Code's
// servers file, or the only one client add wrote (a VS Code user's
// change reaches VS Code's gateway); several, none Claude Code's, need
// --client.
func TestServerDefaultFile(t *testing.T) {
	clients := func(home string) string { return filepath.Join(home, ".config", "capbroker", "clients") }
	for _, tc := range []struct {
		name     string
		existing []string // servers files client add wrote
		want     string   // the file edited, "" for a refusal
	}{
		{"none yet", nil, "claude-code.json"},
		{"claude code's", []string{"claude-code", "vscode"}, "claude-code.json"},
		{"vscode's only", []string{"vscode"}, "vscode.json"},
		{"several, no claude code", []string{"vscode", "cursor"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			for _, c := range tc.existing {
				writeFile(t, filepath.Join(clients(home), c+".json"), `{"mcpServers": {}}`)
			}
			out, stderr, code := runEnv(t, map[string]string{"HOME": home}, "server", "add", "x", "--", "sh")
			if tc.want == "" {
				if code != 2 || !strings.Contains(stderr, "name one with --client") || !strings.Contains(stderr, "vscode, cursor") {
					t.Errorf("exit %d, %q; want a usage error asking for --client", code, stderr)
				}
				return
			}
			if code != 0 || !strings.Contains(out, "added server x to "+filepath.Join(clients(home), tc.want)) {
				t.Errorf("exit %d, %q %q; want it added to %s", code, out, stderr, tc.want)
			}
		})
	}
	// --client still names one.
	home := t.TempDir()
	writeFile(t, filepath.Join(clients(home), "vscode.json"), `{"mcpServers": {}}`)
	if out, _, code := runEnv(t, map[string]string{"HOME": home}, "server", "add", "x", "--client", "cursor", "--", "sh"); code != 0 || !strings.Contains(out, filepath.Join(clients(home), "cursor.json")) {
		t.Errorf("--client cursor: exit %d %q", code, out)
	}
}
