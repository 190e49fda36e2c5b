package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/capbroker/capbroker/source/mcpconfig"
)

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
