package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
)

// TestRemoteNeedsOAuth: a remote server protected by OAuth (401 with a
// Bearer challenge) is reported by discover and by the gateway's log as
// needing OAuth, by name, with what to do.
func TestRemoteNeedsOAuth(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="http://`+r.Host+`/.well-known/oauth-protected-resource"`)
		http.Error(w, "unauthorized", http.StatusUnauthorized)
	}))
	defer ts.Close()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "servers.json")
	writeFile(t, cfg, fmt.Sprintf(`{"mcpServers": {"linear": {"type": "http", "url": %q}}}`, ts.URL+"/mcp"))
	env := map[string]string{"HOME": dir}
	want := []string{"MCP server linear at " + ts.URL + "/mcp needs OAuth", `"Authorization": "Bearer ${LINEAR_TOKEN}"`}

	out, stderr, _ := runEnv(t, env, "discover", "--mcp-config", cfg, "--verbose")
	for _, w := range want {
		if !strings.Contains(out+stderr, w) {
			t.Errorf("discover lacks %q:\n%s%s", w, out, stderr)
		}
	}
	out, _, _ = runEnv(t, env, "discover", "--mcp-config", cfg, "--json", "--refresh")
	for _, w := range want {
		if !strings.Contains(out, strings.ReplaceAll(w, `"`, `\"`)) {
			t.Errorf("discover --json lacks %q:\n%s", w, out)
		}
	}

	g := runGateway(t, map[string]string{"HOME": dir, "CAPBROKER_DB": filepath.Join(dir, "db")}, nil, "--config", cfg, "--index", filepath.Join(dir, "index"))
	waitFor(t, "the gateway logs that linear needs OAuth", func() bool {
		return strings.Contains(g.stderr.String(), "needs OAuth")
	})
	if log := g.stderr.String(); !strings.Contains(log, "MCP server linear at") || !strings.Contains(log, "LINEAR_TOKEN") {
		t.Errorf("gateway log:\n%s", log)
	}
}
