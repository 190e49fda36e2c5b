//go:build unix

package dense_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"testing"
	"time"

	capbroker "github.com/capbroker/capbroker"
	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/dense"
	"github.com/capbroker/capbroker/encoder"
	"github.com/capbroker/capbroker/internal/synth"
	"github.com/capbroker/capbroker/internal/testenv"
	"github.com/capbroker/capbroker/policy"
	"github.com/capbroker/capbroker/rank"
)

// cachedEmbedder is the built-in encoder for queries and a table of
// ready card vectors (random: the search costs the same whatever they
// hold), as a warm cache gives them.
type cachedEmbedder struct {
	enc   *encoder.Encoder
	cards map[string][]float32
}

func (c *cachedEmbedder) Model() string { return encoder.Model }
func (c *cachedEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if _, ok := c.cards[texts[0]]; ok {
		out := make([][]float32, len(texts))
		for i, t := range texts {
			out[i] = c.cards[t]
		}
		return out, nil
	}
	return c.enc.Embed(ctx, texts)
}

// EmbedQueries embeds queries as the built-in encoder does.
func (c *cachedEmbedder) EmbedQueries(ctx context.Context, texts []string) ([][]float32, error) {
	return c.enc.EmbedQueries(ctx, texts)
}

// newCachedEmbedder gives each card a random vector (seeded: the same
// every run) and encodes queries with enc.
func newCachedEmbedder(enc *encoder.Encoder, cards []card.Card) *cachedEmbedder {
	rng := rand.New(rand.NewPCG(3, 4))
	ce := &cachedEmbedder{enc: enc, cards: make(map[string][]float32, len(cards))}
	for i := range cards {
		v := make([]float32, encoder.Dim)
		for j := range v {
			v[j] = float32(rng.NormFloat64())
		}
		ce.cards[dense.Text(&cards[i])] = v
	}
	return ce
}

// timeSelects runs selectTask over tasks in turn for b's iterations and
// reports the p50 wall time and the mean CPU time of one.
func timeSelects(b *testing.B, tasks []string, selectTask func(task string)) {
	selectTask(tasks[0]) // warm-up: tables load on first use
	lat := make([]time.Duration, 0, b.N)
	i := 0
	cpu0 := testenv.CPUTime()
	for b.Loop() {
		t0 := time.Now()
		selectTask(tasks[i%len(tasks)])
		lat = append(lat, time.Since(t0))
		i++
	}
	b.ReportMetric(float64((testenv.CPUTime()-cpu0).Microseconds())/1000/float64(len(lat)), "cpu-ms/op")
	sort.Slice(lat, func(a, c int) bool { return lat[a] < lat[c] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
}

// memoQueries is an embedder that embeds each query text once and then
// answers from memory: BenchmarkSelect runs every task once before the
// clock starts, so the timed selects are hybrid ranking without the
// encoder's pass, to tell what the rest of a hybrid select costs.
type memoQueries struct {
	*cachedEmbedder
	mu sync.Mutex
	m  map[string][]float32
}

func (c *memoQueries) EmbedQueries(ctx context.Context, texts []string) ([][]float32, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v, ok := c.m[t]
		if !ok {
			vs, err := c.cachedEmbedder.EmbedQueries(ctx, []string{t})
			if err != nil {
				return nil, err
			}
			v = vs[0]
			c.m[t] = v
		}
		out[i] = v
	}
	return out, nil
}

// BenchmarkSelect runs select (the whole policy) with the lexical and the
// hybrid ranker side by side over 1k and 10k cards whose vectors are
// cached; the hybrid figure includes encoding the task with the built-in
// encoder on one worker, the hybrid-noencode figure does not (each task's
// query vectors are computed before the clock starts). Reports p50 of the
// wall time a select and the mean CPU time (one core: the figure to
// compare on a loaded machine). The sentences=2 tasks join two tasks as
// two sentences, which hybrid ranking compares with the cards one by one
// (dense.QueryParts).
func BenchmarkSelect(b *testing.B) {
	enc, err := encoder.New(&encoder.Options{Workers: 1})
	if err != nil {
		b.Fatal(err)
	}
	one := synth.Tasks(64, 2)
	two := make([]string, len(one))
	for i := range one {
		two[i] = one[i] + ". Then " + one[(i+1)%len(one)] + "."
	}
	for _, n := range []int{1000, 10000} {
		cat, _ := card.NewCatalog(synth.Cards(n, 1))
		cards := cat.Cards()
		ce := newCachedEmbedder(enc, cards)
		for _, kind := range []string{"lexical", "hybrid", "hybrid-noencode"} {
			for sentences, tasks := range [][]string{one, two} {
				name := fmt.Sprintf("cards=%d/%s", n, kind)
				if sentences > 0 {
					name = fmt.Sprintf("cards=%d/sentences=2/%s", n, kind)
				}
				b.Run(name, func(b *testing.B) {
					ctx := context.Background()
					o := &capbroker.Options{Cards: cards}
					var e dense.Embedder = ce
					memo := &memoQueries{cachedEmbedder: ce, m: map[string][]float32{}}
					if kind == "hybrid-noencode" {
						e = memo
					}
					if kind != "lexical" {
						o.NewRanker = func(ctx context.Context, cs []card.Card, lex *rank.Index) (policy.Ranker, error) {
							a := dense.NewAuto(ctx, lex, cs, e, nil)
							if !a.Ready() {
								return nil, fmt.Errorf("not ready: %s", a.Why())
							}
							return a, nil
						}
					}
					br, err := capbroker.New(ctx, o)
					if err != nil {
						b.Fatal(err)
					}
					if kind == "hybrid-noencode" {
						for _, t := range tasks {
							br.Select(ctx, t, nil)
						}
					}
					timeSelects(b, tasks, func(task string) { br.Select(ctx, task, nil) })
				})
			}
		}
	}
}

// BenchmarkColdEmbed1k embeds 1,000 cards the cache lacks with the
// built-in encoder on every core, as a first start does.
func BenchmarkColdEmbed1k(b *testing.B) {
	enc, err := encoder.New(nil)
	if err != nil {
		b.Fatal(err)
	}
	cards := synth.Cards(1000, 1)
	texts := make([]string, len(cards))
	for i := range cards {
		texts[i] = dense.Text(&cards[i])
	}
	pieces := 0
	for _, t := range texts {
		pieces += min(len(enc.Tokens(t)), encoder.MaxTokens)
	}
	cpu0 := testenv.CPUTime()
	for b.Loop() {
		if _, err := enc.Embed(context.Background(), texts); err != nil {
			b.Fatal(err)
		}
	}
	cpu := (testenv.CPUTime() - cpu0).Seconds() / float64(b.N)
	b.ReportMetric(cpu, "cpu-s/op")
	b.ReportMetric(float64(pieces), "pieces")
	b.ReportMetric(float64(pieces)/cpu, "pieces/cpu-s")
}
