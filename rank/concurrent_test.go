package rank

import (
	"sync"
	"testing"

	"github.com/capbroker/capbroker/internal/synth"
	"github.com/google/go-cmp/cmp"
)

// An index serves concurrent searches: each gets the hits, scores and
// explanations a search alone gets. Run under -race (scripts/test-all.sh
// does) this also checks the pooled working memory of the stages.
func TestConcurrentSearches(t *testing.T) {
	ix := New(synth.Cards(2000, 7), nil)
	tasks := synth.Tasks(64, 8)
	want := make([][]Hit, len(tasks))
	for i, q := range tasks {
		want[i] = ix.Search(q, 10)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8*len(tasks))
	for g := range 8 {
		wg.Go(func() {
			for j := range tasks {
				i := (j + g*7) % len(tasks)
				if diff := cmp.Diff(want[i], ix.Search(tasks[i], 10)); diff != "" {
					errs <- tasks[i] + ":\n" + diff
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

// FuzzSearch: any text is a query; a search never panics, is
// deterministic, and its measures stay in range.
func FuzzSearch(f *testing.F) {
	ix := New(synth.Cards(300, 3), nil)
	for _, s := range []string{"", "play some tunes", "book on 2024-03-01 at 7 pm", "https://x.io/a [1, 2] $5 a@b.co",
		"上海明天的天气", "48.85° N, 2.29° E", "'unclosed", "a\x00b", "\xff\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		a := ix.Search(q, 10)
		if diff := cmp.Diff(a, ix.Search(q, 10)); diff != "" {
			t.Fatalf("two searches for %q differ:\n%s", q, diff)
		}
		for _, h := range a {
			if h.Meaning < 0 || h.Meaning > 1 || h.NameFit < 0 || h.NameFit > 1 || h.Coverage < 0 || h.Coverage > 1 {
				t.Fatalf("%q: %s has meaning %v, name fit %v, coverage %v", q, h.Name, h.Meaning, h.NameFit, h.Coverage)
			}
		}
		for _, v := range valueHints(q) {
			if v.text == "" || v.word == "" {
				t.Fatalf("%q: empty hint %+v", q, v)
			}
		}
	})
}
