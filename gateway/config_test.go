package gateway

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/capbroker/capbroker/source/mcpconfig"
	"github.com/google/go-cmp/cmp"
)

// TestParseConfig reads a servers file through the one MCP config parser
// (source/mcpconfig) and the gateway's own settings: a file that is no
// config is an error with its line; a server the gateway cannot front is
// a problem that says the file, line and server.
func TestParseConfig(t *testing.T) {
	const file = "servers.json"
	tests := []struct {
		name      string
		in        string
		want      []ServerConfig
		wantProbs []string // each problem, in order, contains this
		wantErr   string
	}{
		{
			name: "stdio and http",
			in: `{"mcpServers": {
  "web": {"url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer x"}, "timeout": "5s"},
  "fs": {"command": "mcp-server-filesystem", "args": ["/tmp"], "env": {"A": "1"}, "allowIrreversible": true},
  "off": {"command": "x", "disabled": true}
}}`,
			want: []ServerConfig{
				{Name: "fs", Command: "mcp-server-filesystem", Args: []string{"/tmp"}, Env: map[string]string{"A": "1"}, AllowIrreversible: true, File: file, Line: 3},
				{Name: "web", URL: "http://127.0.0.1:9/mcp", Headers: map[string]string{"Authorization": "Bearer x"}, Timeout: 5 * time.Second, File: file, Line: 2},
			},
			wantProbs: []string{file + ":4: server off: disabled in the config; left out"},
		},
		{name: "vs code servers key", in: "\xef\xbb\xbf" + `{"servers": {"a": {"command": "a"}}}`, want: []ServerConfig{{Name: "a", Command: "a", File: file, Line: 1}}},
		{name: "comments and trailing commas", in: "{\n// mine\n\"mcpServers\": {\n\"a\": {\"command\": \"a\", \"allowIrreversible\": true,},\n}}",
			want: []ServerConfig{{Name: "a", Command: "a", AllowIrreversible: true, File: file, Line: 4}}, wantProbs: []string{"not strict JSON"}},
		{name: "syntax error names the line", in: "{\n\"mcpServers\": {\n\"a\": {\"command\": \"a\" \"args\": []}\n}}", wantErr: file + ": line 3, column"},
		{name: "no servers", in: `{"other": 1}`, wantErr: `no "mcpServers" or "servers" object`},
		{name: "both", in: `{"mcpServers": {"a": {"command": "a", "url": "http://x"}}}`,
			want:      []ServerConfig{{Name: "a", Command: "a", File: file, Line: 1}},
			wantProbs: []string{file + `:1: server a: has both command and url`}},
		{name: "neither", in: `{"mcpServers": {"a": {"args": ["x"]}}}`, wantProbs: []string{file + ":1: server a: neither a command nor a url; left out"}},
		{name: "bad timeout", in: `{"mcpServers": {"a": {"command": "a", "timeout": "soon"}}}`, wantProbs: []string{file + `:1: server a: timeout "soon" is not a positive duration`}},
		{name: "bad allowIrreversible", in: "{\"mcpServers\": {\n  \"a\": {\"command\": \"a\", \"allowIrreversible\": \"yes\"}}}",
			wantProbs: []string{file + `:2: server "a": allowIrreversible must be true or false; left out`}},
		{name: "sse and tool filters", in: `{"mcpServers": {"a": {"type": "sse", "url": "http://x/sse", "includeTools": ["t"], "excludeTools": ["u"], "disabledTools": ["v"]}}}`,
			want: []ServerConfig{{Name: "a", URL: "http://x/sse", SSE: true, IncludeTools: []string{"t"}, ExcludeTools: []string{"u", "v"}, File: file, Line: 1}}},
		{name: "wrong type", in: `{"mcpServers": {"a": {"command": 3}}}`, wantProbs: []string{file + ":1: server a: command is not a string; left out"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, probs, err := ParseConfig(file, []byte(tc.in), nil)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, cfg.Servers); diff != "" {
				t.Errorf("servers (-want +got):\n%s", diff)
			}
			if len(probs) != len(tc.wantProbs) {
				t.Fatalf("problems %q, want %d", probs, len(tc.wantProbs))
			}
			for i, w := range tc.wantProbs {
				if !strings.Contains(probs[i].String(), w) {
					t.Errorf("problem %d = %q, want it to contain %q", i, probs[i], w)
				}
			}
		})
	}
}

