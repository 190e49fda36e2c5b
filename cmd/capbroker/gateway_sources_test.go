package main

import (
	"io"
	"os"
	"path/filepath"
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
