package mcpconfig

import (
	"strings"
	"testing"
)

// FuzzParseRedacted feeds the MCP config reader (JSONC: comments, trailing
// commas; every client's shape) arbitrary bytes: it must not panic, and
// what it returns must hold together: every server has a name and a
// transport, a stdio server a command, a remote one a URL, and its
// printable command line shows no expanded secret.
func FuzzParseRedacted(f *testing.F) {
	for _, seed := range []string{
		`{"mcpServers": {"fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]}}}`,
		`{"mcpServers": {"web": {"type": "http", "url": "https://x.example/mcp?key=${KEY}", "headers": {"Authorization": "Bearer ${env:TOKEN}"}}}}`,
		"{\n  // a comment\n  \"servers\": {\"a\": {\"command\": \"a\", \"env\": {\"K\": \"${K}\"},},},\n}",
		`{"mcp": {"servers": {"x": {"command": ["uv", "run", "srv"], "inheritEnv": ["AWS_PROFILE"], "timeout": "5s"}}}}`,
		`{"mcpServers": {"g": {"httpUrl": "http://127.0.0.1:1/mcp", "timeout": 1500, "includeTools": ["a"], "excludeTools": ["b"]}}}`,
		`{"mcpServers": {"s": {"type": "sse", "serverUrl": "http://h/sse"}}}`,
		`{"mcpServers": {"bad": {"command": 3}}}`,
		`{"mcpServers": []}`,
		`[]`, `null`, ``, `{`, "\xff\xfe",
	} {
		f.Add([]byte(seed))
	}
	env := map[string]string{"KEY": "sk-secret-1234", "TOKEN": "tok-5678", "K": "kval"}
	opts := &Options{Getenv: func(k string) string { return env[k] }}
	f.Fuzz(func(t *testing.T, data []byte) {
		servers, _, err := Parse("/project/.mcp.json", data, opts)
		if err != nil {
			return
		}
		for _, s := range servers {
			if s.Name == "" || s.Transport == "" {
				t.Fatalf("server without a name or transport: %+v", s)
			}
			if s.Transport == Stdio && s.Command == "" {
				t.Fatalf("stdio server %q without a command", s.Name)
			}
			if s.Transport != Stdio && s.URL == "" {
				t.Fatalf("%s server %q without a URL", s.Transport, s.Name)
			}
			line := s.CommandLine()
			for _, sec := range s.Secrets {
				if len(sec.Value) >= 4 && sec.Value != "true" && sec.Value != "false" && strings.Contains(line, sec.Value) {
					t.Fatalf("command line %q shows the secret of ${%s}", line, sec.Var)
				}
			}
		}
	})
}
