package rank

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/capbroker/capbroker/internal/synth"
	"github.com/google/go-cmp/cmp"
)

// batches returns batches of queries as a selector makes them (a task,
// then its steps) and as it does not (unrelated queries, repeats, blank
// ones, words the catalog lacks, a query longer than the third stage
// reads).
func batches() [][]string {
	tasks := synth.Tasks(40, 5)
	long := strings.Join(append(synth.Tasks(30, 6), "tunes accommodations codebase"), " ")
	out := [][]string{
		{tasks[0] + ", then " + tasks[1], tasks[0], tasks[1]},
		{tasks[2] + " and play some tunes, then " + tasks[3], tasks[2] + " and play some tunes", tasks[3]},
		{tasks[4], tasks[5], tasks[4]},
		{"find accommodations near the codebase", "find accommodations", "", "codebase"},
		{long, tasks[6], long},
		{tasks[7]},
		{},
	}
	for i := 8; i+2 < len(tasks); i += 3 {
		out = append(out, []string{tasks[i] + "; " + tasks[i+1] + "; " + tasks[i+2], tasks[i], tasks[i+1], tasks[i+2]})
	}
	return out
}

// TestSearchBatch: each query of a batch gets what Search gives it alone.
func TestSearchBatch(t *testing.T) {
	ix := New(synth.Cards(1500, 4), nil)
	for _, qs := range batches() {
		ks := make([]int, len(qs))
		for i := range ks {
			ks[i] = []int{15, 3, 0, 1}[i%4]
		}
		for _, ks := range [][]int{ks, ks[:len(ks)/2]} { // a missing k: all hits
			got := ix.SearchBatch(qs, ks)
			if len(got) != len(qs) {
				t.Fatalf("SearchBatch(%q) gave %d lists", qs, len(got))
			}
			for i, q := range qs {
				k := 0
				if i < len(ks) {
					k = ks[i]
				}
				if diff := cmp.Diff(ix.Search(q, k), got[i]); diff != "" {
					t.Errorf("SearchBatch, query %d %q (k %d) differs from Search (-alone +batch):\n%s", i, q, k, diff)
				}
			}
		}
		r, err := ix.RankBatch(context.Background(), qs, nil)
		if err != nil || len(r) != len(qs) {
			t.Fatalf("RankBatch(%q) = %d lists, %v", qs, len(r), err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ix.RankBatch(ctx, []string{"a"}, nil); err == nil {
		t.Error("RankBatch with a done context: no error")
	}
}

// A step's search in a batch after its task's reads the task's
// similarity rows rather than starting afresh.
func TestSearchBatchSharesRows(t *testing.T) {
	ix := New(synth.Cards(1500, 4), nil)
	tasks := synth.Tasks(2, 5)
	s := ix.getScratch()
	defer ix.putScratch(s)
	s.startBatch()
	ix.search(tasks[0]+", then "+tasks[1], 15, s)
	task := len(s.simBasis)
	ix.search(tasks[1], 3, s)
	if len(s.simBasis) != task || len(s.simIdx) >= task {
		t.Errorf("the step's search has a basis of %d words and reads %d of them; the task's had %d", len(s.simBasis), len(s.simIdx), task)
	}
	if len(s.expansions) == 0 {
		t.Error("the batch kept no expansions")
	}
}

// Batches and single searches run concurrently share nothing: each query
// gets what it gets alone (run under -race by scripts/test-all.sh).
func TestConcurrentSearchBatches(t *testing.T) {
	ix := New(synth.Cards(1500, 4), nil)
	bs := batches()
	want := make([][][]Hit, len(bs))
	for i, qs := range bs {
		want[i] = make([][]Hit, len(qs))
		for j, q := range qs {
			want[i][j] = ix.Search(q, 10)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8*len(bs))
	for g := range 8 {
		wg.Go(func() {
			for j := range bs {
				i := (j + g*3) % len(bs)
				qs := bs[i]
				ks := make([]int, len(qs))
				got := make([][]Hit, len(qs))
				for k := range qs {
					ks[k] = 10
					if g%2 == 1 { // half the goroutines search one by one
						got[k] = ix.Search(qs[k], 10)
					}
				}
				if g%2 == 0 {
					got = ix.SearchBatch(qs, ks)
				}
				if diff := cmp.Diff(want[i], got); diff != "" {
					errs <- strings.Join(qs, " | ") + ":\n" + diff
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Errorf("a concurrent search differs from the same search alone: %s", e)
	}
}
