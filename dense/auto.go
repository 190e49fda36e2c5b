package dense

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/rank"
)

// Coster is implemented by embedders that can tell, before embedding,
// about how long a batch of texts would take (the built-in encoder
// counts its pieces). [Auto] uses it to decide whether a one-shot
// command can afford to embed the cards it lacks.
type Coster interface {
	EstimateEmbed(texts []string) time.Duration
}

// DefaultBudget is how long a one-shot [Auto] may spend embedding cards
// the cache lacks before ranking.
const DefaultBudget = time.Second

// AutoOptions configures [NewAuto].
type AutoOptions struct {
	// Options tune the hybrid ranking once the card vectors are ready.
	Options
	// Dense ranks by meaning alone instead of fusing with the lexical
	// ranking.
	Dense bool
	// Cache keeps card vectors between runs. Nil embeds every card.
	Cache *Cache
	// Background embeds missing card vectors in a goroutine and ranks
	// lexically until they are ready: for long-running processes (serve,
	// gateway). Without it the missing vectors are embedded before NewAuto
	// returns if that fits Budget, else the ranking stays lexical.
	Background bool
	// Budget bounds a one-shot build's embedding. If zero, DefaultBudget;
	// an embedder without [Coster] is given max(Budget, QueryTimeout)
	// and abandoned when it runs over.
	Budget time.Duration
	// OnNote, if non-nil, is told once of each reason the ranking is (or
	// stays, for now) lexical: cards not embedded, a broken cache, an
	// embedder that failed while embedding cards. Background builds call
	// it from their goroutine; it must be safe for concurrent use.
	OnNote func(note string)
}

// Auto is the default ranker when dense ranking is on: a [Hybrid] (or
// dense [Index]) once the card vectors are at hand, the lexical ranking
// until then or when they cannot be had. Building it never fails and
// ranking never fails; every fallback is counted and, once, noted. It is
// safe for concurrent use.
type Auto struct {
	lex   *rank.Index
	o     AutoOptions
	ready atomic.Pointer[Hybrid]
	// why is the reason the ranking is lexical while ready is nil.
	why       atomic.Pointer[string]
	fallbacks atomic.Int64
	done      chan struct{}
	stats     EmbedStats
	mu        sync.Mutex
}

// NewAuto builds the ranker over cards, whose lexical index is lex (same
// cards, same order). ctx bounds a background build too.
func NewAuto(ctx context.Context, lex *rank.Index, cards []card.Card, e Embedder, opts *AutoOptions) *Auto {
	a := &Auto{lex: lex, done: make(chan struct{})}
	if opts != nil {
		a.o = *opts
	}
	a.o.Options = a.o.Options.resolved()
	if a.o.Budget <= 0 {
		a.o.Budget = DefaultBudget
	}
	a.setWhy("card vectors are being prepared")
	st := EmbedStats{Model: e.Model(), Cards: len(cards)}
	ct, err := prepareCards(cards)
	if err != nil {
		a.fail(err)
		return a
	}
	vecs := make([][]float32, len(cards))
	cache := a.o.Cache
	if cache != nil {
		if err := ct.lookup(ctx, cache, st.Model, vecs, &st); err != nil {
			a.note(fmt.Sprintf("the embedding cache cannot be read, so card vectors are neither read nor kept: %v", err))
			cache = nil
			clear(vecs)
			st.Cached = 0
		}
	}
	var missing []string
	for i, v := range vecs {
		if v == nil {
			missing = append(missing, ct.texts[i])
		}
	}
	build := func(ctx context.Context) {
		defer close(a.done)
		got, st, err := finishEmbedding(ctx, e, cache, ct, vecs, st)
		if err != nil && isCacheError(err) {
			// A cache that cannot be written must not cost the ranking.
			a.note(fmt.Sprintf("the embedding cache cannot be written, so card vectors are not kept: %v", err))
			got, st, err = finishEmbedding(ctx, e, nil, ct, vecs, st)
		}
		if err != nil {
			a.fail(err)
			return
		}
		a.install(cards, got, e, st)
	}
	switch {
	case len(missing) == 0:
		build(ctx)
		if p, ok := e.(Preparer); ok && a.o.Background {
			go p.Prepare()
		}
	case a.o.Background:
		a.setWhy(fmt.Sprintf("%d of %d cards are being embedded in the background", len(missing), len(cards)))
		go func() {
			build(ctx)
			if p, ok := e.(Preparer); ok {
				p.Prepare()
			}
			// Embedding leaves garbage and free heap behind (the
			// encoder's activations, the texts' pieces: 20 MiB and more
			// for 1,000 cards) that the runtime would give back to the OS
			// only slowly; a long-running process should not keep it
			// resident. One collection after seconds of embedding is
			// cheap.
			if a.Stats().Embedded > 0 {
				debug.FreeOSMemory()
			}
		}()
	default:
		limit := max(a.o.Budget, a.o.QueryTimeout)
		if c, ok := e.(Coster); ok {
			if est := c.EstimateEmbed(missing); est > a.o.Budget {
				a.fail(fmt.Errorf("%d of %d cards have no vector yet (about %s of embedding); `capbroker embed` embeds them once",
					len(missing), len(cards), est.Round(100*time.Millisecond)))
				close(a.done)
				return a
			}
			limit = 10 * a.o.Budget // the estimate said it fits; this only guards it
		}
		bctx, cancel := context.WithTimeout(ctx, limit)
		defer cancel()
		build(bctx)
	}
	return a
}

