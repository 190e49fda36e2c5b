package dense

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/rank"
)

var update = flag.Bool("update", false, "rewrite golden files")

func schema(props ...string) json.RawMessage {
	m := map[string]any{}
	for _, p := range props {
		m[p] = map[string]string{"type": "string"}
	}
	b, _ := json.Marshal(map[string]any{"type": "object", "properties": m})
	return b
}

// toolCards is a small catalog of realistic tools. fetch_webpage's text
// shares no word with "look up this URL".
func toolCards() []card.Card {
	cs := []card.Card{
		{Name: "fetch_webpage", Description: "Retrieve a web page and return its readable text as markdown.", InputSchema: schema("address")},
		{Name: "search_web", Description: "Search the internet for a query and return result titles and snippets.", InputSchema: schema("query")},
		{Name: "read_file", Description: "Read the contents of a file from disk.", InputSchema: schema("path")},
		{Name: "write_file", Description: "Write text to a file on disk, replacing it.", InputSchema: schema("path", "content")},
		{Name: "list_directory", Description: "List the entries of a directory.", InputSchema: schema("path")},
		{Name: "send_email", Description: "Send an email message to a recipient.", InputSchema: schema("to", "subject", "body")},
		{Name: "create_issue", Description: "Create a GitHub issue in a repository.", InputSchema: schema("repo", "title", "body")},
		{Name: "run_sql", Description: "Run a SQL query against the database.", InputSchema: schema("sql")},
		{Name: "get_weather", Description: "Get the current weather forecast for a city.", InputSchema: schema("city")},
		{Name: "translate_text", Description: "Translate text between languages.", InputSchema: schema("text", "target")},
		{Name: "git_commit", Description: "Record staged changes in the git repository.", InputSchema: schema("message")},
		{Name: "take_screenshot", Description: "Capture the screen as an image.", InputSchema: schema("region")},
	}
	for i := range cs {
		cs[i].Kind = card.KindTool
	}
	return cs
}

func names(hits []Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.Name
	}
	return out
}

func buildHybrid(t *testing.T, e Embedder, o *Options) *Hybrid {
	t.Helper()
	cards := toolCards()
	r, err := NewRanker(context.Background(), KindHybrid, cards, e, nil, o)
	if err != nil {
		t.Fatal(err)
	}
	return r.(*Hybrid)
}

func TestFusionFindsWhatLexicalMisses(t *testing.T) {
	ctx := context.Background()
	lex := rank.New(toolCards(), nil)
	for _, fusion := range []Fusion{RRF, Blend} {
		t.Run(string(fusion), func(t *testing.T) {
			h := buildHybrid(t, &wordEmbedder{}, &Options{Fusion: fusion})
			tests := []struct {
				query   string
				want    string
				lexical bool // lexical ranking alone gets it first
			}{
				{"look up this URL", "fetch_webpage", true}, // WordNet relates "url" and "address"
				{"will it splorch in Paris", "get_weather", false},
				{"read the contents of a file", "read_file", true},
				{"send an email to bob", "send_email", true},
				{"run a sql query against the database", "run_sql", true},
				{"create a github issue", "create_issue", true},
			}
			for _, tt := range tests {
				lh := lex.Search(tt.query, 3)
				gotLex := len(lh) > 0 && lh[0].Name == tt.want
				if gotLex != tt.lexical {
					t.Errorf("%q: lexical top-1 is %v, test expects lexical to get it = %v", tt.query, lh, tt.lexical)
				}
				hits := h.Search(ctx, tt.query, 3)
				if len(hits) == 0 || hits[0].Name != tt.want {
					t.Errorf("%q: hybrid top-3 %v, want %s first", tt.query, names(hits), tt.want)
					continue
				}
				top := hits[0]
				if top.Dense == nil || top.Dense.Rank != 1 {
					t.Errorf("%q: top hit's dense part %+v, want rank 1", tt.query, top.Dense)
				}
				if tt.lexical && (top.Lexical == nil || top.Lexical.Rank != 1 || len(top.Matches) == 0) {
					t.Errorf("%q: top hit's lexical part %+v with matches %v, want rank 1 and matches", tt.query, top.Lexical, top.Matches)
				}
				if !tt.lexical && top.Coverage < top.Dense.Score-1e-9 {
					t.Errorf("%q: coverage %.3f below the cosine %.3f", tt.query, top.Coverage, top.Dense.Score)
				}
			}
			if h.Fallbacks() != 0 {
				t.Errorf("%d fallbacks", h.Fallbacks())
			}
		})
	}
}

