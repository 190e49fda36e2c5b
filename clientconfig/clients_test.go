package clientconfig

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestPlaces checks where each client's files are, with and without
// $CLAUDE_CONFIG_DIR and $XDG_CONFIG_HOME, on each system.
func TestPlaces(t *testing.T) {
	for _, tc := range []struct {
		name       string
		env        Env
		claudeDir  string
		claudeJSON string
		files      []string // Files' paths
	}{
		{"linux", Env{Home: "/h", WorkDir: "/p", GOOS: "linux"}, "/h/.claude", "/h/.claude.json",
			[]string{"/p/.mcp.json", "/p/.vscode/mcp.json", "/p/.cursor/mcp.json",
				"/h/.config/Claude/claude_desktop_config.json", "/h/.config/Code/User/mcp.json", "/h/.cursor/mcp.json"}},
		{"CLAUDE_CONFIG_DIR and XDG_CONFIG_HOME", Env{Home: "/h", WorkDir: "/p", GOOS: "linux",
			Getenv: env(map[string]string{"CLAUDE_CONFIG_DIR": "/cfg/claude", "XDG_CONFIG_HOME": "/x"})},
			"/cfg/claude", "/cfg/claude/.claude.json",
			[]string{"/p/.mcp.json", "/p/.vscode/mcp.json", "/p/.cursor/mcp.json",
				"/x/Claude/claude_desktop_config.json", "/x/Code/User/mcp.json", "/h/.cursor/mcp.json"}},
		{"darwin", Env{Home: "/h", WorkDir: "/p", GOOS: "darwin"}, "/h/.claude", "/h/.claude.json",
			[]string{"/p/.mcp.json", "/p/.vscode/mcp.json", "/p/.cursor/mcp.json",
				"/h/Library/Application Support/Claude/claude_desktop_config.json",
				"/h/Library/Application Support/Code/User/mcp.json", "/h/.cursor/mcp.json"}},
		{"windows", Env{Home: "/h", WorkDir: "/p", GOOS: "windows", AppData: "/ad"}, "/h/.claude", "/h/.claude.json",
			[]string{"/p/.mcp.json", "/p/.vscode/mcp.json", "/p/.cursor/mcp.json",
				"/ad/Claude/claude_desktop_config.json", "/ad/Code/User/mcp.json", "/h/.cursor/mcp.json"}},
		{"no home", Env{WorkDir: "/p", GOOS: "linux"}, "", "",
			[]string{"/p/.mcp.json", "/p/.vscode/mcp.json", "/p/.cursor/mcp.json"}},
		{"no home, CLAUDE_CONFIG_DIR", Env{WorkDir: "/p", GOOS: "linux", Getenv: env(map[string]string{"CLAUDE_CONFIG_DIR": "/c"})},
			"/c", "/c/.claude.json", []string{"/p/.mcp.json", "/p/.vscode/mcp.json", "/p/.cursor/mcp.json"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ClaudeDir(tc.env); got != filepath.FromSlash(tc.claudeDir) {
				t.Errorf("ClaudeDir = %q, want %q", got, tc.claudeDir)
			}
			if got := ClaudeJSON(tc.env); got != filepath.FromSlash(tc.claudeJSON) {
				t.Errorf("ClaudeJSON = %q, want %q", got, tc.claudeJSON)
			}
			var got []string
			for _, f := range Files(tc.env) {
				got = append(got, filepath.ToSlash(f.Path))
				if f.Project != (f.Rank == RankProject) {
					t.Errorf("%s: Project %v but rank %d", f.Path, f.Project, f.Rank)
				}
			}
			if d := cmp.Diff(tc.files, got); d != "" {
				t.Errorf("Files (-want +got):\n%s", d)
			}
		})
	}
}