// Preparer is an [Embedder] that can get ready for queries ahead of the
// first (the built-in encoder lays its weights out for its kernels). A
// long-running process's [Auto] (AutoOptions.Background) prepares its
// embedder in the background once the card vectors are at hand.
type Preparer interface {
	Prepare()
}

// isCacheError reports whether err came from writing the cache rather
// than from the embedder.
func isCacheError(err error) bool {
	var ce *cacheError
	return errors.As(err, &ce)
}

func (a *Auto) install(cards []card.Card, vecs [][]float32, e Embedder, st EmbedStats) {
	names := make([]string, len(cards))
	for i := range cards {
		names[i] = cards[i].Name
	}
	v, err := NewVectors(names, vecs, &VectorOptions{Int8: a.o.Int8, Parallel: a.o.Parallel})
	if err != nil {
		a.fail(err)
		return
	}
	a.mu.Lock()
	a.stats = st
	a.mu.Unlock()
	ix := &Index{e: e, vecs: v, stats: st, o: a.o.Options}
	a.ready.Store(NewHybrid(a.lex, ix, &a.o.Options))
}

func (a *Auto) setWhy(s string) { a.why.Store(&s) }

// fail records why the ranking stays lexical, and notes it.
func (a *Auto) fail(err error) {
	msg := "ranking lexically: " + err.Error()
	a.setWhy(msg)
	a.note(msg)
}

func (a *Auto) note(s string) {
	if a.o.OnNote != nil {
		a.o.OnNote(s)
	}
}

// Ready reports whether the card vectors are in use.
func (a *Auto) Ready() bool { return a.ready.Load() != nil }

// Wait blocks until the build finished (successfully or not) or ctx ends.
func (a *Auto) Wait(ctx context.Context) error {
	select {
	case <-a.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Why says why the ranking is lexical, or "" when the vectors are in use.
func (a *Auto) Why() string {
	if a.Ready() {
		return ""
	}
	return *a.why.Load()
}

// Stats says how the card vectors were obtained (zero until ready).
func (a *Auto) Stats() EmbedStats {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.stats
}

// Fallbacks counts searches answered lexically: before the vectors were
// ready, without them, or because the query could not be embedded.
func (a *Auto) Fallbacks() int64 {
	n := a.fallbacks.Load()
	if h := a.ready.Load(); h != nil {
		n += h.Fallbacks()
	}
	return n
}

// Search returns the best k hits (see [Hybrid.Search]); never fails.
func (a *Auto) Search(ctx context.Context, query string, k int) []Hit {
	h := a.ready.Load()
	if h == nil {
		a.fallbacks.Add(1)
		return lexicalOnly(a.lex.Search(query, k), k, a.Why())
	}
	if !a.o.Dense {
		return h.Search(ctx, query, k)
	}
	hits, err := h.dense.Search(ctx, query, k)
	if err != nil {
		a.fallbacks.Add(1)
		if a.o.OnFallback != nil {
			a.o.OnFallback(query, err)
		}
		return lexicalOnly(a.lex.Search(query, k), k, err.Error())
	}
	for i := range hits {
		hits[i].Similarity = hits[i].Dense.Score
	}
	return hits
}

// Rank is [Auto.Search] in the shape of policy.Ranker; its error is
// always nil.
func (a *Auto) Rank(ctx context.Context, query string, k int) ([]rank.Hit, error) {
	return plain(a.Search(ctx, query, k)), nil
}

var _ Ranker = (*Auto)(nil)
