package source

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/internal/testenv"
	"github.com/google/go-cmp/cmp"
)

// TestDiscoverCorpus discovers each corpus folder as a --root and checks
// the counts against expected_counts.json, then the whole corpus at once.
func TestDiscoverCorpus(t *testing.T) {
	dir := testenv.NeedShared(t, "corpus")
	data, err := os.ReadFile(filepath.Join(dir, "expected_counts.json"))
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]Counts
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	var total Counts
	names := make([]string, 0, len(want))
	for name := range want {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		w := want[name]
		total.Plugins += w.Plugins
		total.Agents += w.Agents
		total.Commands += w.Commands
		total.Skills += w.Skills
		t.Run(name, func(t *testing.T) {
			res, err := Discover(context.Background(), &Options{Roots: []Root{{Path: filepath.Join(dir, name)}}})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(w, res.Report.Counts); diff != "" {
				t.Errorf("counts (-want +got):\n%s", diff)
			}
			if res.Catalog.Len() != w.Agents+w.Commands+w.Skills {
				t.Errorf("catalog holds %d cards, want %d; catalog warnings: %v", res.Catalog.Len(), w.Agents+w.Commands+w.Skills, res.Report.Catalog)
			}
			for _, s := range res.Report.Sources {
				if s.Error != "" {
					t.Errorf("source %s: %s", s.Name, s.Error)
				}
			}
		})
	}
	t.Run("all", func(t *testing.T) {
		res, err := Discover(context.Background(), &Options{Roots: []Root{{Path: dir}}})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(total, res.Report.Counts); diff != "" {
			t.Errorf("counts (-want +got):\n%s", diff)
		}
		// expected_counts.json itself is a data file but holds no tools.
		if res.Report.Ignored != 1 {
			t.Errorf("ignored data files = %d, want 1", res.Report.Ignored)
		}
	})
}

