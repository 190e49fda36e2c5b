package index

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/capbroker/capbroker/source"
)

// TestFailMemory: within FailMemory a failed MCP server is not asked
// again and its failure is reused with RetryAfter; after it, or with a
// changed definition, or with Refresh, it is asked again; without
// FailMemory it is asked on every run.
func TestFailMemory(t *testing.T) {
	var hits atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Error(w, "down for maintenance", http.StatusInternalServerError)
	}))
	defer ts.Close()
	root, dir := t.TempDir(), t.TempDir()
	def := func(extra string) {
		write(t, root, map[string]string{".mcp.json": fmt.Sprintf(`{"mcpServers": {"web": {"type": "http", "url": %q}}}`, ts.URL+extra)})
	}
	def("/mcp")
	now := time.Now() // batches are stamped with the real clock; Now moves on from it
	run := func(opts Options) (asked bool, info source.Info) {
		t.Helper()
		opts.Now = func() time.Time { return now }
		before := hits.Load()
		res, _ := discover(t, dir, root, &opts)
		for _, s := range res.Report.Sources {
			if s.Kind == source.KindMCP {
				info = s
			}
		}
		if info.Error == "" {
			t.Fatalf("the server did not fail: %+v", info)
		}
		return hits.Load() != before, info
	}
	mem := Options{FailMemory: 2 * time.Minute}
	for _, step := range []struct {
		name    string
		advance time.Duration
		opts    Options
		change  string
		asked   bool
	}{
		{"first run", 0, mem, "", true},
		{"within the memory", time.Minute, mem, "", false},
		{"refresh", 0, Options{FailMemory: 2 * time.Minute, Refresh: true}, "", true},
		{"after the memory", 3 * time.Minute, mem, "", true},
		{"changed definition", 0, mem, "/mcp2", true},
		{"no memory", 0, Options{}, "", true},
	} {
		now = now.Add(step.advance)
		if step.change != "" {
			def(step.change)
		}
		asked, info := run(step.opts)
		if asked != step.asked {
			t.Errorf("%s: asked the server %v, want %v", step.name, asked, step.asked)
		}
		if !asked && (!info.Cached || info.RetryAfter.IsZero() || !info.RetryAfter.After(now)) {
			t.Errorf("%s: a remembered failure lacks Cached/RetryAfter: %+v", step.name, info)
		}
		if asked && !info.RetryAfter.IsZero() {
			t.Errorf("%s: a fresh failure has RetryAfter", step.name)
		}
	}
}
