package route

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/capbroker/capbroker/card"
)

// clock is an injectable clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// plugins is a changing set of installed plugins that a ScanFunc reads.
type plugins struct {
	mu    sync.Mutex
	cards []card.Card
	err   error
	calls int
}

func (p *plugins) set(cards []card.Card, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cards, p.err = cards, err
}

func (p *plugins) scan(ctx context.Context) ([]card.Card, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls++
	if p.err != nil {
		return nil, p.err
	}
	return append([]card.Card(nil), p.cards...), nil
}

var coder = agentSpec{name: "a:coder", desc: "Implement code."}
var reviewer = agentSpec{name: "b:reviewer", desc: "Review and audit code."}

func TestCacheStaleness(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	pl := &plugins{cards: agentCards(coder)}
	c := NewCache(New(mustParse(t, smallTaxonomy), nil), pl.scan, &CacheOptions{Now: clk.Now})

	steps := []struct {
		advance time.Duration
		scans   int
	}{
		{0, 1},                          // uninitialised: first use scans
		{time.Hour, 1},                  // fresh
		{23 * time.Hour, 1},             // exactly 24 h old: still fresh
		{time.Second, 2},                // older than 24 h: re-scan
		{24 * time.Hour, 2},             // 24 h after that scan: fresh
		{24*time.Hour + time.Second, 3}, // stale again
	}
	for i, st := range steps {
		clk.Add(st.advance)
		d, err := c.Route(ctx, Request{Capability: "impl"})
		if err != nil {
			t.Fatal(err)
		}
		if d.Agent != "a:coder" {
			t.Fatalf("step %d: agent %s", i, d.Agent)
		}
		if got := pl.calls; got != st.scans || c.Scans() != st.scans {
			t.Errorf("step %d (+%v): %d scans, want %d", i, st.advance, got, st.scans)
		}
	}
	if !c.ScannedAt().Equal(clk.Now()) {
		t.Errorf("ScannedAt = %v, want %v", c.ScannedAt(), clk.Now())
	}

	// A configured age, and Refresh.
	clk2 := newClock()
	pl2 := &plugins{cards: agentCards(coder)}
	c2 := NewCache(New(mustParse(t, smallTaxonomy), nil), pl2.scan, &CacheOptions{Now: clk2.Now, MaxAge: time.Minute})
	c2.Map(ctx)
	clk2.Add(time.Minute + 1)
	c2.Map(ctx)
	if pl2.calls != 2 {
		t.Errorf("MaxAge 1m: %d scans, want 2", pl2.calls)
	}
	if _, err := c2.Refresh(ctx); err != nil || pl2.calls != 3 {
		t.Errorf("Refresh: %v, %d scans", err, pl2.calls)
	}
	// Never stale.
	c3 := NewCache(New(nil, nil), pl2.scan, &CacheOptions{Now: clk2.Now, MaxAge: -1})
	c3.Map(ctx)
	clk2.Add(1000 * time.Hour)
	c3.Map(ctx)
	if pl2.calls != 4 {
		t.Errorf("MaxAge -1: %d scans, want 4", pl2.calls)
	}
}

