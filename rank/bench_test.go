package rank

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/internal/synth"
)

// syllables build the synthetic vocabulary: pseudo-words of two to four
// syllables, so that the stemmer and tokenizer do real work.
var syllables = strings.Fields(`ba be bi bo bu da de di do du fa fe fi fo fu ga ge gi go gu
ka ke ki ko ku la le li lo lu ma me mi mo mu na ne ni no nu pa pe pi po pu ra re ri ro ru
sa se si so su ta te ti to tu va ve vi vo vu za ze zi zo zu ing er ed tion ment ly`)

// syntheticCatalog generates n cards and nq queries deterministically
// (fixed seed) from a Zipf-distributed vocabulary of 20,000 pseudo-words,
// with real-looking lengths: a name of two or three words, a description
// of 5 to 25 words, and up to four parameters with descriptions of 2 to 10
// words.
// Each query takes 3 to 8 words, most from one card's description and
// name, the rest from the whole vocabulary.
func syntheticCatalog(n, nq int) ([]card.Card, []string) {
	r := rand.New(rand.NewPCG(1, 2))
	vocab := make([]string, 20000)
	seen := map[string]bool{}
	for i := range vocab {
		for {
			var b strings.Builder
			for range 2 + r.IntN(3) {
				b.WriteString(syllables[r.IntN(len(syllables))])
			}
			if w := b.String(); !seen[w] {
				seen[w] = true
				vocab[i] = w
				break
			}
		}
	}
	// The head of the distribution is calibrated on ../shared/bench: the
	// most common word is in about 40% of cards, as "get" or "default"
	// are in real catalogs once stop words are gone.
	zipf := rand.NewZipf(r, 1.1, 10, uint64(len(vocab)-1))
	word := func() string { return vocab[zipf.Uint64()] }
	words := func(lo, hi int) []string {
		ws := make([]string, lo+r.IntN(hi-lo+1))
		for i := range ws {
			ws[i] = word()
		}
		return ws
	}
	cards := make([]card.Card, n)
	for i := range cards {
		name := fmt.Sprintf("%s_%d", strings.Join(words(2, 3), "_"), i)
		props := map[string]any{}
		for range r.IntN(5) {
			props[word()] = map[string]any{"type": "string", "description": strings.Join(words(2, 10), " ")}
		}
		schema, _ := json.Marshal(map[string]any{"type": "object", "properties": props})
		cards[i] = card.Card{
			Name:        name,
			Kind:        card.KindTool,
			Description: strings.Join(words(5, 25), " ") + ".",
			InputSchema: schema,
		}
	}
	queries := make([]string, nq)
	for i := range queries {
		c := cards[r.IntN(n)]
		own := append(Words(c.Name), Words(c.Description)...)
		q := make([]string, 3+r.IntN(6))
		for j := range q {
			if r.IntN(4) == 0 {
				q[j] = word()
			} else {
				q[j] = own[r.IntN(len(own))]
			}
		}
		queries[i] = strings.Join(q, " ")
	}
	return cards, queries
}

var benchSizes = []int{1000, 10000, 100000}

// BenchmarkBuild indexes synthetic catalogs and reports the index's heap
// size per card.
func BenchmarkBuild(b *testing.B) {
	for _, n := range benchSizes {
		cards, _ := syntheticCatalog(n, 0)
		b.Run(fmt.Sprintf("cards=%d", n), func(b *testing.B) {
			var ix *Index
			for b.Loop() {
				ix = New(cards, nil)
			}
			b.ReportMetric(float64(heapOf(func() any { return New(cards, nil) }))/float64(n), "bytes/card")
			runtime.KeepAlive(ix)
		})
	}
}

// heapOf returns the heap bytes still held by what build returns.
func heapOf(build func() any) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	v := build()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(v)
	if after.HeapAlloc < before.HeapAlloc {
		return 0
	}
	return after.HeapAlloc - before.HeapAlloc
}

// BenchmarkSearch runs top-10 searches over synthetic catalogs and reports
// the median and 99th percentile latency of one search.
func BenchmarkSearch(b *testing.B) {
	for _, n := range benchSizes {
		cards, queries := syntheticCatalog(n, 500)
		ix := New(cards, nil)
		ix.Search(queries[0], 10) // load the related-word table first
		b.Run(fmt.Sprintf("cards=%d", n), func(b *testing.B) { benchSearches(b, ix, queries) })
	}
}

