package dense

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/rank"
)

// notes collects OnNote calls.
type notes struct {
	mu  sync.Mutex
	all []string
}

func (n *notes) add(s string) {
	n.mu.Lock()
	n.all = append(n.all, s)
	n.mu.Unlock()
}

func (n *notes) get() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.all...)
}

// gatedEmbedder embeds like wordEmbedder once its gate is opened.
type gatedEmbedder struct {
	wordEmbedder
	gate chan struct{}
}

func (g *gatedEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	select {
	case <-g.gate:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return g.wordEmbedder.Embed(ctx, texts)
}

// costlyEmbedder says every text takes a second.
type costlyEmbedder struct{ wordEmbedder }

func (c *costlyEmbedder) EstimateEmbed(texts []string) time.Duration {
	return time.Duration(len(texts)) * time.Second
}

// brokenEmbedder always fails.
type brokenEmbedder struct{ wordEmbedder }

func (b *brokenEmbedder) Embed(context.Context, []string) ([][]float32, error) {
	return nil, errors.New("connection refused")
}

func lexicalNames(cards []card.Card, q string, k int) []string {
	return rankNames(rank.New(cards, nil).Search(q, k))
}

// TestAutoFallbacks runs every way the card vectors can be missing: each
// ranks lexically, says why in the hits and once in a note, and counts
// the fallback.
func TestAutoFallbacks(t *testing.T) {
	ctx := context.Background()
	cards := toolCards()
	const q = "send an email"
	for _, tc := range []struct {
		name string
		e    Embedder
		want string // in the note and the hits' Fallback
	}{
		{"endpoint down at index time", &brokenEmbedder{}, "connection refused"},
		{"too costly for a one-shot command", &costlyEmbedder{}, "capbroker embed"},
		{"embedder slower than the budget", &gatedEmbedder{gate: make(chan struct{})}, "deadline exceeded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var n notes
			a := NewAuto(ctx, rank.New(cards, nil), cards, tc.e, &AutoOptions{
				Budget: 20 * time.Millisecond, Options: Options{QueryTimeout: 20 * time.Millisecond}, OnNote: n.add})
			if a.Ready() {
				t.Fatal("ready without vectors")
			}
			hits := a.Search(ctx, q, 3)
			if got, want := names(hits), lexicalNames(cards, q, 3); strings.Join(got, ",") != strings.Join(want, ",") {
				t.Errorf("hits %v, lexical %v", got, want)
			}
			for _, h := range hits {
				if !strings.Contains(h.Fallback, tc.want) || h.Dense != nil {
					t.Errorf("hit %s: fallback %q, dense %v; want a fallback with %q", h.Name, h.Fallback, h.Dense, tc.want)
				}
			}
			if ns := n.get(); len(ns) != 1 || !strings.Contains(ns[0], tc.want) {
				t.Errorf("notes %q, want one with %q", ns, tc.want)
			}
			if a.Fallbacks() != 1 {
				t.Errorf("Fallbacks() = %d, want 1", a.Fallbacks())
			}
		})
	}
}

