package clientconfig

import (
	"os"
	"path/filepath"
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
