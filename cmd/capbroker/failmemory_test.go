package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFailedServerRemembered: an MCP server that does not answer costs
// its timeout once; the next runs within failMemory do not start it again
// and say so, with how to retry now; --refresh and a changed definition
// ask it again.
func TestFailedServerRemembered(t *testing.T) {
	dir := t.TempDir()
	starts := filepath.Join(dir, "starts")
	cfg := filepath.Join(dir, "servers.json")
	def := func(extra string) {
		writeFile(t, cfg, fmt.Sprintf(`{"mcpServers": {"slow": {"command": "sh", "args": ["-c", "echo start >> %s; exec sleep 60", %q]}}}`, starts, extra))
	}
	def("a")
	count := func() int {
		data, _ := os.ReadFile(starts)
		return strings.Count(string(data), "start")
	}
	env := map[string]string{"HOME": dir}
	args := []string{"select", "look up a word", "--mcp-config", cfg, "--timeout", "1s"}

	_, stderr, _ := runEnv(t, env, args...)
	if count() != 1 || !strings.Contains(stderr, "note: MCP server slow failed") || !strings.Contains(stderr, "will not wait for it again") {
		t.Fatalf("first run: %d starts\n%s", count(), stderr)
	}
	for i := 0; i < 2; i++ {
		_, stderr, _ = runEnv(t, env, args...)
		if count() != 1 {
			t.Fatalf("run %d started the failed server again (%d starts)\n%s", i+2, count(), stderr)
		}
		if !strings.Contains(stderr, "MCP server slow failed in an earlier run and is not asked again before") || !strings.Contains(stderr, "--refresh asks it now") {
			t.Errorf("run %d does not say the failure is remembered:\n%s", i+2, stderr)
		}
	}
	out, _, _ := runEnv(t, env, "discover", "--mcp-config", cfg, "--timeout", "1s")
	if count() != 1 || !strings.Contains(out, "remembered from an earlier run") {
		t.Errorf("discover: %d starts\n%s", count(), out)
	}
	runEnv(t, env, append(args, "--refresh")...)
	if count() != 2 {
		t.Errorf("--refresh did not ask the server again (%d starts)", count())
	}
	def("b")
	runEnv(t, env, args...)
	if count() != 3 {
		t.Errorf("a changed definition was not tried (%d starts)", count())
	}
}
