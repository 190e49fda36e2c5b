package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/capbroker/capbroker/source/mcpconfig"
)

func TestClientConfigs(t *testing.T) {
	tests := []struct {
		goos, appData string
		want          []string
	}{
		{"linux", "", []string{"/h/.config/Claude/claude_desktop_config.json", "/h/.config/Code/User/mcp.json", "/h/.cursor/mcp.json"}},
		{"darwin", "", []string{"/h/Library/Application Support/Claude/claude_desktop_config.json", "/h/Library/Application Support/Code/User/mcp.json", "/h/.cursor/mcp.json"}},
		{"windows", "/h/AppData/Roaming", []string{"/h/AppData/Roaming/Claude/claude_desktop_config.json", "/h/AppData/Roaming/Code/User/mcp.json", "/h/.cursor/mcp.json"}},
	}
	for _, tc := range tests {
		t.Run(tc.goos, func(t *testing.T) {
			var got []string
			for _, c := range clientConfigs("/h", "/w", tc.appData, tc.goos) {
				got = append(got, filepath.ToSlash(c.path))
			}
			want := append([]string{"/w/.mcp.json", "/w/.vscode/mcp.json", "/w/.cursor/mcp.json"}, tc.want...)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if n := len(clientConfigs("", "/w", "", "linux")); n != 3 {
		t.Errorf("without a home: %d places, want the 3 project ones", n)
	}
}

func TestIsGatewayItself(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		s    mcpconfig.Server
		want bool
	}{
		{mcpconfig.Server{Command: "capbroker", Args: []string{"gateway"}}, true},
		{mcpconfig.Server{Command: "/usr/local/bin/capbroker.exe", Args: []string{"gateway", "--mode", "call"}}, true},
		{mcpconfig.Server{Command: self, Args: []string{"gateway"}}, true},
		{mcpconfig.Server{Command: "capbroker", Args: []string{"serve"}}, false},
		{mcpconfig.Server{Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-memory"}}, false},
		{mcpconfig.Server{URL: "http://127.0.0.1:8931/mcp"}, false},
	}
	for _, tc := range tests {
		if got := isGatewayItself(tc.s); got != tc.want {
			t.Errorf("isGatewayItself(%s %v) = %v, want %v", tc.s.Command, tc.s.Args, got, tc.want)
		}
	}
}

// TestClaudeJSONProblemsReported checks that a server left out of
// ~/.claude.json is reported with the file, not silently dropped.
func TestClaudeJSONProblemsReported(t *testing.T) {
	home := t.TempDir()
	os.WriteFile(filepath.Join(home, ".claude.json"), []byte(`{"mcpServers":{
  "good":{"command":"true"},
  "bad":{"command":5}
}}`), 0o644)
	m := &Main{Stdout: io.Discard, Stderr: io.Discard, Getenv: func(k string) string {
		if k == "HOME" {
			return home
		}
		return ""
	}}
	local, user, probs, _ := m.claudeJSON(filepath.Join(home, ".claude.json"), t.TempDir())
	if len(local) != 0 || len(user) != 1 || user[0].Name != "good" {
		t.Errorf("servers: local %v, user %v; want the good one", local, user)
	}
	if len(probs) != 1 || !strings.Contains(probs[0].String(), "bad") || !strings.Contains(probs[0].String(), ".claude.json") {
		t.Errorf("problems = %v, want one naming the bad server and the file", probs)
	}
}

// TestClaudeConfigDir: with $CLAUDE_CONFIG_DIR set, as Claude Code reads
// it, the gateway takes user servers from $CLAUDE_CONFIG_DIR/.claude.json
// (not ~/.claude.json), discovery scans that folder instead of ~/.claude,
// and project approvals are read from it.
func TestClaudeConfigDir(t *testing.T) {
	cfgDir, err := filepath.Abs(filepath.Join("testdata", "claude-config-dir"))
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	os.WriteFile(filepath.Join(home, ".claude.json"), []byte(`{"mcpServers": {"home-tools": {"command": "home-mcp"}}}`), 0o644)
	t.Chdir(t.TempDir())
	env := map[string]string{"HOME": home, "CLAUDE_CONFIG_DIR": cfgDir, "XDG_CACHE_HOME": t.TempDir(), "XDG_DATA_HOME": t.TempDir()}
	m := &Main{Stdout: io.Discard, Stderr: io.Discard, Getenv: func(k string) string { return env[k] }}

	up, err := m.plannedUpstreams(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range up.servers {
		names = append(names, s.Name+" "+s.File)
	}
	if want := []string{"work-tools " + filepath.Join(cfgDir, ".claude.json")}; !slices.Equal(names, want) {
		t.Errorf("servers %v, want %v", names, want)
	}
	if p := m.trustPolicy().ClaudePath; p != filepath.Join(cfgDir, ".claude.json") {
		t.Errorf("approvals read from %q", p)
	}
	opts, _, err := m.sourceOptions(&discoveryFlags{})
	if err != nil {
		t.Fatal(err)
	}
	var user []string
	for _, r := range opts.Roots {
		if r.Scope == "user" {
			user = append(user, r.Path)
		}
	}
	if !slices.Equal(user, []string{cfgDir}) {
		t.Errorf("user roots %v, want %s only", user, cfgDir)
	}
}