// TestInstalled: Claude Code counts as installed by its folder, which
// $CLAUDE_CONFIG_DIR moves.
func TestInstalled(t *testing.T) {
	home, cfg := t.TempDir(), t.TempDir()
	e := Env{Home: home, GOOS: "linux", Getenv: env(map[string]string{"CLAUDE_CONFIG_DIR": cfg})}
	if ok, where := Installed(ClaudeCode, e); !ok || where != cfg {
		t.Errorf("Installed with CLAUDE_CONFIG_DIR = %v, %q; want true, %q", ok, where, cfg)
	}
	e.Getenv = nil
	if ok, where := Installed(ClaudeCode, e); ok || where != filepath.Join(home, ".claude.json") {
		t.Errorf("Installed without = %v, %q", ok, where)
	}
	if err := os.Mkdir(filepath.Join(home, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	if ok, _ := Installed(ClaudeCode, e); !ok {
		t.Error("~/.claude exists but Claude Code is not installed")
	}
}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// TestUnsupported: Codex's TOML and Zed's context_servers, found in their
// default places, are one problem each that names the format; an empty
// context_servers and no files are none.
func TestUnsupported(t *testing.T) {
	dir := filepath.Join("testdata", "unsupported")
	home := t.TempDir()
	copyFile(t, filepath.Join(dir, "codex", "config.toml"), filepath.Join(home, ".codex", "config.toml"))
	copyFile(t, filepath.Join(dir, "zed", "settings.json"), filepath.Join(home, ".config", "zed", "settings.json"))
	probs := Unsupported(Env{Home: home})
	if len(probs) != 2 || !strings.Contains(probs[0].String(), filepath.Join(home, ".codex", "config.toml")+": Codex's config.toml") ||
		!strings.Contains(probs[1].String(), `Zed's settings.json "context_servers"`) {
		t.Errorf("Unsupported = %v, want the Codex and Zed files named", probs)
	}
	if p := Unsupported(Env{Home: t.TempDir()}); p != nil {
		t.Errorf("nothing there: got %v", p)
	}
	codex, xdg := t.TempDir(), t.TempDir()
	copyFile(t, filepath.Join(dir, "codex", "config.toml"), filepath.Join(codex, "config.toml"))
	if err := os.MkdirAll(filepath.Join(xdg, "zed"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(xdg, "zed", "settings.json"), []byte("// mine\n{\"context_servers\": {},}"), 0o644)
	probs = Unsupported(Env{Home: home, Getenv: env(map[string]string{"CODEX_HOME": codex, "XDG_CONFIG_HOME": xdg})})
	if len(probs) != 1 || probs[0].Path != filepath.Join(codex, "config.toml") {
		t.Errorf("with $CODEX_HOME and an empty context_servers first: %v, want only %s", probs, codex)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestClaudeServers reads ~/.claude.json's two scopes: a server left out
// is reported with the file and its name, not silently dropped, and the
// project's servers are this working folder's only.
func TestClaudeServers(t *testing.T) {
	home, wd := t.TempDir(), "/work/proj"
	path := filepath.Join(home, ".claude.json")
	os.WriteFile(path, []byte(`{"mcpServers":{
  "good":{"command":"true"},
  "bad":{"command":5}
},
"projects": {"/work/proj": {"mcpServers": {"mine": {"command": "mine-mcp"}, "broken": {}}},
             "/elsewhere": {"mcpServers": {"theirs": {"command": "theirs-mcp"}}}}}`), 0o644)
	local, user, probs, state := ClaudeServers(path, wd, nil)
	if len(user) != 1 || user[0].Name != "good" || user[0].Line != 2 {
		t.Errorf("user servers %+v, want the good one at line 2", user)
	}
	if len(local) != 1 || local[0].Name != "mine" || local[0].Line != 0 || local[0].File != path+" (project /work/proj)" {
		t.Errorf("project servers %+v, want mine, from the project's entry", local)
	}
	var ps []string
	for _, p := range probs {
		ps = append(ps, p.String())
	}
	want := []string{path + ":3: server bad: command is not a string; left out",
		path + " (project /work/proj): server broken: neither a command nor a url; left out"}
	if d := cmp.Diff(want, ps); d != "" {
		t.Errorf("problems (-want +got):\n%s", d)
	}
	if state != "1 user servers, 1 for this project" {
		t.Errorf("state %q", state)
	}
	if _, _, _, state := ClaudeServers(filepath.Join(home, "none.json"), wd, nil); state != "not found" {
		t.Errorf("a missing file: state %q", state)
	}
	os.WriteFile(path, []byte(`{"mcpServers": `), 0o644)
	if l, u, _, state := ClaudeServers(path, wd, nil); len(l)+len(u) != 0 || !strings.HasPrefix(state, "not JSON") {
		t.Errorf("a broken file: %v %v, state %q", l, u, state)
	}
}
