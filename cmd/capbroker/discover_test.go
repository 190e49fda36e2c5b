package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capbroker/capbroker/internal/testenv"
)

func TestDiscoverJSON(t *testing.T) {
	corpus := testenv.NeedShared(t, "corpus")
	env := map[string]string{"CAPBROKER_INDEX": t.TempDir()}
	out, stderr, code := runEnv(t, env, "discover", "--json", "--root", filepath.Join(corpus, "anthropics__knowledge-work-plugins"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	for _, k := range []string{"sources", "counts", "skipped"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("discover --json lacks %q", k)
		}
	}
	var rep struct {
		Counts  map[string]int
		Skipped []map[string]any
		Sources []map[string]any
	}
	json.Unmarshal([]byte(out), &rep)
	want := map[string]int{"plugins": 21, "agents": 5, "commands": 15, "skills": 155, "tools": 0}
	for k, v := range want {
		if rep.Counts[k] != v {
			t.Errorf("counts[%s] = %d, want %d", k, rep.Counts[k], v)
		}
	}
	if len(rep.Skipped) == 0 || rep.Skipped[0]["path"] == nil || rep.Skipped[0]["reason"] == nil {
		t.Errorf("skipped = %v", rep.Skipped)
	}
	if stderr != "" {
		t.Errorf("stderr = %q (progress must not be drawn when stderr is not a terminal)", stderr)
	}
}

// TestDiscoverDefaults uses a fake home: ~/.claude agents and skills are
// found by default, the second run comes from the index, --refresh reads
// again.
func TestDiscoverDefaults(t *testing.T) {
	home := t.TempDir()
	for name, data := range map[string]string{
		".claude/agents/helper.md":       "---\nname: helper\ndescription: Helps.\n---\n",
		".claude/skills/notes/SKILL.md":  "---\nname: notes\ndescription: Notes.\n---\n",
		".claude/settings.json":          `{"not": "a tool"}`,
		".claude/commands/git/commit.md": "Commit the staged changes.\n",
	} {
		p := filepath.Join(home, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(data), 0o644)
	}
	env := map[string]string{"HOME": home}
	out, stderr, code := runEnv(t, env, "discover")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, "total: 0 plugins, 1 agents, 1 commands, 1 skills, 0 tools; 3 cards in the catalog") ||
		!strings.Contains(out, "1 sources read, 0 from the index") {
		t.Errorf("first run:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(home, ".cache", "capbroker", "index.bin")); err != nil {
		t.Errorf("index not written under ~/.cache/capbroker: %v", err)
	}
	out, _, _ = runEnv(t, env, "discover")
	if !strings.Contains(out, "0 sources read, 1 from the index") {
		t.Errorf("second run:\n%s", out)
	}
	out, _, _ = runEnv(t, env, "discover", "--refresh")
	if !strings.Contains(out, "1 sources read, 0 from the index") {
		t.Errorf("refresh:\n%s", out)
	}
	out, _, _ = runEnv(t, env, "discover", "--no-defaults", "--json")
	if !strings.Contains(out, `"plugins": 0`) || !strings.Contains(out, `"sources": []`) {
		t.Errorf("--no-defaults:\n%s", out)
	}
}

func TestDiscoverConfig(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "bad.yaml"), []byte("rootz: [x]\n"), 0o644)
	os.MkdirAll(filepath.Join(dir, "team", "s"), 0o755)
	os.WriteFile(filepath.Join(dir, "team", "s", "SKILL.md"), []byte("---\nname: s\ndescription: Team skill.\n---\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "good.yaml"), []byte("defaults: false\nroots: [{path: team, scope: team}]\n"), 0o644)
	env := map[string]string{"CAPBROKER_INDEX": t.TempDir()}
	_, stderr, code := runEnv(t, env, "discover", "--config", filepath.Join(dir, "bad.yaml"))
	if code != 1 || !strings.Contains(stderr, "field rootz not found") {
		t.Errorf("bad config: exit %d, stderr %q", code, stderr)
	}
	_, _, code = runEnv(t, env, "discover", "--config", filepath.Join(dir, "missing.yaml"))
	if code != 2 {
		t.Errorf("missing config: exit %d, want 2", code)
	}
	out, stderr, code := runEnv(t, env, "discover", "--config", filepath.Join(dir, "good.yaml"))
	if code != 0 || !strings.Contains(out, "team") || !strings.Contains(out, "1 skills") {
		t.Errorf("good config: exit %d\n%s%s", code, out, stderr)
	}
}

func TestApproveUsage(t *testing.T) {
	env := map[string]string{"CAPBROKER_INDEX": t.TempDir()}
	if _, _, code := runEnv(t, env, "approve"); code != 2 {
		t.Errorf("approve without names: exit %d, want 2", code)
	}
	if _, _, code := runEnv(t, env, "approve", "x", "--all"); code != 2 {
		t.Errorf("approve names and --all: exit %d, want 2", code)
	}
	out, _, code := runEnv(t, env, "approve", "--all")
	if code != 0 || !strings.Contains(out, "nothing to approve") {
		t.Errorf("approve --all: exit %d, %q", code, out)
	}
	_, stderr, code := runEnv(t, env, "approve", "web__fetch")
	if code != 1 || !strings.Contains(stderr, "no changed tool named web__fetch") {
		t.Errorf("approve unknown: exit %d, %q", code, stderr)
	}
	out, _, code = runEnv(t, env, "approve", "--list")
	if code != 0 || !strings.Contains(out, "no tool changed") {
		t.Errorf("approve --list: exit %d, %q", code, out)
	}
}

// TestDiscoverTools: discover takes tool files as --tools, like every
// command; the former --tool-file still works, with one warning.
func TestDiscoverTools(t *testing.T) {
	dir := t.TempDir()
	tools := filepath.Join(dir, "tools.json")
	os.WriteFile(tools, []byte(`[{"name": "get_weather", "description": "Weather for a city", "inputSchema": {"type": "object"}},
		{"name": "send_mail", "description": "Send an email", "inputSchema": {"type": "object"}}]`), 0o644)
	env := map[string]string{"CAPBROKER_INDEX": t.TempDir()}
	for _, tc := range []struct {
		flag, warning string
	}{
		{"--tools", ""},
		{"--tool-file", "warning: --tool-file is deprecated; use --tools (capbroker discover)\n"},
	} {
		out, stderr, code := runEnv(t, env, "discover", "--json", "--no-index", tc.flag, tools, tc.flag, tools)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", tc.flag, code, stderr)
		}
		var rep struct{ Counts map[string]int }
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("%s: %v in %s", tc.flag, err, out)
		}
		if rep.Counts["tools"] != 2 {
			t.Errorf("%s: counts = %v, want 2 tools", tc.flag, rep.Counts)
		}
		if stderr != tc.warning {
			t.Errorf("%s: stderr = %q, want %q", tc.flag, stderr, tc.warning)
		}
	}
}