// TestCacheMissRescan checks that a capability without a match makes one
// fresh scan before falling back, and that a plugin installed meanwhile is
// found by it.
func TestCacheMissRescan(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	pl := &plugins{cards: agentCards(coder)}
	c := NewCache(New(mustParse(t, smallTaxonomy), nil), pl.scan, &CacheOptions{Now: clk.Now})

	// First call scans (uninitialised): a miss right after that scan
	// does not scan again.
	d, err := c.Route(ctx, Request{Capability: "review"})
	if err != nil {
		t.Fatal(err)
	}
	if !d.Default || d.Rescanned || pl.calls != 1 {
		t.Fatalf("miss on a fresh map: default=%v rescanned=%v scans=%d", d.Default, d.Rescanned, pl.calls)
	}
	// The capability is now known missing for this map: no re-scan.
	clk.Add(time.Minute)
	d, _ = c.Route(ctx, Request{Capability: "review"})
	if !d.Default || pl.calls != 1 {
		t.Fatalf("known miss: default=%v scans=%d", d.Default, pl.calls)
	}
	// A hit does not scan.
	if d, _ = c.Route(ctx, Request{Capability: "impl"}); d.Default || pl.calls != 1 {
		t.Fatalf("hit: default=%v scans=%d", d.Default, pl.calls)
	}

	// After the map goes stale and is re-scanned, a miss on a map that
	// was not scanned by this call scans once more and finds the plugin
	// installed in the meantime.
	clk.Add(25 * time.Hour)
	c.Map(ctx) // stale: scan 2
	pl.set(agentCards(coder, reviewer), nil)
	d, err = c.Route(ctx, Request{Capability: "review"})
	if err != nil {
		t.Fatal(err)
	}
	if d.Default || !d.Rescanned || d.Agent != "b:reviewer" || pl.calls != 3 {
		t.Fatalf("miss re-scan: agent=%s rescanned=%v scans=%d", d.Agent, d.Rescanned, pl.calls)
	}

	// A miss that the re-scan does not fix falls back, once per map.
	d, _ = c.Route(ctx, Request{Capability: "tdd"})
	if !d.Default || !d.Rescanned || pl.calls != 4 {
		t.Fatalf("unfixed miss: default=%v rescanned=%v scans=%d", d.Default, d.Rescanned, pl.calls)
	}
	d, _ = c.Route(ctx, Request{Capability: "tdd"})
	if !d.Default || d.Rescanned || pl.calls != 4 {
		t.Fatalf("repeated miss: default=%v rescanned=%v scans=%d", d.Default, d.Rescanned, pl.calls)
	}
	// A miss right after Refresh does not scan twice.
	c.Refresh(ctx)
	d, _ = c.Route(ctx, Request{Capability: "tdd"})
	if !d.Default || d.Rescanned || pl.calls != 5 {
		t.Fatalf("miss after Refresh: default=%v rescanned=%v scans=%d", d.Default, d.Rescanned, pl.calls)
	}
	// An internal capability is never a miss.
	if d, _ = c.Route(ctx, Request{Phase: "PLAN"}); !d.Internal || pl.calls != 5 {
		t.Fatalf("internal: %+v scans=%d", d.Internal, pl.calls)
	}
}

