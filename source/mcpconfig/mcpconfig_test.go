package mcpconfig

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capbroker/capbroker/internal/testenv"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestParse(t *testing.T) {
	env := map[string]string{"HOME": "/home/u", "TOKEN": "s3cret"}
	opts := &Options{
		Getenv: func(k string) string { return env[k] },
		Vars:   map[string]string{"CLAUDE_PLUGIN_ROOT": "/plug", "workspaceFolder": "/ws"},
	}
	tests := []struct {
		name  string
		in    string
		want  []Server
		probs []string
		err   string
	}{
		{
			name: "claude code .mcp.json",
			in: `{"mcpServers": {
			  "fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "${HOME}/src"], "env": {"DEBUG": "${DEBUG:-0}"}},
			  "api": {"type": "http", "url": "https://api.example/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}},
			  "old": {"type": "sse", "url": "https://old.example/sse"},
			  "plug": {"command": "${CLAUDE_PLUGIN_ROOT}/bin/server"}
			}}`,
			want: []Server{
				{Name: "api", Transport: HTTP, URL: "https://api.example/mcp", Headers: map[string]string{"Authorization": "Bearer s3cret"}, Line: 3,
					Secrets: []Secret{{"TOKEN", "s3cret"}}},
				{Name: "fs", Transport: Stdio, Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem", "/home/u/src"}, Env: map[string]string{"DEBUG": "0"}, Line: 2,
					Secrets: []Secret{{"HOME", "/home/u"}}},
				{Name: "old", Transport: SSE, URL: "https://old.example/sse", Line: 4},
				{Name: "plug", Transport: Stdio, Command: "/plug/bin/server", Line: 5},
			},
		},
		{
			name: "vs code mcp.json with comments and inputs",
			in: `{
			  // servers for this workspace
			  "inputs": [{"type": "promptString", "id": "key"}],
			  "servers": {
			    "git": {"type": "stdio", "command": "uvx", "args": ["mcp-server-git", "--repository", "${workspaceFolder}"],},
			    "keyed": {"type": "http", "url": "https://k.example", "headers": {"X-Key": "${input:key}"}},
			    "remote": {"url": "https://r.example/mcp"},
			  },
			}`,
			want: []Server{
				{Name: "git", Transport: Stdio, Command: "uvx", Args: []string{"mcp-server-git", "--repository", "/ws"}, Line: 5},
				{Name: "remote", Transport: HTTP, URL: "https://r.example/mcp", Line: 7},
			},
			probs: []string{
				"f:6: server keyed: needs VS Code input key, which only VS Code can prompt for; left out",
				"f: not strict JSON (comments or trailing commas); read anyway",
			},
		},
		{
			name: "bad servers are left out, others kept",
			in: `{"mcpServers": {"a": {"command": "ok"}, "b": {}, "c": {"type": "carrier-pigeon", "url": "x"},
			  "d": {"type": "http"}, "e": {"command": "x", "disabled": true}, "f": "nope", "g": {"command": "run", "env": {"K": "${UNSET}"}}}}`,
			want: []Server{
				{Name: "a", Transport: Stdio, Command: "ok", Line: 1},
				{Name: "g", Transport: Stdio, Command: "run", Env: map[string]string{"K": ""}, Line: 2},
			},
			probs: []string{
				"f:1: server b: neither a command nor a url; left out",
				"f:1: server c: unknown type \"carrier-pigeon\"; left out",
				"f:2: server d: http server has no url; left out",
				"f:2: server e: disabled in the config; left out",
				"f:2: server f: not a server definition: a JSON string, not an object; left out",
				"f:2: server g: variable UNSET is not set; expanded to \"\"",
			},
		},
		{name: "command and url", in: `{"mcpServers": {"a": {"command": "run", "url": "https://a.example/mcp"}, "b": {"type": "http", "command": "run", "url": "https://b.example/mcp"}}}`,
			want: []Server{{Name: "a", Transport: Stdio, Command: "run", URL: "https://a.example/mcp", Line: 1},
				{Name: "b", Transport: HTTP, Command: "run", URL: "https://b.example/mcp", Line: 1}},
			probs: []string{`f:1: server a: has both command and url; read as a stdio server (give "type" to choose)`}},
		{name: "no servers key", in: `{"other": 1}`, err: `no "mcpServers" or "servers" object`},
		{name: "garbage", in: "{\"mcpServers\": {\n  \"a\": }", err: "line 2, column 8"},
		{name: "settings.json nesting", in: `{"mcp": {"servers": {"x": {"command": "y"}}}}`, want: []Server{{Name: "x", Transport: Stdio, Command: "y", Line: 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, probs, err := Parse("f", []byte(tt.in), opts)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreFields(Server{}, "Raw", "File"), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("servers (-want +got):\n%s", diff)
			}
			var ps []string
			for _, p := range probs {
				ps = append(ps, p.String())
				// Only a "disabled": true entry is marked Disabled: the
				// user's choice, not a fault.
				if want := strings.Contains(p.Reason, "disabled in the config"); p.Disabled != want {
					t.Errorf("%s: Disabled %v, want %v", p, p.Disabled, want)
				}
			}
			if diff := cmp.Diff(tt.probs, ps, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCorpus reads every .mcp.json of the corpus: the README counts 148
// HTTP servers, one SSE and one stdio server. 32 of the HTTP servers have
// an empty url (a placeholder for the user to fill in): they are left out
// with that reason.
func TestCorpus(t *testing.T) {
	root := testenv.NeedShared(t, "corpus")
	byTransport := map[string]int{}
	files := 0
	err := filepath.WalkDir(root, func(p string, de os.DirEntry, err error) error {
		if err != nil || de.Name() != ".mcp.json" {
			return err
		}
		files++
		servers, probs, err := Load(p, nil)
		if err != nil {
			t.Errorf("%v", err)
			return nil
		}
		for _, pr := range probs {
			if pr.Skipped && strings.HasSuffix(pr.Reason, "http server has no url; left out") {
				byTransport["http without url"]++
				continue
			}
			t.Errorf("%s", pr)
		}
		for _, s := range servers {
			byTransport[s.Transport]++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{HTTP: 116, "http without url": 32, SSE: 1, Stdio: 1}
	if files != 20 {
		t.Errorf("files = %d, want 20", files)
	}
	if diff := cmp.Diff(want, byTransport); diff != "" {
		t.Errorf("servers by transport (-want +got):\n%s", diff)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"mcpServers": {"a": {"command": "x", "args": ["${A:-b}"], "env": {"K": "${env:K}"}}}}`,
		`{"servers": {"b": {"type": "http", "url": "${input:u}", "headers": {"h": "v"}},}}`,
		`{"mcp": {"servers": {"c": {"command": ["a", "b"]}}}}`,
		`{"mcpServers": {"d": {"type": "sse"}, "e": 1, "f": null}}`,
		`{"mcpServers": []}`, `{`, `null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		servers, _, err := Parse("f", data, &Options{Getenv: func(string) string { return "v" }})
		if err != nil {
			return
		}
		for _, s := range servers {
			switch s.Transport {
			case Stdio:
				if s.Command == "" {
					t.Errorf("stdio server %q without a command", s.Name)
				}
			case HTTP, SSE:
				if s.URL == "" {
					t.Errorf("%s server %q without a url", s.Transport, s.Name)
				}
			default:
				t.Errorf("server %q has transport %q", s.Name, s.Transport)
			}
		}
	})
}

// TestRedact: values from the environment are shown as ${VAR} again,
// also URL-escaped; the command line is quoted for a shell.
func TestRedact(t *testing.T) {
	env := map[string]string{"KEY": "sk-live 123/x", "SHORT": "ab", "HOME": "/home/u"}
	servers, _, err := Parse("f", []byte(`{"mcpServers": {
	  "s": {"command": "srv", "args": ["--key=${KEY}", "${HOME}/data", "${SHORT}", "two words"]},
	  "h": {"url": "https://h.example/mcp?k=${KEY}"}}}`), &Options{Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	h, s := servers[0], servers[1]
	for _, tc := range []struct{ got, want string }{
		{s.CommandLine(), `srv '--key=${KEY}' ${HOME}/data ab 'two words'`},
		{h.CommandLine(), "https://h.example/mcp?k=${KEY}"},
		{h.Redact(`Post "https://h.example/mcp?k=sk-live+123%2Fx": refused; sk-live%20123%2Fx`), `Post "https://h.example/mcp?k=${KEY}": refused; ${KEY}`},
		{NewRedactor().Redact("sk-live 123/x"), "sk-live 123/x"},
	} {
		if tc.got != tc.want {
			t.Errorf("got  %s\nwant %s", tc.got, tc.want)
		}
	}
}

// TestEnviron: a stdio server gets the safe set, what its config names
// and what inheritEnv lists; not the rest.
func TestEnviron(t *testing.T) {
	base := []string{"PATH=/bin", "HOME=/h", "LC_ALL=C", "CAPBROKER_GATEWAY_TOKEN=tok", "OPENAI_API_KEY=k", "AWS_PROFILE=p", "OWN=base"}
	servers, _, err := Parse("f", []byte(`{"mcpServers": {
	  "a": {"command": "a", "env": {"OWN": "mine"}},
	  "b": {"command": "b", "inheritEnv": ["AWS_PROFILE"]},
	  "c": {"command": "c", "inheritEnv": true}}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"a": {"PATH=/bin", "HOME=/h", "LC_ALL=C", "OWN=mine"},
		"b": {"PATH=/bin", "HOME=/h", "LC_ALL=C", "AWS_PROFILE=p"},
		"c": base,
	}
	for i := range servers {
		s := &servers[i]
		if diff := cmp.Diff(want[s.Name], Environ(base, s, false)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", s.Name, diff)
		}
	}
	if got := Environ(base, &servers[0], true); len(got) != len(base) {
		t.Errorf("inheritAll: %v", got)
	}
	got, probs, _ := Parse("f", []byte(`{"mcpServers": {"x": {"command": "x", "inheritEnv": "yes"}}}`), nil)
	if len(got) != 0 || len(probs) != 1 || !strings.Contains(probs[0].Reason, "inheritEnv must be true, false or a list") {
		t.Errorf("a bad inheritEnv: %v %v", got, probs)
	}
}