// TestHybridGolden pins the fused ranking and its explanations.
func TestHybridGolden(t *testing.T) {
	ctx := context.Background()
	var b strings.Builder
	for _, fusion := range []Fusion{RRF, Blend} {
		h := buildHybrid(t, &wordEmbedder{}, &Options{Fusion: fusion, DenseWeight: 0.5})
		for _, q := range []string{"look up this URL", "read the contents of a file", "email the weather forecast"} {
			fmt.Fprintf(&b, "== %s %q\n", fusion, q)
			for _, hit := range h.Search(ctx, q, 4) {
				fmt.Fprintf(&b, "%-16s score %.4f coverage %.2f  %s\n", hit.Name, hit.Score, hit.Coverage, hit.Explain())
			}
		}
	}
	golden := filepath.Join("testdata", "hybrid.golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./dense -update)", err)
	}
	if diff := cmp.Diff(string(want), b.String()); diff != "" {
		t.Errorf("hybrid ranking (-want +got):\n%s", diff)
	}
}

func TestHybridOverFakeServer(t *testing.T) {
	// The whole path: cards and query embedded by the OpenAI-compatible
	// client against the local server.
	ctx := context.Background()
	f := newFakeServer(t, "m1", "sk")
	c := mustClient(t, &ClientOptions{BaseURL: f.baseURL(), Model: "m1", APIKey: "sk"})
	cache := openTestCache(t, filepath.Join(t.TempDir(), "capbroker.db"))
	r, err := NewRanker(ctx, KindHybrid, toolCards(), c, cache, nil)
	if err != nil {
		t.Fatal(err)
	}
	hits, err := r.Rank(ctx, "look up this URL", 3)
	if err != nil || len(hits) == 0 || hits[0].Name != "fetch_webpage" {
		t.Fatalf("Rank = %v, %v; want fetch_webpage first", hits, err)
	}
	d, err := NewRanker(ctx, KindDense, toolCards(), c, cache, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st := d.(*Index).Stats(); st.Cached != len(toolCards()) {
		t.Errorf("second ranker embedded cards again: %+v", st)
	}
	hits, err = d.Rank(ctx, "look up this URL", 3)
	if err != nil || len(hits) == 0 || hits[0].Name != "fetch_webpage" {
		t.Fatalf("dense Rank = %v, %v; want fetch_webpage first", hits, err)
	}
}

func TestHybridFallsBackOnTimeout(t *testing.T) {
	ctx := context.Background()
	f := newFakeServer(t, "m1", "")
	c := mustClient(t, &ClientOptions{BaseURL: f.baseURL(), Model: "m1"})
	var (
		mu     sync.Mutex
		events []error
	)
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	r, err := NewRanker(ctx, KindHybrid, toolCards(), c, nil, &Options{
		QueryTimeout: 100 * time.Millisecond,
		Cooldown:     time.Minute,
		OnFallback: func(q string, err error) {
			mu.Lock()
			events = append(events, err)
			mu.Unlock()
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	h := r.(*Hybrid)
	h.now = func() time.Time { return now }
	lexWant := names(lexicalOnly(rank.New(toolCards(), nil).Search("read the contents of a file", 3), 3, ""))

	f.slow.Store(true) // the endpoint stops answering
	reqs0, _ := f.stats()
	hits, err := h.Rank(ctx, "read the contents of a file", 3)
	if err != nil {
		t.Fatalf("Rank failed for the user: %v", err)
	}
	if diff := cmp.Diff(lexWant, rankNames(hits)); diff != "" {
		t.Errorf("fallback ranking is not the lexical one (-want +got):\n%s", diff)
	}
	full := h.Search(ctx, "read the contents of a file", 3) // during the cooldown
	if h.Fallbacks() != 2 {
		t.Errorf("Fallbacks() = %d, want 2", h.Fallbacks())
	}
	mu.Lock()
	if len(events) != 2 || !errors.Is(events[0], context.DeadlineExceeded) || IsCooling(events[0]) || !IsCooling(events[1]) {
		t.Errorf("fallback events %v: want a deadline, then a cooldown skip", events)
	}
	mu.Unlock()
	if reqs, _ := f.stats(); reqs != reqs0+1 {
		t.Errorf("%d requests during the cooldown, want 1 in all", reqs-reqs0)
	}
	if len(full) == 0 || full[0].Fallback == "" || full[0].Dense != nil || full[0].Lexical == nil {
		t.Errorf("fallback hit %+v does not explain the fallback", full)
	}

	// After the cooldown, with the endpoint back, fusion resumes.
	f.slow.Store(false)
	now = now.Add(2 * time.Minute)
	hits2 := h.Search(ctx, "look up this URL", 3)
	if len(hits2) == 0 || hits2[0].Name != "fetch_webpage" || hits2[0].Fallback != "" {
		t.Errorf("after recovery: %v", names(hits2))
	}
	if h.Fallbacks() != 2 {
		t.Errorf("Fallbacks() = %d after recovery, want still 2", h.Fallbacks())
	}
}

func TestHybridFallsBackWhenEndpointDown(t *testing.T) {
	ctx := context.Background()
	f := newFakeServer(t, "m1", "")
	c := mustClient(t, &ClientOptions{BaseURL: f.baseURL(), Model: "m1", MaxRetries: -1})
	r, err := NewRanker(ctx, KindHybrid, toolCards(), c, nil, &Options{Cooldown: -1})
	if err != nil {
		t.Fatal(err)
	}
	f.srv.Close()
	reqs0 := c.Requests()
	h := r.(*Hybrid)
	for range 2 {
		hits, err := h.Rank(ctx, "send an email", 2)
		if err != nil || len(hits) == 0 || hits[0].Name != "send_email" {
			t.Errorf("Rank = %v, %v", hits, err)
		}
	}
	if h.Fallbacks() != 2 {
		t.Errorf("Fallbacks() = %d, want 2 (no cooldown: each query tries)", h.Fallbacks())
	}
	if n := c.Requests() - reqs0; n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
	// A dense-only ranker has no fallback: it reports the failure, and
	// policy degrades.
	d := &Index{e: c, vecs: h.dense.vecs, o: h.o}
	if _, err := d.Rank(ctx, "send an email", 2); err == nil || !strings.Contains(err.Error(), "is the server running") {
		t.Errorf("dense Rank error %v", err)
	}
}

func rankNames(hits []rank.Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.Name
	}
	return out
}

func TestNewRanker(t *testing.T) {
	ctx := context.Background()
	cards := toolCards()
	if _, err := NewRanker(ctx, "fuzzy", cards, nil, nil, nil); err == nil || !strings.Contains(err.Error(), "lexical, dense, hybrid") {
		t.Errorf("unknown kind: %v", err)
	}
	if _, err := NewRanker(ctx, KindHybrid, cards, nil, nil, nil); !errors.Is(err, ErrNotConfigured) {
		t.Errorf("hybrid without embedder: %v", err)
	}
	lr, err := NewRanker(ctx, KindLexical, cards, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := lr.(*rank.Index); !ok {
		t.Errorf("lexical ranker is %T", lr)
	}
	// Every kind agrees on hit indexes: positions in cards.
	for _, kind := range Kinds {
		r, err := NewRanker(ctx, kind, cards, &wordEmbedder{}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		hits, err := r.Rank(ctx, "send an email message", 3)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hits {
			if cards[h.Index].Name != h.Name {
				t.Errorf("%s: hit %s has index %d (%s)", kind, h.Name, h.Index, cards[h.Index].Name)
			}
		}
	}
}

func TestHybridWeightsAndDepth(t *testing.T) {
	ctx := context.Background()
	// Dense weight 1: the ranking is the dense one; near 0: the lexical one.
	allDense := buildHybrid(t, &wordEmbedder{}, &Options{DenseWeight: 1})
	d := allDense.Dense()
	dh, err := d.Search(ctx, "send an email", 5)
	if err != nil {
		t.Fatal(err)
	}
	fh := allDense.Search(ctx, "send an email", 5)
	if diff := cmp.Diff(names(dh), names(fh)); diff != "" {
		t.Errorf("dense weight 1 differs from dense (-dense +hybrid):\n%s", diff)
	}
	noDense := buildHybrid(t, &wordEmbedder{}, &Options{DenseWeight: -1})
	lh := noDense.Lexical().Search("write text to a file", 0)
	nh := noDense.Search(ctx, "write text to a file", len(lh))
	if diff := cmp.Diff(rankNames(lh), names(nh)); diff != "" {
		t.Errorf("dense weight 0 differs from lexical (-lexical +hybrid):\n%s", diff)
	}
	// MinSimilarity keeps dense-only noise out.
	strict := buildHybrid(t, &wordEmbedder{}, &Options{MinSimilarity: 0.99})
	for _, h := range strict.Search(ctx, "look up this URL", 5) {
		if h.Dense != nil && h.Dense.Score < 0.99 {
			t.Errorf("dense part below MinSimilarity: %+v", h.Dense)
		}
	}
	// An empty query: nothing, no fallback.
	if hits := allDense.Search(ctx, "  ", 5); len(hits) != 0 || allDense.Fallbacks() != 0 {
		t.Errorf("empty query: %v, %d fallbacks", hits, allDense.Fallbacks())
	}
}

// BenchmarkHybridSearch measures one fused search over 10k cards with an
// in-process embedder (no network): lexical search, query embedding,
// dense scan and fusion.
func BenchmarkHybridSearch(b *testing.B) {
	cards := manyCards(10_000)
	r, err := NewRanker(context.Background(), KindHybrid, cards, &wordEmbedder{}, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	h := r.(*Hybrid)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if hits := h.Search(ctx, "fetch the record of a user", 10); len(hits) != 10 {
			b.Fatalf("%d hits", len(hits))
		}
	}
}
