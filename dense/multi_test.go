package dense

import (
	"context"
	"path/filepath"
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
