package gateway

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestAllModeSharedListing: in front of a huge upstream (2,500 tools),
// all-mode sessions list every tool, page by page, from one list shared
// by the sessions, and call any of them; opening one costs about what a
// search-mode session costs, not work per tool. (On the old gateway an
// all-mode session added every tool to its own server: ~1.1 s and 375 MB
// allocated per session for 5,000 tools, against 71 µs and 0.35 MB now,
// BenchmarkSessionAll.)
func TestAllModeSharedListing(t *testing.T) {
	if testing.Short() {
		t.Skip("lists 2,500 tools")
	}
	huge := testServer("huge")
	huge.Env[testServerEnv+"_TOOLS"] = "2500"
	g := startGateway(t, []ServerConfig{huge}, &Options{Mode: ModeAll, StartTimeout: 2 * time.Minute})
	want := g.Tools()
	if len(want) < 2500 {
		t.Fatalf("%d tools in the catalog", len(want))
	}
	url := serveHTTP(t, g, nil)
	for i := range 2 {
		cs := connect(t, url, nil, nil)
		if got := listNames(t, cs); !slices.Equal(got, want) {
			t.Fatalf("session %d lists %d tools, want the catalog's %d in order", i, len(got), len(want))
		}
		for name, args := range map[string]any{"huge__tool_2499": map[string]any{"id": "x"}, "huge__tool_7": map[string]any{"id": "y"}, "huge__echo": map[string]any{"text": "hi"}} {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
			if err != nil || res.IsError {
				t.Errorf("session %d: calling %s: %v %+v", i, name, err, res)
			}
		}
		if _, err := cs.ListTools(context.Background(), &mcp.ListToolsParams{Cursor: "%%%"}); err == nil {
			t.Errorf("a bad cursor was accepted")
		}
	}

	ctx := context.Background()
	allocs := func(mode Mode) float64 {
		return testing.AllocsPerRun(5, func() {
			s, err := g.newSession(ctx, "x", "", mode, true, "")
			if err != nil {
				t.Fatal(err)
			}
			g.dropSession(s)
		})
	}
	all, search := allocs(ModeAll), allocs(ModeSearch)
	t.Logf("allocations per session: all mode %.0f, search mode %.0f (%d tools)", all, search, len(want))
	if all > 3*search {
		t.Errorf("an all-mode session allocates %.0f times, more than 3x a search-mode one (%.0f): work per tool", all, search)
	}
}
