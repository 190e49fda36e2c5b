package mcp

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/capbroker/capbroker/source/mcpconfig"
)

// TestNeedsOAuth: a remote server that answers 401 with a Bearer
// challenge (as MCP servers protected by OAuth do) gives an error that
// names the server, says it needs OAuth and what to do; a refused token,
// and a server wanting other credentials, say so too.
func TestNeedsOAuth(t *testing.T) {
	for _, tc := range []struct {
		name      string
		status    int
		challenge string
		headers   map[string]string
		want      []string
	}{
		{"oauth", 401, `Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource", scope="files:read"`, nil,
			[]string{"MCP server docs-api at http://", "needs OAuth", "401 Unauthorized", "resource_metadata=", `"headers": {"Authorization": "Bearer ${DOCS_API_TOKEN}"}`}},
		{"token refused", 401, `Bearer error="invalid_token"`, map[string]string{"authorization": "Bearer old"},
			[]string{"MCP server docs-api", "refused the Authorization header its config sends", `error="invalid_token"`, "renew it"}},
		{"basic", 401, `Basic realm="x"`, nil, []string{"MCP server docs-api", "needs credentials", "401 Unauthorized"}},
		{"forbidden with scope", 403, `Bearer error="insufficient_scope", scope="admin"`, nil, []string{"needs OAuth", "403 Forbidden"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var hits int
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				hits++
				w.Header().Set("WWW-Authenticate", tc.challenge)
				http.Error(w, "unauthorized", tc.status)
			}))
			defer ts.Close()
			s := mcpconfig.Server{Name: "docs-api", Transport: mcpconfig.HTTP, URL: ts.URL + "/mcp", Headers: tc.headers}
			_, err := List(context.Background(), s, &Options{Timeout: 10 * time.Second})
			if err == nil || !errors.Is(err, ErrNeedsAuth) {
				t.Fatalf("err = %v", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
			if hits == 0 {
				t.Error("the server was not asked")
			}
		})
	}
}
