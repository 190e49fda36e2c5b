package route

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A plugin installed after a capability was found missing is routed to at
// once — the next process sees the plugin folders changed since the miss
// and scans again — not after MaxAge. Without a change, the miss stays
// kept and nothing is scanned.
func TestCacheMissRescansWhenFoldersChange(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	dir := t.TempDir()
	pluginDir := filepath.Join(dir, "plugins")
	if err := os.MkdirAll(filepath.Join(pluginDir, "a", "agents"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(pluginDir, "a", "agents", "coder.md"), []byte("coder"), 0o644)
	path := filepath.Join(dir, "route.json")
	pl := &plugins{cards: agentCards(coder)}
	opts := &CacheOptions{Now: clk.Now, Path: path, Key: "k", Stamp: func() string { return FolderStamp([]string{pluginDir}) }}
	tax := mustParse(t, smallTaxonomy)

	c := NewCache(New(tax, nil), pl.scan, opts)
	c.Map(ctx) // scan 1
	d, _ := c.Route(ctx, Request{Capability: "review"})
	if !d.Default || pl.calls != 2 {
		t.Fatalf("first miss: default %v, scans %d", d.Default, pl.calls)
	}

	// Nothing changed: the next process keeps the miss.
	clk.Add(time.Minute)
	d, _ = NewCache(New(tax, nil), pl.scan, opts).Route(ctx, Request{Capability: "review"})
	if !d.Default || d.Rescanned || pl.calls != 2 {
		t.Fatalf("unchanged folders: default %v, rescanned %v, scans %d", d.Default, d.Rescanned, pl.calls)
	}

	// A reviewer plugin is installed.
	if err := os.MkdirAll(filepath.Join(pluginDir, "b", "agents"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(pluginDir, "b", "agents", "reviewer.md"), []byte("reviewer"), 0o644)
	pl.set(agentCards(coder, reviewer), nil)
	clk.Add(time.Minute)
	d, _ = NewCache(New(tax, nil), pl.scan, opts).Route(ctx, Request{Capability: "review"})
	if d.Default || d.Agent != "b:reviewer" || !d.Rescanned || pl.calls != 3 {
		t.Fatalf("after the install: agent %q, default %v, rescanned %v, scans %d", d.Agent, d.Default, d.Rescanned, pl.calls)
	}

	// Without a stamp (the old behaviour), the install waits for MaxAge.
	pl2 := &plugins{cards: agentCards(coder)}
	noStamp := &CacheOptions{Now: clk.Now, Path: filepath.Join(dir, "route2.json"), Key: "k"}
	NewCache(New(tax, nil), pl2.scan, noStamp).Route(ctx, Request{Capability: "review"})
	pl2.set(agentCards(coder, reviewer), nil)
	d, _ = NewCache(New(tax, nil), pl2.scan, noStamp).Route(ctx, Request{Capability: "review"})
	if !d.Default {
		t.Fatalf("without a stamp the kept miss was scanned again: %+v", d)
	}
}

func TestFolderStamp(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "nope")
	a := FolderStamp([]string{dir, missing})
	if b := FolderStamp([]string{dir, missing}); a != b {
		t.Fatalf("stamp not stable: %s, %s", a, b)
	}
	os.Mkdir(missing, 0o755)
	b := FolderStamp([]string{dir, missing})
	if a == b {
		t.Fatal("creating a missing folder left the stamp as it was")
	}
	deep := filepath.Join(dir, "p", "q")
	os.MkdirAll(deep, 0o755)
	c := FolderStamp([]string{dir})
	os.WriteFile(filepath.Join(deep, "agent.md"), []byte("x"), 0o644)
	if d := FolderStamp([]string{dir}); c == d {
		t.Fatal("a new file two levels down left the stamp as it was")
	}
}