// benchSearches runs top-10 searches for the queries in turn and reports
// the median and 99th percentile latency of one.
func benchSearches(b *testing.B, ix *Index, queries []string) {
	lat := make([]time.Duration, 0, 1024)
	i := 0
	for b.Loop() {
		t0 := time.Now()
		ix.Search(queries[i%len(queries)], 10)
		if len(lat) < cap(lat) {
			lat = append(lat, time.Since(t0))
		}
		i++
	}
	reportLatency(b, lat)
}

func reportLatency(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns")
}

// BenchmarkLoadRelated measures the one-time parse of the embedded
// WordNet table, paid by the first search of a process.
func BenchmarkLoadRelated(b *testing.B) {
	for b.Loop() {
		if _, err := newRelatedWords(relatedText); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkThirdStage compares top-10 searches over 10,000 synthetic
// cards of real English words (internal/synth) with the third stage on
// and off, to show its cost.
func BenchmarkThirdStage(b *testing.B) {
	cards := synth.Cards(10000, 1)
	tasks := synth.Tasks(500, 2)
	for _, on := range []bool{false, true} {
		o := &Options{Similar: -1, NameFit: -1}
		if on {
			o = nil
		}
		ix := New(cards, o)
		ix.Search(tasks[0], 10)
		b.Run(fmt.Sprintf("third=%v", on), func(b *testing.B) { benchSearches(b, ix, tasks) })
	}
}

// BenchmarkSearchSteps runs the three searches the aspect-aware selector
// (package policy) makes for a two-step task over 10,000 synthetic cards
// of real English words: the task for 15 hits, then each step for 3, one
// search after another and as one batch (SearchBatch, as policy calls it).
func BenchmarkSearchSteps(b *testing.B) {
	ix := New(synth.Cards(10000, 1), nil)
	tasks := synth.Tasks(256, 2)
	ix.Search(tasks[0], 10)
	for _, batch := range []bool{false, true} {
		b.Run(map[bool]string{false: "searches", true: "batch"}[batch], func(b *testing.B) {
			b.ReportAllocs()
			ks := []int{15, 3, 3}
			i := 0
			for b.Loop() {
				first, then := tasks[i%len(tasks)], tasks[(i+1)%len(tasks)]
				if batch {
					ix.SearchBatch([]string{first + ", then " + then, first, then}, ks)
				} else {
					ix.Search(first+", then "+then, 15)
					ix.Search(first, 3)
					ix.Search(then, 3)
				}
				i++
			}
		})
	}
}

// BenchmarkNeighbours measures what the vector neighbours of query words
// the catalog lacks cost: each task of real words gets two more words
// that are in the vector table but in no card, on 1,000 and 10,000 cards,
// with neighbours off and on.
func BenchmarkNeighbours(b *testing.B) {
	t, err := loadVectors()
	if err != nil {
		b.Fatal(err)
	}
	words := make([]string, t.n)
	for id := range words {
		words[id] = t.word(id)
	}
	for _, n := range []int{1000, 10000} {
		cards := synth.Cards(n, 1)
		tasks := synth.Tasks(500, 2)
		ix := New(cards, nil)
		var lacking []string
		for _, w := range words[expandMinRank:] {
			toks := Tokens(w)
			if len(toks) == 1 && toks[0].Word == w && ix.terms[toks[0].Stem] == nil {
				lacking = append(lacking, w)
			}
			if len(lacking) == 2*len(tasks) {
				break
			}
		}
		for i := range tasks {
			tasks[i] += " " + lacking[2*i] + " " + lacking[2*i+1]
		}
		for _, on := range []bool{false, true} {
			o := &Options{Neighbours: -1}
			if on {
				o = nil
			}
			ix := New(cards, o)
			ix.Search(tasks[0], 10)
			b.Run(fmt.Sprintf("cards=%d/neighbours=%v", n, on), func(b *testing.B) { benchSearches(b, ix, tasks) })
		}
	}
}
