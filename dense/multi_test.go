package dense

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestSearchBatch: a batch is ranked exactly as each query alone (the
// same bits), its queries embedded in one request; a blank query and a
// failed embedding are answered lexically, as Search answers them.
func TestSearchBatch(t *testing.T) {
	ctx := context.Background()
	f := newFakeServer(t, "m1", "")
	c := mustClient(t, &ClientOptions{BaseURL: f.baseURL(), Model: "m1", MaxRetries: -1})
	cache := openTestCache(t, filepath.Join(t.TempDir(), "capbroker.db"))
	r, err := NewRanker(ctx, KindHybrid, toolCards(), c, cache, &Options{Cooldown: -1})
	if err != nil {
		t.Fatal(err)
	}
	h := r.(*Hybrid)
	queries := []string{"look up this URL and mail the text to Bob", "look up this URL", "  ", "send an email", "Look up this URL. Then mail the text to Bob."}
	ks := []int{5, 3, 3, 2, 3}
	var want [][]Hit
	for i, q := range queries {
		want = append(want, h.Search(ctx, q, ks[i]))
	}
	reqs0, _ := f.stats()
	got := h.SearchBatch(ctx, queries, ks)
	if reqs, _ := f.stats(); reqs != reqs0+1 {
		t.Errorf("%d requests for a batch of %d queries, want 1", reqs-reqs0, len(queries))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("batch differs from one search per query (-want +got):\n%s", diff)
	}
	if len(got[1]) == 0 || got[1][0].Name != "fetch_webpage" || got[1][0].Dense == nil {
		t.Errorf("step ranking %v: want fetch_webpage, found by meaning", names(got[1]))
	}
	if len(got[2]) != 0 {
		t.Errorf("blank query got %v", names(got[2]))
	}

	// A task of two steps ranked with its steps, as selection ranks it:
	// the task is embedded as its steps, so each step's text is sent once.
	task := "Look up this URL. Then mail the text to Bob."
	steps := QueryParts(task)
	if len(steps) != 2 {
		t.Fatalf("QueryParts(%q) = %q, want two steps", task, steps)
	}
	_, in0 := f.stats()
	got = h.SearchBatch(ctx, append([]string{task}, steps...), []int{5, 3, 3})
	if _, in := f.stats(); in != in0+2 {
		t.Errorf("a task and its 2 steps sent %d texts, want 2", in-in0)
	}
	for i, q := range append([]string{task}, steps...) {
		if diff := cmp.Diff(h.Search(ctx, q, []int{5, 3, 3}[i]), got[i]); diff != "" {
			t.Errorf("%q in a batch with its steps differs from alone (-alone +batch):\n%s", q, diff)
		}
	}

	// Dense alone: the same vectors, one request.
	d := h.Dense()
	reqs0, _ = f.stats()
	dh, err := d.SearchBatch(ctx, queries, ks)
	if err != nil {
		t.Fatal(err)
	}
	if reqs, _ := f.stats(); reqs != reqs0+1 {
		t.Errorf("dense batch: %d requests, want 1", reqs-reqs0)
	}
	for i, q := range queries {
		one, _ := d.Search(ctx, q, ks[i])
		if diff := cmp.Diff(one, dh[i], cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("dense batch query %q (-one +batch):\n%s", q, diff)
		}
	}

	// The endpoint down: every query answers lexically and counts.
	f.srv.Close()
	fb := h.Fallbacks()
	got = h.SearchBatch(ctx, queries, ks)
	if n := h.Fallbacks() - fb; n != 4 {
		t.Errorf("%d fallbacks, want 4 (the blank query is not one)", n)
	}
	if len(got[3]) == 0 || got[3][0].Name != "send_email" || got[3][0].Fallback == "" || got[3][0].Dense != nil {
		t.Errorf("fallback batch %+v", got[3])
	}
	if _, err := d.SearchBatch(ctx, queries, ks); err == nil {
		t.Error("dense batch with the endpoint down: no error")
	}
}

// badVectorEmbedder embeds as wordEmbedder, but gives a text with
// "splurt" a NaN and one with "zonk" too few dimensions: an embedder's
// fault, found when the vector is scored.
type badVectorEmbedder struct{ wordEmbedder }

func (e *badVectorEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out, err := e.wordEmbedder.Embed(ctx, texts)
	for i, t := range texts {
		switch {
		case strings.Contains(t, "splurt"):
			out[i][0] = float32(math.NaN())
		case strings.Contains(t, "zonk"):
			out[i] = out[i][:3]
		}
	}
	return out, err
}

// TestSearchBatchBadVector: a vector that cannot be scored fails only
// its own query of a batch, which falls back to lexical ranking as it
// does alone; the other queries are ranked as alone.
func TestSearchBatchBadVector(t *testing.T) {
	ctx := context.Background()
	for _, bad := range []string{"splurt the webpage", "zonk the webpage"} {
		h := buildHybrid(t, &badVectorEmbedder{}, &Options{Cooldown: -1})
		queries := []string{bad, "fetch a webpage", "read a file. Then send an email"}
		ks := []int{3, 3, 3}
		var want [][]Hit
		for i, q := range queries {
			want = append(want, h.Search(ctx, q, ks[i]))
		}
		f0 := h.Fallbacks()
		got := h.SearchBatch(ctx, queries, ks)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%q: batch differs from one search per query (-want +got):\n%s", bad, diff)
		}
		if n := h.Fallbacks() - f0; n != 1 {
			t.Errorf("%q: %d fallbacks in the batch, want 1 (its own)", bad, n)
		}
		if len(got[0]) == 0 || got[0][0].Fallback == "" {
			t.Errorf("%q: not answered lexically: %+v", bad, got[0])
		}
		if len(got[1]) == 0 || got[1][0].Fallback != "" || got[1][0].Dense == nil {
			t.Errorf("fetch a webpage, beside %q: %+v, want it ranked by meaning too", bad, got[1])
		}
	}
}