func write(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, data := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDiscoverRoots points roots at files and folders of every kind.
func TestDiscoverRoots(t *testing.T) {
	root := t.TempDir()
	write(t, root, map[string]string{
		"tools/github.json":             `[{"name": "create_issue", "description": "Create an issue", "input_schema": {"type": "object"}}, {"description": "no name"}]`,
		"tools/notes.yaml":              "name: add_note\ndescription: Add a note\ninputSchema: {type: object}\n",
		"skills/solo/SKILL.md":          "---\nname: solo\ndescription: A standalone skill.\n---\n",
		"p/.claude-plugin/plugin.json":  `{"name": "p"}`,
		"p/agents/a.md":                 "---\nname: a\ndescription: Agent a.\n---\n",
		"proj/.claude/agents/helper.md": "---\nname: helper\ndescription: Project agent.\n---\n",
		"proj/package.json":             `{"name": "not-tools", "version": "1.0.0"}`,
		"empty.mcp.json":                `{"mcpServers": {}}`,
		"readme.md":                     "# not a capability",
	})
	opts := &Options{
		Roots: []Root{
			{Path: filepath.Join(root, "tools", "github.json")},
			{Path: filepath.Join(root, "tools", "notes.yaml")},
			{Path: filepath.Join(root, "skills", "solo", "SKILL.md"), Scope: "mine"},
			{Path: filepath.Join(root, "p", ".claude-plugin", "plugin.json")},
			{Path: filepath.Join(root, "proj"), Scope: "project"},
			{Path: filepath.Join(root, "empty.mcp.json")},
			{Path: filepath.Join(root, "readme.md")},
			{Path: filepath.Join(root, "missing")},
			{Path: filepath.Join(root, "optional-missing"), Optional: true},
		},
	}
	res, err := Discover(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range res.Cards {
		names = append(names, fmt.Sprintf("%s %s (%s)", c.Kind, c.Name, c.Source))
	}
	wantNames := []string{"tool add_note (notes)", "tool create_issue (github)", "agent helper (project)", "agent p:a (p)", "skill solo (mine)"}
	if diff := cmp.Diff(wantNames, names); diff != "" {
		t.Errorf("cards (-want +got):\n%s", diff)
	}
	want := Counts{Plugins: 1, Agents: 2, Skills: 1, Tools: 2}
	if diff := cmp.Diff(want, res.Report.Counts); diff != "" {
		t.Errorf("counts (-want +got):\n%s", diff)
	}
	var skipped []string
	for _, s := range res.Report.Skipped {
		rel, _ := filepath.Rel(root, s.Path)
		skipped = append(skipped, filepath.ToSlash(rel)+": "+s.Reason)
	}
	wantSkipped := []string{
		"missing: cannot scan: stat " + filepath.Join(root, "missing") + ": no such file or directory",
		"readme.md: not a plugin, skill, tool file or MCP config",
		"tools/github.json: item 2: tool has no name (keys: description)",
	}
	if diff := cmp.Diff(wantSkipped, skipped); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	if res.Report.Ignored != 1 {
		t.Errorf("ignored = %d, want 1 (package.json)", res.Report.Ignored)
	}
}

// TestDiscoverMCP connects real npm servers (one declared by a plugin)
// together with a server that hangs and one that exits at once: the good
// servers are discovered, the bad ones cost one timeout, in parallel, and
// are reported.
func TestDiscoverMCP(t *testing.T) {
	everything := testenv.NodeBin(t, "mcp-server-everything")
	memory := testenv.NodeBin(t, "mcp-server-memory")
	sh := testenv.LookPath(t, "sh")
	root := t.TempDir()
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"everything": map[string]any{"command": everything, "args": []string{"stdio"}},
		"hang":       map[string]any{"command": sh, "args": []string{"-c", "sleep 600"}},
		"crash":      map[string]any{"command": sh, "args": []string{"-c", "echo cannot start >&2; exit 1"}},
	}})
	plug, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"memory": map[string]any{"command": memory, "env": map[string]string{"MEMORY_FILE_PATH": "${CLAUDE_PLUGIN_ROOT}/memory.jsonl"}},
	}})
	write(t, root, map[string]string{
		".mcp.json":                       string(cfg),
		"plug/.claude-plugin/plugin.json": `{"name": "plug"}`,
		"plug/.mcp.json":                  string(plug),
	})
	const timeout = 15 * time.Second
	start := time.Now()
	res, err := Discover(context.Background(), &Options{Roots: []Root{{Path: root}}, PluginMCP: true, MCPTimeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	elapsed := time.Since(start)
	bySource := map[string]int{}
	for _, c := range res.Cards {
		bySource[c.Source]++
	}
	if bySource["everything"] == 0 || bySource["memory"] == 0 {
		t.Errorf("tools by server = %v, want everything and memory", bySource)
	}
	if _, ok := res.Catalog.Lookup("memory__read_graph"); !ok {
		t.Errorf("memory__read_graph missing")
	}
	errs := map[string]string{}
	for _, s := range res.Report.Sources {
		if s.Error != "" {
			errs[s.Name] = s.Error
		}
		if s.Kind == KindPlugin && s.Servers != 1 {
			t.Errorf("plugin declares %d servers, want 1", s.Servers)
		}
	}
	if !strings.Contains(errs["hang"], "no answer within 15s") {
		t.Errorf("hang error = %q", errs["hang"])
	}
	if !strings.Contains(errs["crash"], "cannot start") {
		t.Errorf("crash error = %q", errs["crash"])
	}
	if len(errs) != 2 {
		t.Errorf("errors = %v, want hang and crash only", errs)
	}
	// Servers are read in parallel: the hanging one costs one timeout,
	// not one on top of the others' start-up.
	if elapsed > 2*timeout {
		t.Errorf("discovery took %s with a %s timeout", elapsed, timeout)
	}
	if res.Report.Counts.Tools != bySource["everything"]+bySource["memory"] {
		t.Errorf("tool count %d", res.Report.Counts.Tools)
	}
	t.Logf("%d tools in %s", res.Report.Counts.Tools, elapsed)
}

func TestConfig(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"capbroker.yaml": "defaults: false\nroots:\n  - plugins\n  - {path: ~/skills, scope: team}\ntool_files: [tools.json]\nmcp_configs: [/etc/mcp.json]\nplugin_mcp: true\nmcp_timeout: 7s\nindex: ~/.cache/cb\n",
		"bad.yaml":       "roots: [a]\nrootz: [b]\n",
		"badtime.yaml":   "mcp_timeout: soon\n",
	})
	c, err := LoadConfig(filepath.Join(dir, "capbroker.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	opts := &Options{}
	c.Apply(opts, "/home/u")
	want := &Options{
		Roots:      []Root{{Path: filepath.Join(dir, "plugins")}, {Path: "/home/u/skills", Scope: "team"}},
		ToolFiles:  []string{filepath.Join(dir, "tools.json")},
		MCPConfigs: []string{"/etc/mcp.json"},
		PluginMCP:  true,
		MCPTimeout: 7 * time.Second,
	}
	if diff := cmp.Diff(want, opts, cmp.FilterPath(func(p cmp.Path) bool {
		n := p.Last().String()
		return n == ".Getenv" || n == ".Hold" || n == ".Progress" || n == ".Cache"
	}, cmp.Ignore())); diff != "" {
		t.Errorf("options (-want +got):\n%s", diff)
	}
	if c.UseDefaults() || c.IndexDir("/home/u") != "/home/u/.cache/cb" {
		t.Errorf("defaults %v index %q", c.UseDefaults(), c.IndexDir("/home/u"))
	}
	if _, err := LoadConfig(filepath.Join(dir, "bad.yaml")); err == nil || !strings.Contains(err.Error(), "line 2: field rootz not found") {
		t.Errorf("unknown key: err = %v", err)
	}
	if _, err := LoadConfig(filepath.Join(dir, "badtime.yaml")); err == nil || !strings.Contains(err.Error(), "mcp_timeout") {
		t.Errorf("bad duration: err = %v", err)
	}
	roots := DefaultRoots("/home/u/.claude", "/work/p")
	if len(roots) != 3 || roots[2].Path != "/home/u/.claude" || !roots[0].ClaudeDir || roots[0].Scope != "project" {
		t.Errorf("default roots = %+v", roots)
	}
	_ = card.KindTool
}