// TestLoadConfig reads a file by path: the config and its servers name it.
func TestLoadConfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "servers.json")
	if err := os.WriteFile(path, []byte(`{"mcpServers": {"a": {"command": "a"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, probs, err := LoadConfig(path, nil)
	if err != nil || len(probs) > 0 || cfg.Path != path || len(cfg.Servers) != 1 || cfg.Servers[0].Where() != path+":1" {
		t.Fatalf("LoadConfig = %+v, %v, %v", cfg, probs, err)
	}
	if _, _, err := LoadConfig(path+".missing", nil); err == nil || !strings.Contains(err.Error(), "servers.json.missing") {
		t.Errorf("a missing file: %v", err)
	}
}

func TestParseModeAndNamespacing(t *testing.T) {
	for in, want := range map[string]Mode{"": ModeAuto, "auto": ModeAuto, "search": ModeSearch, "call": ModeCall, "all": ModeAll} {
		if got, err := ParseMode(in); err != nil || got != want {
			t.Errorf("ParseMode(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseMode("some"); err == nil || !strings.Contains(err.Error(), "auto, search, call or all") {
		t.Errorf("ParseMode(some): %v", err)
	}
	if _, err := ParseNamespacing("never"); err == nil {
		t.Error("ParseNamespacing(never) should fail")
	}
}

func TestTemplateRegexp(t *testing.T) {
	tests := []struct {
		tmpl, uri string
		want      bool
	}{
		{"test://template/{id}/data", "test://template/42/data", true},
		{"test://template/{id}/data", "test://template/4/2/data", false},
		{"file:///{+path}", "file:///a/b/c.txt", true},
		{"x://{a}", "y://b", false},
	}
	for _, tc := range tests {
		if got := templateRegexp(tc.tmpl).MatchString(tc.uri); got != tc.want {
			t.Errorf("%s ~ %s = %v, want %v", tc.tmpl, tc.uri, got, tc.want)
		}
	}
}

// TestFromMCPConfig maps definitions read from any client's config (by
// source/mcpconfig, variables expanded) to upstreams, with the gateway's
// own settings read from the definition as written.
func TestFromMCPConfig(t *testing.T) {
	const file = "/home/me/.config/Code/User/mcp.json"
	data := `{
  // VS Code allows comments
  "servers": {
    "fs": {"command": "mcp-fs", "args": ["${userHome}/src"], "env": {"K": "${env:K}"}, "cwd": "/w", "allowIrreversible": true, "timeout": "5s",},
    "web": {"type": "http", "url": "https://x/mcp", "headers": {"Authorization": "Bearer ${env:TOKEN}"}, "timeout": 1500},
    "old": {"type": "sse", "url": "https://x/sse", "disabledTools": ["drop"]},
    "badtime": {"command": "a", "timeout": "soon"},
    "badallow": {"command": "a", "allowIrreversible": "yes"}
  }
}`
	env := map[string]string{"K": "v", "TOKEN": "t0k"}
	servers, probs, err := mcpconfig.Parse(file, []byte(data), &mcpconfig.Options{
		Getenv: func(k string) string { return env[k] }, Vars: map[string]string{"userHome": "/home/me"}})
	if err != nil || len(probs) != 2 || !strings.Contains(probs[1].Reason, `badtime: timeout "soon" is not a positive duration`) { // "not strict JSON", badtime
		t.Fatalf("parse: %v %v", err, probs)
	}
	var got []ServerConfig
	var errs []string
	for _, s := range servers {
		c, err := FromMCPConfig(s)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		got = append(got, c)
	}
	want := []ServerConfig{
		{Name: "fs", Command: "mcp-fs", Args: []string{"/home/me/src"}, Env: map[string]string{"K": "v"}, Dir: "/w",
			AllowIrreversible: true, Timeout: 5 * time.Second, File: file, Line: 4, Secrets: []mcpconfig.Secret{{Var: "K", Value: "v"}}},
		{Name: "old", URL: "https://x/sse", SSE: true, ExcludeTools: []string{"drop"}, File: file, Line: 6},
		{Name: "web", URL: "https://x/mcp", Headers: map[string]string{"Authorization": "Bearer t0k"},
			Timeout: 1500 * time.Millisecond, File: file, Line: 5, Secrets: []mcpconfig.Secret{{Var: "TOKEN", Value: "t0k"}}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("servers (-want +got):\n%s", diff)
	}
	wantErrs := []string{
		`server "badallow": allowIrreversible must be true or false`,
	}
	if len(errs) != len(wantErrs) {
		t.Fatalf("errors %q, want %d", errs, len(wantErrs))
	}
	for i, w := range wantErrs {
		if !strings.Contains(errs[i], w) {
			t.Errorf("error %d = %q, want %q", i, errs[i], w)
		}
	}
	if got[0].Where() != file+":4" {
		t.Errorf("Where = %q", got[0].Where())
	}
}