func TestCacheScanErrors(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	boom := errors.New("plugins dir unreadable")
	pl := &plugins{err: boom}
	c := NewCache(New(mustParse(t, smallTaxonomy), nil), pl.scan, &CacheOptions{Now: clk.Now})
	if _, err := c.Route(ctx, Request{Capability: "impl"}); !errors.Is(err, boom) {
		t.Fatalf("no map and a failing scan: %v", err)
	}
	pl.set(agentCards(coder), nil)
	if _, err := c.Route(ctx, Request{Capability: "impl"}); err != nil {
		t.Fatal(err)
	}
	// A failing miss re-scan keeps the old map and says so.
	clk.Add(time.Hour)
	pl.set(nil, boom)
	d, err := c.Route(ctx, Request{Capability: "review"})
	if err != nil {
		t.Fatal(err)
	}
	if !d.Default || len(d.Warnings) != 1 || !strings.Contains(d.Warnings[0], "re-scan after no match for review failed") {
		t.Errorf("warnings %q", d.Warnings)
	}
	// A request error is an error.
	if _, err := c.Route(ctx, Request{Capability: "nope"}); err == nil {
		t.Error("unknown capability through the cache")
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := c.Refresh(cctx); err == nil {
		t.Error("Refresh with a cancelled context")
	}
}

func TestCachePersistence(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	dir := t.TempDir()
	path := filepath.Join(dir, "cache", "route.json")
	r := New(mustParse(t, smallTaxonomy), nil)
	pl := &plugins{cards: agentCards(coder, reviewer)}
	opts := &CacheOptions{Now: clk.Now, Path: path, Key: "roots=/plugins"}

	c := NewCache(r, pl.scan, opts)
	if _, err := c.Map(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("cache file not written: %v", err)
	}
	// Another process (a new Cache) reuses the file while it is fresh.
	clk.Add(time.Hour)
	c2 := NewCache(r, pl.scan, opts)
	d, err := c2.Route(ctx, Request{Capability: "review"})
	if err != nil {
		t.Fatal(err)
	}
	if pl.calls != 1 || d.Agent != "b:reviewer" || !c2.ScannedAt().Equal(c.ScannedAt()) {
		t.Errorf("fresh file not reused: scans=%d agent=%s", pl.calls, d.Agent)
	}
	// Stale file: scanned again.
	clk.Add(24 * time.Hour)
	NewCache(r, pl.scan, opts).Map(ctx)
	if pl.calls != 2 {
		t.Errorf("stale file: scans=%d, want 2", pl.calls)
	}
	// Another key: scanned again.
	NewCache(r, pl.scan, &CacheOptions{Now: clk.Now, Path: path, Key: "roots=/other"}).Map(ctx)
	if pl.calls != 3 {
		t.Errorf("other key: scans=%d, want 3", pl.calls)
	}
	// A corrupt file: scanned again, and rewritten.
	os.WriteFile(path, []byte("{not json"), 0o644)
	NewCache(r, pl.scan, opts).Map(ctx)
	if pl.calls != 4 {
		t.Errorf("corrupt file: scans=%d, want 4", pl.calls)
	}
	if data, _ := os.ReadFile(path); !strings.HasPrefix(string(data), "{\n  \"version\": 1,") {
		t.Errorf("cache file not rewritten: %.40s", data)
	}
	// A cache file that cannot be written is a warning, not a failure.
	blocked := filepath.Join(dir, "file")
	os.WriteFile(blocked, nil, 0o644)
	c5 := NewCache(r, pl.scan, &CacheOptions{Now: clk.Now, Path: filepath.Join(blocked, "route.json")})
	d, err = c5.Route(ctx, Request{Capability: "impl"})
	if err != nil || len(d.Warnings) != 1 || !strings.Contains(d.Warnings[0], "writing capability cache") {
		t.Errorf("unwritable cache: err=%v warnings=%q", err, d.Warnings)
	}
	if w := c5.Warnings(); len(w) != 0 {
		t.Errorf("warnings reported twice: %q", w)
	}
}

func TestCacheRecordsGaps(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	dir := t.TempDir()
	log := &GapLog{Path: filepath.Join(dir, "gaps.json"), StatePath: filepath.Join(dir, "FLOW.md")}
	pl := &plugins{cards: agentCards(coder)}
	c := NewCache(New(mustParse(t, smallTaxonomy), nil), pl.scan, &CacheOptions{Now: clk.Now, Gaps: log})
	c.Route(ctx, Request{Capability: "impl"})
	clk.Add(time.Hour)
	d, err := c.Route(ctx, Request{Phase: "PLAN", Capability: "review", Task: "check the parser", Project: NewProject("python")})
	if err != nil || !d.Default {
		t.Fatalf("%v %+v", err, d)
	}
	gaps, err := log.Gaps()
	if err != nil {
		t.Fatal(err)
	}
	if len(gaps) != 1 {
		t.Fatalf("%d gaps logged, want 1 (hits and internal capabilities are not gaps)", len(gaps))
	}
	g := gaps[0]
	if g.Capability != "review" || g.Phase != "PLAN" || g.Task != "check the parser" || !g.Time.Equal(clk.Now()) ||
		g.PluginsSearched != 1 || g.CardsSearched != 1 || !g.Rescanned || g.Default != "defaults/validator" ||
		len(g.KeywordsTried) != 3 || g.ProjectTypes[0] != "python" || !strings.HasPrefix(g.Suggestion, "install a plugin with a code-review agent") {
		t.Errorf("gap: %+v", g)
	}
	// A gap log that cannot be written is a warning.
	os.WriteFile(log.Path, []byte("garbage"), 0o644)
	d, err = c.Route(ctx, Request{Capability: "review"})
	if err != nil || len(d.Warnings) != 1 || !strings.Contains(d.Warnings[0], "recording the capability gap: gap log") {
		t.Errorf("err=%v warnings=%q", err, d.Warnings)
	}
}

func TestCacheRefusesToReplaceOtherFiles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "plan.json")
	plan := []byte(`{"goal":"g","tasks":[]}`)
	os.WriteFile(path, plan, 0o644)
	c := NewCache(New(Default(), nil), func(context.Context) ([]card.Card, error) { return nil, nil }, &CacheOptions{Path: path, Key: "k"})
	if _, err := c.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if w := strings.Join(c.Warnings(), "\n"); !strings.Contains(w, "not a capbroker capability cache") {
		t.Errorf("warnings = %q, want one saying the file is not a cache", w)
	}
	if got, _ := os.ReadFile(path); string(got) != string(plan) {
		t.Errorf("the plan file was changed: %s", got)
	}
}

