package dense

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/capbroker/capbroker/internal/testenv"
)

// TestPostgresCacheSharedByReplicas opens the vector cache in one
// PostgreSQL database from two replicas: the cards the first embeds, the
// second reads and embeds none of; a changed card is embedded again;
// prune and count work there as in SQLite.
func TestPostgresCacheSharedByReplicas(t *testing.T) {
	ctx := context.Background()
	dsn := testenv.Postgres(t)
	f := newFakeServer(t, "m1", "")
	client := mustClient(t, &ClientOptions{BaseURL: f.baseURL(), Model: "m1", BatchSize: 256})
	open := func() *Cache {
		c, err := OpenPostgresCache(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	a, b := open(), open()
	cards := manyCards(600)
	v1, st, err := EmbedCards(ctx, cards, client, a)
	if err != nil {
		t.Fatal(err)
	}
	if st.Embedded != 600 || st.Cached != 0 {
		t.Errorf("replica A: %+v, want 600 embedded", st)
	}
	v2, st, err := EmbedCards(ctx, cards, client, b)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(EmbedStats{Model: "m1", Cards: 600, Cached: 600, Embedded: 0, Dim: wordDim}, st); diff != "" {
		t.Errorf("replica B (-want +got):\n%s", diff)
	}
	for i := range v1 {
		if !slices.Equal(v1[i], v2[i]) {
			t.Fatalf("vector %d read by B differs from A's", i)
		}
	}
	cards[7].Description = "Something else entirely"
	cards[7].Digest = ""
	if _, st, err = EmbedCards(ctx, cards, client, b); err != nil || st.Embedded != 1 {
		t.Errorf("after one card changed: %+v %v, want 1 embedded", st, err)
	}
	if n, err := a.Len(ctx, "m1"); err != nil || n != 601 {
		t.Errorf("Len: %d %v, want 601", n, err)
	}
	var keep []string
	for _, c := range cards[:100] {
		keep = append(keep, c.ComputeDigest())
	}
	if n, err := a.Prune(ctx, "m1", keep); err != nil || n != 501 {
		t.Errorf("Prune: %d %v, want 501", n, err)
	}
}
