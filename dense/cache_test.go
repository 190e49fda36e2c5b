package dense

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/capbroker/capbroker/card"
)

// manyCards returns n distinct tool cards.
func manyCards(n int) []card.Card {
	verbs := []string{"read", "write", "list", "delete", "search", "fetch", "create", "update"}
	nouns := []string{"file", "issue", "page", "record", "message", "event", "user", "branch"}
	cards := make([]card.Card, n)
	for i := range cards {
		v, o := verbs[i%len(verbs)], nouns[(i/len(verbs))%len(nouns)]
		cards[i] = card.Card{
			Name:        fmt.Sprintf("%s_%s_%d", v, o, i),
			Kind:        card.KindTool,
			Description: fmt.Sprintf("%s a %s in store %d", strings.ToUpper(v[:1])+v[1:], o, i),
			InputSchema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string"}}}`),
		}
	}
	return cards
}

func openTestCache(t *testing.T, path string) *Cache {
	t.Helper()
	c, err := OpenCache(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestCacheEmbedsEachCardOnce(t *testing.T) {
	ctx := context.Background()
	f := newFakeServer(t, "m1", "")
	client := mustClient(t, &ClientOptions{BaseURL: f.baseURL(), Model: "m1", BatchSize: 256})
	path := filepath.Join(t.TempDir(), "capbroker.db")
	cards := manyCards(5000)

	// First run: every card is embedded.
	c1 := openTestCache(t, path)
	v1, st, err := EmbedCards(ctx, cards, client, c1)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(EmbedStats{Model: "m1", Cards: 5000, Cached: 0, Embedded: 5000, Dim: wordDim}, st); diff != "" {
		t.Errorf("first run stats (-want +got):\n%s", diff)
	}
	c1.Close()

	// Second run, from a reopened database: nothing is embedded.
	c2 := openTestCache(t, path)
	v2, st, err := EmbedCards(ctx, cards, client, c2)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(EmbedStats{Model: "m1", Cards: 5000, Cached: 5000, Embedded: 0, Dim: wordDim}, st); diff != "" {
		t.Errorf("second run stats (-want +got):\n%s", diff)
	}
	for i := range v1 {
		if !slices.Equal(v1[i], v2[i]) {
			t.Fatalf("cached vector %d differs from the embedded one", i)
		}
	}
	_, inputs := f.stats()
	if inputs != 5000 {
		t.Errorf("endpoint embedded %d texts for 5000 cards embedded twice, want 5000", inputs)
	}
	f.mu.Lock()
	for text, n := range f.perText {
		if n != 1 {
			t.Errorf("text %q embedded %d times", text, n)
		}
	}
	f.mu.Unlock()

	// Change one description: exactly that card is embedded again.
	changed := append([]card.Card(nil), cards...)
	changed[1234].Description = "Fetch a web page by its address"
	v3, st, err := EmbedCards(ctx, changed, client, c2)
	if err != nil {
		t.Fatal(err)
	}
	if st.Cached != 4999 || st.Embedded != 1 {
		t.Errorf("after one change: cached %d, embedded %d; want 4999, 1", st.Cached, st.Embedded)
	}
	_, inputs = f.stats()
	if inputs != 5001 {
		t.Errorf("endpoint embedded %d texts, want 5001", inputs)
	}
	f.mu.Lock()
	if f.perText[Text(&changed[1234])] != 1 {
		t.Errorf("the changed card's text was not the one embedded")
	}
	f.mu.Unlock()
	if slices.Equal(v3[1234], v2[1234]) {
		t.Errorf("the changed card kept its old vector")
	}
	if diff := cmp.Diff(wordEmbed(Text(&changed[1234])), v3[1234]); diff != "" {
		t.Errorf("the changed card's vector is not its new text's:\n%s", diff)
	}
	n, err := c2.Len(ctx, "m1")
	if err != nil {
		t.Fatal(err)
	}
	if n != 5001 {
		t.Errorf("cache holds %d vectors, want 5001 (old and new digest)", n)
	}
	keep := make([]string, len(changed))
	for i := range changed {
		keep[i] = changed[i].ComputeDigest()
	}
	if pruned, err := c2.Prune(ctx, "m1", keep); err != nil || pruned != 1 {
		t.Errorf("Prune = %d, %v; want 1 (the old digest)", pruned, err)
	}
}

func TestCacheWAL(t *testing.T) {
	c := openTestCache(t, filepath.Join(t.TempDir(), "x.db"))
	var mode string
	if err := c.db.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil {
		t.Fatal(err)
	}
	if mode != "wal" {
		t.Errorf("journal_mode = %q, want wal", mode)
	}
}

func TestCacheKeepsModelsApartAndHealsCorruptRows(t *testing.T) {
	ctx := context.Background()
	c := openTestCache(t, filepath.Join(t.TempDir(), "x.db"))
	cards := manyCards(10)
	a := &wordEmbedder{}
	if _, _, err := EmbedCards(ctx, cards, a, c); err != nil {
		t.Fatal(err)
	}
	// Another model sees none of the first's vectors.
	other := &renamed{wordEmbedder: &wordEmbedder{}, model: "other"}
	_, st, err := EmbedCards(ctx, cards, other, c)
	if err != nil {
		t.Fatal(err)
	}
	if st.Cached != 0 || st.Embedded != 10 {
		t.Errorf("other model: cached %d embedded %d, want 0 and 10", st.Cached, st.Embedded)
	}
	// A corrupt row (truncated blob) and a stale text are misses.
	d0, d1 := cards[0].ComputeDigest(), cards[1].ComputeDigest()
	if _, err := c.db.Exec(`UPDATE `+CacheTable+` SET vector = x'0102' WHERE digest = ? AND model = 'test-words'`, d0); err != nil {
		t.Fatal(err)
	}
	if _, err := c.db.Exec(`UPDATE `+CacheTable+` SET text_sha = 'old' WHERE digest = ? AND model = 'test-words'`, d1); err != nil {
		t.Fatal(err)
	}
	vecs, st, err := EmbedCards(ctx, cards, a, c)
	if err != nil {
		t.Fatal(err)
	}
	if st.Cached != 8 || st.Embedded != 2 {
		t.Errorf("after corruption: cached %d embedded %d, want 8 and 2", st.Cached, st.Embedded)
	}
	if diff := cmp.Diff(wordEmbed(Text(&cards[0])), vecs[0]); diff != "" {
		t.Errorf("healed vector differs:\n%s", diff)
	}
	_, st, _ = EmbedCards(ctx, cards, a, c)
	if st.Cached != 10 {
		t.Errorf("healed rows were not stored: cached %d", st.Cached)
	}
}

func TestCacheDimensionChangeReembeds(t *testing.T) {
	ctx := context.Background()
	c := openTestCache(t, filepath.Join(t.TempDir(), "x.db"))
	cards := manyCards(4)
	e := &renamed{wordEmbedder: &wordEmbedder{}, model: "same"}
	if _, _, err := EmbedCards(ctx, cards, e, c); err != nil {
		t.Fatal(err)
	}
	// Same model name, shorter vectors (say the server was reconfigured),
	// and one new card: the stale lengths must not mix with new ones.
	short := &renamed{wordEmbedder: &wordEmbedder{}, model: "same", dim: 32}
	more := append(manyCards(4), card.Card{Name: "new_tool", Kind: card.KindTool, Description: "Brand new"})
	vecs, st, err := EmbedCards(ctx, more, short, c)
	if err != nil {
		t.Fatal(err)
	}
	if st.Dim != 32 || st.Embedded != 6 || st.Cached != 0 {
		t.Errorf("stats %+v, want dim 32, all 5 re-embedded after the first 1", st)
	}
	for i, v := range vecs {
		if len(v) != 32 {
			t.Errorf("vector %d has %d dims", i, len(v))
		}
	}
}

// renamed is a wordEmbedder under another model name, optionally
// truncating vectors.
type renamed struct {
	*wordEmbedder
	model string
	dim   int
}

func (r *renamed) Model() string { return r.model }
func (r *renamed) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	vs, err := r.wordEmbedder.Embed(ctx, texts)
	if r.dim > 0 {
		for i := range vs {
			vs[i] = vs[i][:r.dim]
		}
	}
	return vs, err
}

func TestText(t *testing.T) {
	tests := []struct {
		c    card.Card
		want string
	}{
		{card.Card{Name: "fetch_webpage", Description: "Fetch a web page.", InputSchema: json.RawMessage(`{"type":"object","properties":{"url":{"type":"string"},"maxLength":{"type":"integer"}}}`)},
			"fetch webpage: Fetch a web page. Parameters: max length, url."},
		{card.Card{Name: "github__createIssue", OriginalName: "createIssue", Description: "Open an issue\n  in a repo"},
			"create issue: Open an issue in a repo"},
		{card.Card{Name: "ping", InputSchema: json.RawMessage(`{"type":"object","properties":{"host":{}}}`)},
			"ping. Parameters: host."},
		{card.Card{Name: "__"}, "__"},
	}
	for _, tt := range tests {
		t.Run(tt.c.Name, func(t *testing.T) {
			if got := Text(&tt.c); got != tt.want {
				t.Errorf("Text = %q, want %q", got, tt.want)
			}
		})
	}
}

// failingEmbedder fails every call after the first ok ones.
type failingEmbedder struct {
	wordEmbedder
	ok int
}

func (f *failingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if f.calls.Load() >= int64(f.ok) {
		return nil, fmt.Errorf("endpoint went away")
	}
	return f.wordEmbedder.Embed(ctx, texts)
}

func TestCacheKeepsProgressOfInterruptedRun(t *testing.T) {
	ctx := context.Background()
	c := openTestCache(t, filepath.Join(t.TempDir(), "x.db"))
	cards := manyCards(2500)
	_, _, err := EmbedCards(ctx, cards, &failingEmbedder{ok: 1}, c)
	if err == nil || !strings.Contains(err.Error(), "endpoint went away") || !strings.Contains(err.Error(), "cards 1025-2048 of the 2500") {
		t.Fatalf("error %v, want the failure and which cards", err)
	}
	if n, _ := c.Len(ctx, "test-words"); n != embedChunk {
		t.Errorf("cache kept %d vectors of the interrupted run, want %d", n, embedChunk)
	}
	_, st, err := EmbedCards(ctx, cards, &wordEmbedder{}, c)
	if err != nil {
		t.Fatal(err)
	}
	if st.Cached != embedChunk || st.Embedded != 2500-embedChunk {
		t.Errorf("resumed run %+v", st)
	}
}
