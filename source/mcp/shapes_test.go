package mcp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/capbroker/capbroker/source/mcpconfig"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestSSEAndToolFilters lists a legacy SSE server (the SDK's SSE handler)
// defined in Gemini CLI's shape: includeTools and excludeTools decide
// which tools become cards, and the
// configured header is sent on every request.
func TestSSEAndToolFilters(t *testing.T) {
	var sawHeader atomic.Bool
	h := sdk.NewSSEHandler(func(r *http.Request) *sdk.Server {
		s := sdk.NewServer(&sdk.Implementation{Name: "legacy", Version: "1"}, nil)
		for _, n := range []string{"echo", "add", "printEnv", "other"} {
			s.AddTool(&sdk.Tool{Name: n, Description: "The " + n + " tool.", InputSchema: map[string]any{"type": "object"}},
				func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
					return &sdk.CallToolResult{}, nil
				})
		}
		return s
	}, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Key") == "k3y-value" {
			sawHeader.Store(true)
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)

	cfg := filepath.Join(t.TempDir(), "settings.json")
	def := `{"mcpServers": {"legacy": {"type": "sse", "url": "` + srv.URL + `", "headers": {"X-Key": "${KEY}"},
	  "includeTools": ["echo", "add", "printEnv"], "excludeTools": ["printEnv"]}}}`
	if err := os.WriteFile(cfg, []byte(def), 0o600); err != nil {
		t.Fatal(err)
	}
	servers, probs, err := mcpconfig.Load(cfg, &mcpconfig.Options{Getenv: func(k string) string {
		return map[string]string{"KEY": "k3y-value"}[k]
	}})
	if err != nil || len(probs) > 0 || len(servers) != 1 {
		t.Fatalf("Load: %v %v %v", err, probs, servers)
	}
	cards, err := List(context.Background(), servers[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(cards); !slices.Equal(got, []string{"add", "echo"}) {
		t.Errorf("cards %v, want add and echo (includeTools minus excludeTools)", got)
	}
	if cards[0].Meta[MetaTransport] != mcpconfig.SSE || !sawHeader.Load() {
		t.Errorf("transport %q, header sent %v", cards[0].Meta[MetaTransport], sawHeader.Load())
	}
}
