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

// TestMemoryWording: against the real catalog of the three npm reference
// servers (filesystem, memory, everything), everyday requests to remember
// and recall rank a memory tool first, in select and in find, by words
// alone and by words and meaning (the default); create_directory, which
// only shares "project" with them, does not come first.
func TestMemoryWording(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "mcp.json")
	servers := map[string]any{"mcpServers": map[string]any{
		"filesystem": map[string]any{"command": testenv.NodeBin(t, "mcp-server-filesystem"), "args": []string{dir}},
		"memory":     map[string]any{"command": testenv.NodeBin(t, "mcp-server-memory"), "env": map[string]string{"MEMORY_FILE_PATH": filepath.Join(dir, "memory.jsonl")}},
		"everything": map[string]any{"command": testenv.NodeBin(t, "mcp-server-everything")},
	}}
	b, _ := json.Marshal(servers)
	if err := os.WriteFile(cfg, b, 0o600); err != nil {
		t.Fatal(err)
	}
	src := []string{"--no-defaults", "--mcp-config", cfg} // the index under HOME: the servers are listed once
	memory := []string{"memory__create_entities", "memory__add_observations", "memory__search_nodes", "memory__open_nodes"}
	tasks := []struct {
		task string
		want []string // the first pick and match is one of these
	}{
		{"remember that Alice leads project X", memory},
		{"recall who leads project X", memory},
		{"look up what I told you about Alice", []string{"memory__search_nodes", "memory__open_nodes", "memory__read_graph"}},
	}
	for _, ranker := range []string{"lexical", "hybrid"} {
		t.Run(ranker, func(t *testing.T) {
			env := map[string]string{"HOME": t.TempDir(), "CAPBROKER_RANKER": ranker}
			if ranker == "hybrid" {
				// The cards' vectors first, or a loaded machine ranks by
				// words while they are computed.
				if _, stderr, code := runEnv(t, env, append([]string{"embed"}, src...)...); code != 0 {
					t.Fatalf("embed: exit %d: %s", code, stderr)
				}
			}
			for _, tt := range tasks {
				out, stderr, code := runEnv(t, env, append(append([]string{"select", "--json"}, src...), tt.task)...)
				if code != 0 {
					t.Fatalf("select %q: exit %d: %s", tt.task, code, stderr)
				}
				var sel struct{ Tools []struct{ Name string } }
				if err := json.Unmarshal([]byte(out), &sel); err != nil {
					t.Fatalf("select --json: %v in %s", err, out)
				}
				if len(sel.Tools) == 0 || !slices.Contains(tt.want, sel.Tools[0].Name) {
					t.Errorf("select %q: picks %v, want one of %v first", tt.task, sel.Tools, tt.want)
				}
				if strings.Contains(stderr, "example catalog") {
					t.Errorf("select %q ranked the example catalog: %s", tt.task, stderr)
				}
				out, stderr, code = runEnv(t, env, append(append([]string{"find", "--json"}, src...), tt.task)...)
				if code != 0 {
					t.Fatalf("find %q: exit %d: %s", tt.task, code, stderr)
				}
				var found struct{ Matches []struct{ Name string } }
				if err := json.Unmarshal([]byte(out), &found); err != nil {
					t.Fatalf("find --json: %v in %s", err, out)
				}
				if len(found.Matches) == 0 || !slices.Contains(tt.want, found.Matches[0].Name) {
					t.Errorf("find %q: matches %v, want one of %v first", tt.task, found.Matches, tt.want)
				}
			}
		})
	}
}
