package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/capbroker/capbroker/internal/oauthtest"
)

// loginBrowser is capbroker login's standard output: it opens the
// authorization URL printed there, as the user would.
type loginBrowser struct {
	mu   sync.Mutex
	text strings.Builder
	errs chan error
}

var loginURLRE = regexp.MustCompile(`http://127\.0\.0\.1:\d+/authorize\?\S+`)

func (b *loginBrowser) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.text.Write(p)
	if u := loginURLRE.FindString(string(p)); u != "" {
		go func() { b.errs <- oauthtest.Browse(u) }()
	}
	return len(p), nil
}

// TestLoginEndToEnd: a remote MCP server behind OAuth. Before
// capbroker login, discover says to run it; login signs in through the
// printed URL and stores the token 0600 in the data directory; then
// discover lists the server's tool and the gateway calls it.
func TestLoginEndToEnd(t *testing.T) {
	w := oauthtest.New(t)
	home := t.TempDir()
	cfg := filepath.Join(home, ".claude.json")
	writeFile(t, cfg, fmt.Sprintf(`{"mcpServers": {"docs": {"type": "http", "url": %q}}}`, w.MCPURL))
	env := map[string]string{"HOME": home}

	out, stderr, _ := runEnv(t, env, "discover", "--json", "--mcp-config", cfg)
	if !strings.Contains(out+stderr, "run capbroker login docs") {
		t.Fatalf("discover before login does not say to log in:\n%s%s", out, stderr)
	}

	_, stderr, code := runEnv(t, env, "login", "nosuch", "--mcp-config", cfg)
	if code == 0 || !strings.Contains(stderr, `no remote MCP server named "nosuch"`) || !strings.Contains(stderr, "docs") {
		t.Errorf("login nosuch: code %d\n%s", code, stderr)
	}

	b := &loginBrowser{errs: make(chan error, 1)}
	var errOut strings.Builder
	m := &Main{Stdin: strings.NewReader(""), Stdout: b, Stderr: &errOut, Getenv: func(k string) string { return env[k] }}
	if err := m.Run(context.Background(), []string{"login", "docs"}); err != nil {
		t.Fatalf("login: %v\n%s%s", err, b.text.String(), errOut.String())
	}
	if err := <-b.errs; err != nil {
		t.Fatalf("browser: %v", err)
	}
	files, _ := filepath.Glob(filepath.Join(home, ".local", "share", "capbroker", "oauth", "docs-*.json"))
	if len(files) != 1 {
		t.Fatalf("token files: %v", files)
	}
	if fi, err := os.Stat(files[0]); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("token file mode: %v %v", fi, err)
	}

	out, stderr, code = runEnv(t, env, "discover", "--json", "--refresh", "--mcp-config", cfg)
	var rep struct {
		Counts struct {
			Tools int `json:"tools"`
		} `json:"counts"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 || rep.Counts.Tools != 1 || strings.Contains(out+stderr, "needs OAuth") {
		t.Errorf("discover after login (code %d):\n%s%s", code, out, stderr)
	}

	g := runGateway(t, map[string]string{"HOME": home, "CAPBROKER_DB": filepath.Join(home, "db")}, nil,
		"--mode", "all", "--index", filepath.Join(home, "index"))
	defer g.stop()
	var tool string
	waitFor(t, "the gateway lists the signed-in server's tool", func() bool {
		for _, n := range g.tools(t) {
			if strings.HasSuffix(n, w.Tool) {
				tool = n
			}
		}
		return tool != ""
	})
	if text, isErr := g.call(t, tool, map[string]any{"query": "retention"}); isErr || text != "found: retention" {
		t.Errorf("call %s: %q (error %v)\n%s", tool, text, isErr, g.stderr.String())
	}
	if p := w.Problems(); len(p) > 0 {
		t.Errorf("protocol problems: %v", p)
	}
}

// TestLoginSSE: a legacy SSE server is named as one that cannot sign in
// with OAuth, not treated as streamable HTTP (login rebuilt every remote
// server as HTTP, so an SSE server went through the HTTP sign-in).
func TestLoginSSE(t *testing.T) {
	home := t.TempDir()
	cfg := filepath.Join(home, ".claude.json")
	writeFile(t, cfg, `{"mcpServers": {"old": {"type": "sse", "url": "http://127.0.0.1:9/sse"}}}`)
	_, stderr, code := runEnv(t, map[string]string{"HOME": home}, "login", "old", "--mcp-config", cfg)
	if code == 0 || !strings.Contains(stderr, "only remote servers over streamable HTTP sign in with OAuth; this one is sse") {
		t.Errorf("login of an SSE server: code %d\n%s", code, stderr)
	}
}
