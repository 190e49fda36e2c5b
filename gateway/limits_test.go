package gateway

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// pagingServer is an HTTP MCP upstream whose tools/list pages never end:
// each page has perPage tools and a next cursor; with loop, the cursors
// go round in a circle of three. pages counts the pages served.
func pagingServer(t *testing.T, perPage int, loop bool, pages *atomic.Int64) string {
	t.Helper()
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server {
		s := mcp.NewServer(&mcp.Implementation{Name: "pager", Version: "1"}, nil)
		s.AddTool(&mcp.Tool{Name: "seed", InputSchema: map[string]any{"type": "object"}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			})
		s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				if method != "tools/list" {
					return next(ctx, method, req)
				}
				n := pages.Add(1)
				res := &mcp.ListToolsResult{NextCursor: fmt.Sprint("page-", n)}
				if loop {
					res.NextCursor = fmt.Sprint("page-", n%3)
				}
				for i := range perPage {
					res.Tools = append(res.Tools, &mcp.Tool{Name: fmt.Sprintf("t%d_%d", n, i), Description: "A tool.",
						InputSchema: map[string]any{"type": "object"}})
				}
				return res, nil
			}
		})
		return s
	}, nil))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestListingBounds: an upstream whose tools/list pages forever (or in a
// circle) is read once, up to the bounds, and stays connected with its
// first tools; the gateway neither spins nor reconnects. (The old gateway
// paged until the start timeout, failed the upstream and retried, at 1.7
// cores.)
func TestListingBounds(t *testing.T) {
	for _, tc := range []struct {
		name                string
		perPage             int
		loop                bool
		maxItems, maxPages  int
		wantTools, wantPage int64
		want                string
	}{
		{"pages forever", 2, false, 1000, 20, 40, 20, "stopped after 20 pages"},
		{"too many tools", 10, false, 35, 100, 35, 4, "kept the first 35"},
		{"cursors in a circle", 2, true, 1000, 100, 8, 4, "a cursor it had sent before"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var pages atomic.Int64
			url := pagingServer(t, tc.perPage, tc.loop, &pages)
			g := startGateway(t, []ServerConfig{{Name: "pager", URL: url}}, &Options{Mode: ModeAll,
				MaxListItems: tc.maxItems, MaxListPages: tc.maxPages, StartTimeout: time.Minute})
			st := g.Status()[0]
			if !st.Connected || int64(st.Tools) != tc.wantTools || !strings.Contains(st.Truncated, tc.want) {
				t.Fatalf("status %+v: want connected with %d tools, truncated %q", st, tc.wantTools, tc.want)
			}
			if n := int64(len(g.Tools())); n != tc.wantTools {
				t.Errorf("%d tools in the catalog, want %d", n, tc.wantTools)
			}
			served := pages.Load()
			time.Sleep(300 * time.Millisecond) // a retry loop would page on meanwhile
			if after := pages.Load(); served != tc.wantPage || after != served {
				t.Errorf("pages served: %d, then %d; want %d, once", served, after, tc.wantPage)
			}
			if st := g.Status()[0]; st.Restarts != 0 || !st.Connected {
				t.Errorf("the upstream was restarted: %+v", st)
			}
		})
	}
}