// TestCacheSecondaryGaps checks that a phase's secondary capability that
// falls back is re-scanned for and logged like the primary one.
func TestCacheSecondaryGaps(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	dir := t.TempDir()
	log := &GapLog{Path: filepath.Join(dir, "gaps.json"), StatePath: filepath.Join(dir, "FLOW.md")}
	pl := &plugins{cards: agentCards(coder)}
	c := NewCache(New(mustParse(t, smallTaxonomy), nil), pl.scan, &CacheOptions{Now: clk.Now, Gaps: log})
	c.Map(ctx) // scan 1
	clk.Add(time.Minute)
	d, err := c.Route(ctx, Request{Phase: "EXECUTE"})
	if err != nil {
		t.Fatal(err)
	}
	// impl has the coder; tdd, the secondary, has nothing: one re-scan.
	if d.Default || len(d.Secondary) != 1 || !d.Secondary[0].Default || !d.Secondary[0].Rescanned || pl.calls != 2 {
		t.Fatalf("primary %s, secondary %+v, scans %d", d.Agent, d.Secondary, pl.calls)
	}
	gaps, _ := log.Gaps()
	if len(gaps) != 1 || gaps[0].Capability != "tdd" || !gaps[0].Secondary || !gaps[0].Rescanned || gaps[0].Phase != "EXECUTE" {
		t.Fatalf("gaps %+v", gaps)
	}
	flow, _ := os.ReadFile(log.StatePath)
	if !strings.Contains(string(flow), "- **tdd** → defaults/executor") || !strings.Contains(string(flow), "phase EXECUTE (secondary capability)") {
		t.Errorf("FLOW.md:\n%s", flow)
	}
	// Known missing now: no scan, but still logged.
	if _, err := c.Route(ctx, Request{Phase: "EXECUTE"}); err != nil || pl.calls != 2 {
		t.Fatalf("known miss: %v scans %d", err, pl.calls)
	}
	if gaps, _ := log.Gaps(); len(gaps) != 2 {
		t.Errorf("%d gaps, want 2", len(gaps))
	}
	if got := c.Missing(); len(got) != 1 || got[0] != "tdd" {
		t.Errorf("missing %v", got)
	}
}

// TestCacheMissingPersisted checks that a capability still missing after
// its re-scan is kept in the cache file: the next process (a new Cache on
// the same file) does not scan for it again, until a new scan.
func TestCacheMissingPersisted(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	path := filepath.Join(t.TempDir(), "route.json")
	pl := &plugins{cards: agentCards(coder)}
	opts := &CacheOptions{Now: clk.Now, Path: path, Key: "k"}
	tax := mustParse(t, smallTaxonomy)
	c := NewCache(New(tax, nil), pl.scan, opts)
	c.Map(ctx) // scan 1
	d, _ := c.Route(ctx, Request{Capability: "review"})
	if !d.Default || !d.Rescanned || pl.calls != 2 {
		t.Fatalf("first miss: default %v rescanned %v scans %d", d.Default, d.Rescanned, pl.calls)
	}
	data, _ := os.ReadFile(path)
	if !strings.Contains(string(data), `"missing": [`) {
		t.Fatalf("cache file lacks the missing capabilities:\n%s", data)
	}

	clk.Add(time.Minute)
	c2 := NewCache(New(tax, nil), pl.scan, opts)
	d, _ = c2.Route(ctx, Request{Capability: "review"})
	if !d.Default || d.Rescanned || pl.calls != 2 {
		t.Fatalf("next process: default %v rescanned %v scans %d", d.Default, d.Rescanned, pl.calls)
	}
	// Another capability still gets its one re-scan, which clears the list.
	d, _ = c2.Route(ctx, Request{Capability: "tdd"})
	if !d.Rescanned || pl.calls != 3 {
		t.Fatalf("other miss: rescanned %v scans %d", d.Rescanned, pl.calls)
	}
	if got := c2.Missing(); len(got) != 1 || got[0] != "tdd" {
		t.Errorf("missing after a new scan: %v", got)
	}
}
