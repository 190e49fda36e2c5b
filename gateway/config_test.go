package gateway

import (
	"strings"
	"testing"
	"time"

	"github.com/capbroker/capbroker/source/mcpconfig"
	"github.com/google/go-cmp/cmp"
)

func TestParseConfig(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []ServerConfig
		wantErr string
	}{
		{
			name: "stdio and http",
			in: `{"mcpServers": {
  "web": {"url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer x"}, "timeout": "5s"},
  "fs": {"command": "mcp-server-filesystem", "args": ["/tmp"], "env": {"A": "1"}, "allowIrreversible": true},
  "off": {"command": "x", "disabled": true}
}}`,
			want: []ServerConfig{
				{Name: "fs", Command: "mcp-server-filesystem", Args: []string{"/tmp"}, Env: map[string]string{"A": "1"}, AllowIrreversible: true},
				{Name: "web", URL: "http://127.0.0.1:9/mcp", Headers: map[string]string{"Authorization": "Bearer x"}, Timeout: 5 * time.Second},
			},
		},
		{name: "vs code servers key", in: "\xef\xbb\xbf" + `{"servers": {"a": {"command": "a"}}}`, want: []ServerConfig{{Name: "a", Command: "a"}}},
		{name: "syntax error names the line", in: "{\n\"mcpServers\": {\n\"a\": {\"command\": \"a\",}\n}}", wantErr: "line 3, column"},
		{name: "no servers", in: `{"other": 1}`, wantErr: `no "mcpServers"`},
		{name: "both", in: `{"mcpServers": {"a": {"command": "a", "url": "http://x"}}}`, wantErr: `server "a": has both command and url`},
		{name: "neither", in: `{"mcpServers": {"a": {"args": ["x"]}}}`, wantErr: `server "a": has neither command nor url`},
		{name: "bad timeout", in: `{"mcpServers": {"a": {"command": "a", "timeout": "soon"}}}`, wantErr: `server "a": timeout "soon"`},
		{name: "sse and tool filters", in: `{"mcpServers": {"a": {"type": "sse", "url": "http://x/sse", "includeTools": ["t"], "excludeTools": ["u"], "disabledTools": ["v"]}}}`,
			want: []ServerConfig{{Name: "a", URL: "http://x/sse", SSE: true, IncludeTools: []string{"t"}, ExcludeTools: []string{"u", "v"}}}},
		{name: "wrong type", in: `{"mcpServers": {"a": {"command": 3}}}`, wantErr: `server "a"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := ParseConfig([]byte(tc.in))
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
		})
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