// TestAutoBackground: a long-running process ranks lexically while the
// cards are embedded, then hybrid; the vectors land in the cache, so the
// next start is ready at once without embedding.
func TestAutoBackground(t *testing.T) {
	ctx := context.Background()
	cards := toolCards()
	cache, err := OpenCache(ctx, filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer cache.Close()
	g := &gatedEmbedder{gate: make(chan struct{})}
	a := NewAuto(ctx, rank.New(cards, nil), cards, g, &AutoOptions{Background: true, Cache: cache})
	const q = "look up this URL" // lexical ranking misses fetch_webpage
	before := a.Search(ctx, q, 3)
	if a.Ready() || len(before) > 0 && !strings.Contains(before[0].Fallback, "background") {
		t.Fatalf("before the vectors: ready %v, hits %+v", a.Ready(), before)
	}
	close(g.gate)
	if err := a.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if !a.Ready() {
		t.Fatalf("not ready after the build: %s", a.Why())
	}
	after := a.Search(ctx, q, 3)
	if len(after) == 0 || after[0].Name != "fetch_webpage" || after[0].Dense == nil || after[0].Similarity == 0 {
		t.Errorf("after the vectors: %+v", after)
	}
	// Second start: everything cached, no embedding, ready before
	// NewAuto returns.
	g2 := &gatedEmbedder{gate: make(chan struct{})} // never opens
	b := NewAuto(ctx, rank.New(cards, nil), cards, g2, &AutoOptions{Background: true, Cache: cache})
	if !b.Ready() || b.Stats().Cached != len(cards) || g2.calls.Load() != 0 {
		t.Errorf("warm start: ready %v, stats %+v, embed calls %d", b.Ready(), b.Stats(), g2.calls.Load())
	}
	// A card that changes is embedded again, alone.
	cards[0].Description += " Also drafts replies."
	cards[0].Digest = ""
	w := &wordEmbedder{}
	c := NewAuto(ctx, rank.New(cards, nil), cards, w, &AutoOptions{Cache: cache})
	if st := c.Stats(); !c.Ready() || st.Embedded != 1 || st.Cached != len(cards)-1 {
		t.Errorf("changed card: ready %v, stats %+v", c.Ready(), st)
	}
}

// TestAutoBrokenCache: a cache that cannot be read or written costs the
// caching, never the ranking.
func TestAutoBrokenCache(t *testing.T) {
	ctx := context.Background()
	cards := toolCards()
	cache, err := OpenCache(ctx, filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	cache.Close() // every query now fails
	var n notes
	a := NewAuto(ctx, rank.New(cards, nil), cards, &wordEmbedder{}, &AutoOptions{Cache: cache, OnNote: n.add})
	if !a.Ready() {
		t.Fatalf("not ready: %s", a.Why())
	}
	if ns := n.get(); len(ns) != 1 || !strings.Contains(ns[0], "cache cannot be read") {
		t.Errorf("notes %q", ns)
	}
}

// TestZScoreFusionByHand checks z-score fusion against scores computed by
// hand.
func TestZScoreFusionByHand(t *testing.T) {
	h := &Hybrid{o: (&Options{DenseWeight: 0.25}).resolved()}
	lex := []rank.Hit{{Name: "a", Index: 0, Score: 3}, {Name: "b", Index: 1, Score: 1}}
	ds := &denseResult{
		hits:   []Hit{{Hit: rank.Hit{Name: "c", Index: 2}, Dense: &Part{Score: 0.9}}, {Hit: rank.Hit{Name: "b", Index: 1}, Dense: &Part{Score: 0.5}}},
		mo:     Moments{Mean: 0.3, Std: 0.2, N: 100},
		lexSim: []float64{0.1, 0.5},
	}
	// Lexical scores 3 and 1: mean 2, std 1, so z = +1 and -1; c, not a
	// lexical candidate, gets the lowest, -1.
	// Dense z: a (0.1-0.3)/0.2 = -1, b (0.5-0.3)/0.2 = +1, c (0.9-0.3)/0.2 = +3.
	want := map[string]float64{
		"a": 0.75*1 + 0.25*-1, // 0.5
		"b": 0.75*-1 + 0.25*1, // -0.5
		"c": 0.75*-1 + 0.25*3, // 0 (just below, as it is no lexical candidate)
	}
	got := h.fuse(lex, ds, 0)
	if len(got) != 3 || got[0].Name != "a" || got[1].Name != "c" || got[2].Name != "b" {
		t.Fatalf("order %v, want a, c, b", names(got))
	}
	for _, x := range got {
		if math.Abs(x.Score-want[x.Name]) > 1e-6 {
			t.Errorf("%s: fused %.9f, want %.9f", x.Name, x.Score, want[x.Name])
		}
	}
	if got[1].Coverage != 0 {
		t.Errorf("c: coverage %v; a z of 3 < MeaningZ must not count as coverage", got[1].Coverage)
	}
	ds.hits[0].Dense.Score, ds.mo.Std = 0.9, 0.1 // c's z becomes 6 ≥ MeaningZ
	got = h.fuse(lex, ds, 0)
	for _, x := range got {
		if x.Name == "c" && math.Abs(x.Coverage-6/(2*MeaningZ)) > 1e-9 {
			t.Errorf("c: coverage %v, want %v", x.Coverage, 6/(2*MeaningZ))
		}
	}
}

// preparingEmbedder is a wordEmbedder that counts its Prepare calls.
type preparingEmbedder struct {
	wordEmbedder
	prepared chan struct{}
}

func (p *preparingEmbedder) Prepare() { p.prepared <- struct{}{} }

// TestAutoPrepares: a long-running process's Auto prepares its embedder
// once the card vectors are at hand, from the cache or embedded; a
// one-shot build does not (its one query would pay for it).
func TestAutoPrepares(t *testing.T) {
	ctx := context.Background()
	cards := toolCards()
	cache, err := OpenCache(ctx, filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer cache.Close()
	waitPrepared := func(p *preparingEmbedder, what string) {
		t.Helper()
		select {
		case <-p.prepared:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the embedder was not prepared", what)
		}
	}
	// Embedded in the background, then prepared.
	p := &preparingEmbedder{prepared: make(chan struct{}, 4)}
	a := NewAuto(ctx, rank.New(cards, nil), cards, p, &AutoOptions{Background: true, Cache: cache})
	if err := a.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	waitPrepared(p, "cards embedded in the background")
	// All cached: prepared as well.
	p2 := &preparingEmbedder{prepared: make(chan struct{}, 4)}
	b := NewAuto(ctx, rank.New(cards, nil), cards, p2, &AutoOptions{Background: true, Cache: cache})
	if !b.Ready() || p2.calls.Load() != 0 {
		t.Fatalf("warm start: ready %v, embed calls %d", b.Ready(), p2.calls.Load())
	}
	waitPrepared(p2, "cards from the cache")
	// One-shot: not prepared.
	p3 := &preparingEmbedder{prepared: make(chan struct{}, 4)}
	c := NewAuto(ctx, rank.New(cards, nil), cards, p3, &AutoOptions{Cache: cache})
	if !c.Ready() {
		t.Fatalf("one-shot: not ready: %s", c.Why())
	}
	select {
	case <-p3.prepared:
		t.Error("a one-shot build prepared its embedder")
	case <-time.After(200 * time.Millisecond):
	}
}
