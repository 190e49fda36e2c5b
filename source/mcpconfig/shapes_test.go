package mcpconfig

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestClientShapes reads the config shapes of other MCP clients, kept in
// testdata/shapes as those clients write them.
func TestClientShapes(t *testing.T) {
	dir := filepath.Join("testdata", "shapes")
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		file string
		vars map[string]string
		want []Server
	}{
		{
			file: "vscode/.vscode/mcp.json",
			vars: map[string]string{"workspaceFolder": filepath.Join(abs, "vscode")},
			want: []Server{
				{Name: "github", Transport: Stdio, Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-github"},
					Env:     map[string]string{"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_0123456789abcdef", "GITHUB_API_URL": "https://api.github.com", "QUOTED": "a value # with a hash"},
					Secrets: []Secret{{"GITHUB_PERSONAL_ACCESS_TOKEN", "ghp_0123456789abcdef"}, {"GITHUB_API_URL", "https://ignored.example"}, {"QUOTED", "a value # with a hash"}}},
				{Name: "memory", Transport: Stdio, Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-memory"},
					Env: map[string]string{"MEMORY_FILE_PATH": "/data/memory.json"}, Secrets: []Secret{{"MEMORY_FILE_PATH", "/data/memory.json"}}},
			},
		},
		{
			file: "cursor/.cursor/mcp.json",
			want: []Server{{Name: "postgres", Transport: Stdio, Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-postgres"},
				Env: map[string]string{"DATABASE_URL": "postgres://app:hunter22@localhost/app"}, Secrets: []Secret{{"DATABASE_URL", "postgres://app:hunter22@localhost/app"}}}},
		},
		{
			file: "gemini/.gemini/settings.json",
			want: []Server{
				{Name: "everything", Transport: Stdio, Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-everything"},
					IncludeTools: []string{"echo", "add", "printEnv"}, ExcludeTools: []string{"printEnv"}, Timeout: 30 * time.Second},
				{Name: "remote", Transport: HTTP, URL: "https://mcp.example.com/mcp", ExcludeTools: []string{"delete_everything"}},
			},
		},
		{
			file: "windsurf/mcp_config.json",
			want: []Server{
				{Name: "everything", Transport: Stdio, Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-everything"},
					ExcludeTools: []string{"longRunningOperation", "sampleLLM"}},
				{Name: "figma", Transport: HTTP, URL: "https://mcp.figma.example/sse"},
			},
		},
		{
			file: "cline/cline_mcp_settings.json",
			want: []Server{
				{Name: "everything", Transport: Stdio, Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-everything"}, Timeout: time.Minute},
				{Name: "legacy", Transport: SSE, URL: "http://localhost:3001/sse", Timeout: 2 * time.Minute},
			},
		},
		{
			file: "roo/.roo/mcp.json",
			want: []Server{{Name: "everything", Transport: Stdio, Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-everything"}, Timeout: 90 * time.Second}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			got, probs, err := Load(filepath.Join(dir, tt.file), &Options{Vars: tt.vars})
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range probs {
				if strings.HasPrefix(p.Reason, "not strict JSON") { // VS Code's comments
					continue
				}
				t.Errorf("unexpected problem: %s", p)
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreFields(Server{}, "File", "Line", "Raw"), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("servers (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEnvFileRedacted(t *testing.T) {
	got, _, err := Load(filepath.Join("testdata", "shapes", "cursor", ".cursor", "mcp.json"), nil)
	if err != nil || len(got) != 1 {
		t.Fatalf("Load: %v, %d servers", err, len(got))
	}
	s := got[0]
	msg := s.Redact("connecting with DATABASE_URL=" + s.Env["DATABASE_URL"] + " failed")
	if strings.Contains(msg, "hunter22") || !strings.Contains(msg, "${DATABASE_URL}") {
		t.Errorf("envFile value not redacted: %s", msg)
	}
}

func TestEnvFileErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct{ env, want string }{
		{"", "envFile: "}, // missing file
		{"GOOD=1\nno equals sign\n", ".env:2: not a KEY=VALUE line"},
		{"K=\"unterminated\\\"\n", ".env:1: bad quoted value"},
	}
	for _, tt := range tests {
		cfg := `{"mcpServers": {"s": {"command": "x", "envFile": ".env"}, "ok": {"command": "y"}}}`
		if tt.env != "" {
			writeFile(t, filepath.Join(dir, ".env"), tt.env)
		}
		path := filepath.Join(dir, "mcp.json")
		writeFile(t, path, cfg)
		got, probs, err := Load(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].Name != "ok" {
			t.Errorf("%q: want only server ok, got %v", tt.env, got)
		}
		if len(probs) != 1 || !strings.Contains(probs[0].Reason, tt.want) || !strings.Contains(probs[0].Reason, "server s:") {
			t.Errorf("%q: problems %v, want one containing %q", tt.env, probs, tt.want)
		}
	}
}

func TestToolAllowed(t *testing.T) {
	s := Server{IncludeTools: []string{"echo", "add"}, ExcludeTools: []string{"add"}}
	for name, want := range map[string]bool{"echo": true, "add": false, "other": false} {
		if got := s.ToolAllowed(name); got != want {
			t.Errorf("ToolAllowed(%q) = %v, want %v", name, got, want)
		}
	}
	if !(&Server{}).ToolAllowed("any") {
		t.Error("no lists must allow every tool")
	}
	// Patterns: only read_* and list_directory, never read_secret*.
	p := Server{IncludeTools: []string{"read_*", "list_directory"}, ExcludeTools: []string{"read_secret*", "[bad"}}
	for name, want := range map[string]bool{"read_file": true, "list_directory": true, "read_secret_key": false, "write_file": false} {
		if got := p.ToolAllowed(name); got != want {
			t.Errorf("patterns: ToolAllowed(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestTimeoutNumbers(t *testing.T) {
	tests := []struct {
		path, def string
		want      time.Duration
		err       string
	}{
		{"gemini/settings.json", `{"command": "x", "timeout": 600000}`, 10 * time.Minute, ""},
		{"x/cline_mcp_settings.json", `{"command": "x", "timeout": 60}`, time.Minute, ""},
		{"x/mcp.json", `{"command": "x", "timeout": 60, "autoApprove": []}`, time.Minute, ""},
		{"x/mcp.json", `{"command": "x", "timeout": "45s"}`, 45 * time.Second, ""},
		{"x/mcp.json", `{"command": "x", "timeout": "soon"}`, 0, `timeout "soon" is not a positive duration`},
		{"x/mcp.json", `{"command": "x", "timeout": -1}`, 0, "timeout -1 is not positive"},
	}
	for _, tt := range tests {
		got, probs, err := Parse(tt.path, []byte(`{"mcpServers": {"s": `+tt.def+`}}`), nil)
		if err != nil {
			t.Fatal(err)
		}
		if tt.err != "" {
			if len(probs) != 1 || !strings.Contains(probs[0].Reason, tt.err) {
				t.Errorf("%s %s: problems %v, want %q", tt.path, tt.def, probs, tt.err)
			}
			continue
		}
		if len(got) != 1 || got[0].Timeout != tt.want {
			t.Errorf("%s %s: got %v, want timeout %v", tt.path, tt.def, got, tt.want)
		}
	}
}

func TestUnsupportedFormats(t *testing.T) {
	dir := filepath.Join("testdata", "shapes")
	for file, want := range map[string]error{"codex/config.toml": ErrCodexTOML, "zed/settings.json": ErrZed} {
		_, _, err := Load(filepath.Join(dir, file), nil)
		if !errors.Is(err, want) || !strings.Contains(err.Error(), file) {
			t.Errorf("Load(%s) = %v, want %v naming the file", file, err, want)
		}
	}

}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}