// TestConcurrentSearches: searches running together share the memory
// of their scores (see Vectors.scoreRows) and each gets what it gets
// alone. With released rows overwritten by NaN, a search that read its
// rows after releasing them would differ even alone.
func TestConcurrentSearches(t *testing.T) {
	ctx := context.Background()
	h := buildHybrid(t, &wordEmbedder{}, nil)
	queries := []string{"fetch a webpage", "read a file. Then send an email", "send an email", "search the web for news", "read a file"}
	ks := []int{3, 5, 3, 4, 0}
	alone := make([][]Hit, len(queries))
	for i, q := range queries {
		alone[i] = h.Search(ctx, q, ks[i])
	}
	batch := h.SearchBatch(ctx, queries, ks)
	dense := h.Dense()
	denseBatch, err := dense.SearchBatch(ctx, queries, ks)
	if err != nil {
		t.Fatal(err)
	}
	poisonReleased.Store(true)
	t.Cleanup(func() { poisonReleased.Store(false) })
	var wg sync.WaitGroup
	errs := make(chan string, 16)
	for g := range 16 {
		wg.Go(func() {
			for r := range 40 {
				i := (g + r) % len(queries)
				var diff string
				switch r % 3 {
				case 0:
					diff = cmp.Diff(alone[i], h.Search(ctx, queries[i], ks[i]))
				case 1:
					diff = cmp.Diff(batch, h.SearchBatch(ctx, queries, ks))
				default:
					got, err := dense.SearchBatch(ctx, queries, ks)
					if err != nil {
						diff = err.Error()
					} else {
						diff = cmp.Diff(denseBatch, got)
					}
				}
				if diff != "" {
					errs <- fmt.Sprintf("goroutine %d, round %d (-alone +together):\n%s", g, r, diff)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
