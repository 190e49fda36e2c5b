package dense

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/rank"
)

// Hybrid fuses a lexical and a dense ranking. Its Rank never fails: when
// the query cannot be embedded within Options.QueryTimeout (endpoint
// down, slow, misconfigured), it answers with the lexical ranking alone
// and records the fallback. It is safe for concurrent use.
type Hybrid struct {
	lex   *rank.Index
	dense *Index
	o     Options

	fallbacks atomic.Int64
	mu        sync.Mutex
	downUntil time.Time // skip the embedder until then
	downErr   error
	now       func() time.Time
}

// NewHybrid fuses lex and dense, which must index the same cards in the
// same order (Hit.Index is shared). opts, if nil, are dense's options.
func NewHybrid(lex *rank.Index, dense *Index, opts *Options) *Hybrid {
	o := dense.o
	if opts != nil {
		o = opts.resolved()
	}
	return &Hybrid{lex: lex, dense: dense, o: o, now: time.Now}
}

// Fallbacks returns how many searches answered lexically because the
// dense part failed or was cooling down.
func (h *Hybrid) Fallbacks() int64 { return h.fallbacks.Load() }

// Lexical returns the lexical index.
func (h *Hybrid) Lexical() *rank.Index { return h.lex }

// Dense returns the dense index.
func (h *Hybrid) Dense() *Index { return h.dense }

// Rank is [Hybrid.Search] in the shape of policy.Ranker. Its error is
// always nil.
func (h *Hybrid) Rank(ctx context.Context, query string, k int) ([]rank.Hit, error) {
	return plain(h.Search(ctx, query, k)), nil
}

// errCooling wraps the last failure while the embedder is skipped.
type errCooling struct {
	err   error
	until time.Time
}

func (e *errCooling) Error() string {
	return fmt.Sprintf("embedder skipped until %s after: %v", e.until.Format(time.TimeOnly), e.err)
}
func (e *errCooling) Unwrap() error { return e.err }

// Search returns the best k fused hits (all candidates when k <= 0), best
// first, ties broken by name, each explained by its lexical and dense
// parts. It never fails; see [Hybrid].
func (h *Hybrid) Search(ctx context.Context, query string, k int) []Hit {
	depth := max(h.o.Depth, k)
	lex := h.lex.Search(query, depth)
	if strings.TrimSpace(query) == "" || h.dense.vecs.Len() == 0 {
		return lexicalOnly(lex, k, "")
	}
	ds, err := h.denseSearch(ctx, query, depth)
	if ds != nil {
		defer ds.scores.release()
	}
	if err == nil && h.o.Fusion == ZScore {
		err = h.lexicalSimilarities(lex, ds)
	}
	if err != nil {
		h.fallbacks.Add(1)
		if h.o.OnFallback != nil {
			h.o.OnFallback(query, err)
		}
		return lexicalOnly(lex, k, err.Error())
	}
	return h.fuse(lex, ds, k)
}

// denseResult is the dense side of one search.
type denseResult struct {
	hits []Hit
	mo   Moments
	// parts scores every card for a query of several parts; nil for one.
	parts *partScores
	// rows holds each part's similarity to every card (Vectors.scoreRows).
	rows [][]float32
	// scores, when set, hold the rows, and are released after the search.
	scores *scores
	// lexSim holds the similarity of each lexical candidate (ZScore only).
	lexSim []float64
}

// z is the z-score of a card's similarity sim: over the catalog for a
// one-part query, its best part's for several.
func (ds *denseResult) z(idx int, sim float64) float64 {
	if ds.parts != nil {
		return ds.parts.z[idx]
	}
	if ds.mo.Std == 0 {
		return 0
	}
	return (sim - ds.mo.Mean) / ds.mo.Std
}

// lexicalSimilarities gives z-score fusion the similarity of each
// lexical candidate, from the scores of every card the dense search
// computed: the dense search returned only its best.
func (h *Hybrid) lexicalSimilarities(lex []rank.Hit, ds *denseResult) error {
	ds.lexSim = make([]float64, len(lex))
	for i, l := range lex {
		if l.Index < 0 || l.Index >= len(ds.rows[0]) {
			return fmt.Errorf("dense search: no vector %d of %d", l.Index, len(ds.rows[0]))
		}
		if ds.parts != nil {
			ds.lexSim[i] = ds.parts.sim[l.Index]
		} else {
			ds.lexSim[i] = float64(ds.rows[0][l.Index])
		}
	}
	return nil
}

// denseSearch embeds the query unless the embedder is cooling down after
// a failure, and searches the vectors.
func (h *Hybrid) denseSearch(ctx context.Context, query string, depth int) (*denseResult, error) {
	if err := h.cooling(); err != nil {
		return nil, err
	}
	qs, err := h.dense.EmbedQueryParts(ctx, query)
	if err != nil {
		h.failed(ctx, err)
		return nil, err
	}
	hits, mo, ps, sc, err := h.dense.searchParts(qs, depth)
	if err != nil {
		return nil, err
	}
	return &denseResult{hits: hits, mo: mo, parts: ps, rows: sc.rows, scores: sc}, nil
}

// cooling returns an *errCooling while the embedder cools down after a
// failure (Options.Cooldown), nil otherwise.
func (h *Hybrid) cooling() error {
	if h.o.Cooldown <= 0 {
		return nil
	}
	h.mu.Lock()
	until, last := h.downUntil, h.downErr
	h.mu.Unlock()
	if h.now().Before(until) {
		return &errCooling{err: last, until: until}
	}
	return nil
}

// failed starts the cooldown after the embedder failed with err. A caller
// that gave up is not the endpoint's fault.
func (h *Hybrid) failed(ctx context.Context, err error) {
	if h.o.Cooldown > 0 && ctx.Err() == nil {
		h.mu.Lock()
		h.downUntil, h.downErr = h.now().Add(h.o.Cooldown), err
		h.mu.Unlock()
	}
}

// lexicalOnly wraps lexical hits, keeping k.
func lexicalOnly(lex []rank.Hit, k int, fallback string) []Hit {
	if k > 0 && len(lex) > k {
		lex = lex[:k]
	}
	out := make([]Hit, len(lex))
	for i, l := range lex {
		out[i] = Hit{Hit: l, Lexical: &Part{Rank: i + 1, Score: l.Score, Fused: l.Score}, Fallback: fallback}
	}
	return out
}

// fuse combines the two candidate lists.
func (h *Hybrid) fuse(lex []rank.Hit, ds *denseResult, k int) []Hit {
	dense := ds.hits
	wd := h.o.DenseWeight
	wl := 1 - wd
	if h.o.Fusion == ZScore {
		return h.fuseZ(lex, ds, k)
	}
	byIndex := make(map[int]*Hit, len(lex)+len(dense))
	var order []*Hit
	get := func(idx int, name string) *Hit {
		if x := byIndex[idx]; x != nil {
			return x
		}
		x := &Hit{Hit: rank.Hit{Name: name, Index: idx}}
		byIndex[idx] = x
		order = append(order, x)
		return x
	}
	lexNorm := byMax(len(lex), func(i int) float64 { return lex[i].Score })
	denseNorm := minMax(len(dense), func(i int) float64 { return dense[i].Dense.Score })
	for i, l := range lex {
		x := get(l.Index, l.Name)
		x.Coverage, x.Matches = l.Coverage, l.Matches
		x.Asked, x.Override = l.Asked, l.Override
		p := &Part{Rank: i + 1, Score: l.Score}
		switch h.o.Fusion {
		case Blend:
			p.Fused = wl * lexNorm(i)
		default:
			p.Fused = 2 * wl / (h.o.RRFK + float64(i+1))
		}
		x.Lexical = p
	}
	for i, d := range dense {
		x := get(d.Index, d.Name)
		p := &Part{Rank: i + 1, Score: d.Dense.Score}
		switch h.o.Fusion {
		case Blend:
			p.Fused = wd * denseNorm(i)
		default:
			p.Fused = 2 * wd / (h.o.RRFK + float64(i+1))
		}
		x.Dense = p
		x.Coverage = max(x.Coverage, clamp01(p.Score))
	}
	for _, x := range order {
		x.Score = 0
		if x.Lexical != nil {
			x.Score += x.Lexical.Fused
		}
		if x.Dense != nil {
			x.Score += x.Dense.Fused
			x.Similarity = x.Dense.Score
		}
	}
	return sortHits(order, k)
}

// fuseZ is z-score fusion (see [ZScore]). Every candidate has both
// scores: its cosine similarity is known for lexical candidates too.
func (h *Hybrid) fuseZ(lex []rank.Hit, ds *denseResult, k int) []Hit {
	wd := h.o.DenseWeight
	if p := h.o.CoverageExponent; p > 0 {
		var c float64
		for _, l := range lex {
			c = max(c, l.Coverage)
		}
		wd *= math.Pow(1-clamp01(c), p)
	}
	wl := 1 - wd
	// The lexical scores' moments over the candidates.
	var lm, ls float64
	for _, l := range lex {
		lm += l.Score
	}
	if n := float64(len(lex)); n > 0 {
		lm /= n
		for _, l := range lex {
			ls += (l.Score - lm) * (l.Score - lm)
		}
		ls = math.Sqrt(ls / n)
	}
	zl := func(s float64) float64 {
		if ls == 0 {
			return 0
		}
		return (s - lm) / ls
	}
	lowest := 0.0
	if len(lex) > 0 {
		lowest = zl(lex[len(lex)-1].Score)
	}
	// The candidates and their parts live in two slices allocated once
	// and never grown, so the pointers into them stay valid: a fusion is
	// two allocations, not two or three a candidate.
	n := len(lex) + len(ds.hits)
	byIndex := make(map[int]*Hit, n)
	order := make([]*Hit, 0, n)
	hits := make([]Hit, 0, n)
	parts := make([]Part, 0, n)
	add := func(x Hit) *Hit {
		hits = append(hits, x)
		p := &hits[len(hits)-1]
		byIndex[x.Index] = p
		order = append(order, p)
		return p
	}
	part := func(p Part) *Part {
		parts = append(parts, p)
		return &parts[len(parts)-1]
	}
	for i, l := range lex {
		x := add(Hit{Hit: rank.Hit{Name: l.Name, Index: l.Index, Coverage: l.Coverage, Matches: l.Matches,
			Phrases: l.Phrases, Meaning: l.Meaning, NameFit: l.NameFit, Asked: l.Asked, Override: l.Override}})
		x.Lexical = part(Part{Rank: i + 1, Score: l.Score, Fused: wl * zl(l.Score)})
		x.Similarity = ds.lexSim[i]
	}
	for i, d := range ds.hits {
		x := byIndex[d.Index]
		if x == nil {
			x = add(Hit{Hit: rank.Hit{Name: d.Name, Index: d.Index, Similarity: d.Dense.Score}})
		}
		x.Dense = part(Part{Rank: i + 1, Score: d.Dense.Score})
	}
	for _, x := range order {
		z := ds.z(x.Index, x.Similarity)
		x.SimilarityZ = z
		x.Score = wd * z
		if x.Lexical != nil {
			x.Score += x.Lexical.Fused
		} else {
			// As the weakest lexical candidate, and below it on a tie.
			x.Score += wl*lowest - 1e-9
		}
		if x.Dense != nil {
			x.Dense.Fused = wd * z
		}
		// Meaning stands in for words only when it stands out: a
		// similarity MeaningZ standard deviations above the catalog's
		// mean covers the task by z/(2·MeaningZ), half at the threshold.
		// A catalog too small to say what is unusual counts the
		// similarity itself, as RRF and Blend do.
		switch {
		case ds.mo.N < MeaningMinCards:
			x.Coverage = max(x.Coverage, clamp01(x.Similarity))
		case z >= MeaningZ:
			x.Coverage = max(x.Coverage, clamp01(z/(2*MeaningZ)))
		}
	}
	return sortHits(order, k)
}

// MeaningZ is how many standard deviations above the catalog's mean a
// card's similarity to the task must be for z-score fusion to count it as
// coverage (policy thresholds read coverage): with the built-in encoder on
// the example catalog, the best card of 24 nonsense tasks ("blorp the
// zingle", "kjhgf poiuy", Korean and Thai text) stands 2.6–3.4 deviations
// above the mean, and the gold tool of 25 of the 60 example tasks 4 or
// more.
const MeaningZ = 4.0

// MeaningMinCards is the least catalog whose similarity moments
// [MeaningZ] is judged by.
const MeaningMinCards = 20

// sortHits orders fused hits best first, ties broken by name, and keeps k.
func sortHits(order []*Hit, k int) []Hit {
	slices.SortFunc(order, func(a, b *Hit) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		case a.Name != b.Name:
			return strings.Compare(a.Name, b.Name)
		}
		return a.Index - b.Index
	})
	if k > 0 && len(order) > k {
		order = order[:k]
	}
	out := make([]Hit, len(order))
	for i, x := range order {
		out[i] = *x
	}
	return out
}

// byMax returns a function scaling the n non-negative scores score(i) by
// their maximum, to [0,1]. BM25F has a natural zero (no match), so the
// lowest-scored lexical candidate keeps its share.
func byMax(n int, score func(int) float64) func(int) float64 {
	var hi float64
	for i := range n {
		hi = max(hi, score(i))
	}
	if hi <= 0 {
		return func(int) float64 { return 0 }
	}
	return func(i int) float64 { return score(i) / hi }
}

// minMax returns a function scaling the n scores score(i) to [0,1] by
// their minimum and maximum; equal scores all scale to 1.
func minMax(n int, score func(int) float64) func(int) float64 {
	if n == 0 {
		return score
	}
	lo, hi := score(0), score(0)
	for i := 1; i < n; i++ {
		lo, hi = min(lo, score(i)), max(hi, score(i))
	}
	if hi == lo {
		return func(int) float64 { return 1 }
	}
	return func(i int) float64 { return (score(i) - lo) / (hi - lo) }
}

// Ranker is the interface rankers share; it is policy.Ranker's method
// set, so any value returned by [NewRanker] can be given to
// policy.NewSelector or capbroker.Options.Ranker.
type Ranker interface {
	Rank(ctx context.Context, query string, k int) ([]rank.Hit, error)
}

// The ranker kinds of [NewRanker].
const (
	KindLexical = "lexical"
	KindDense   = "dense"
	KindHybrid  = "hybrid"
)

// Kinds lists the ranker kinds, for flags and errors.
var Kinds = []string{KindLexical, KindDense, KindHybrid}

var (
	_ Ranker = (*rank.Index)(nil)
	_ Ranker = (*Index)(nil)
	_ Ranker = (*Hybrid)(nil)
)

// NewRanker builds the ranker of a kind over cards (for `capbroker eval
// --ranker`): "lexical" is a rank.Index (e and cache unused), "dense" an
// [Index], "hybrid" a [Hybrid] of both. Hit.Index is a card's position in
// cards. Dense and hybrid need an embedder; cache may be nil.
func NewRanker(ctx context.Context, kind string, cards []card.Card, e Embedder, cache *Cache, opts *Options) (Ranker, error) {
	var ro *rank.Options
	if opts != nil {
		ro = opts.Rank
	}
	switch kind {
	case KindLexical, "":
		return rank.New(cards, ro), nil
	case KindDense, KindHybrid:
		if e == nil {
			return nil, fmt.Errorf("ranker %q needs an embeddings endpoint: %w", kind, ErrNotConfigured)
		}
		ix, err := NewIndex(ctx, cards, e, cache, opts)
		if err != nil {
			return nil, err
		}
		if kind == KindDense {
			return ix, nil
		}
		return NewHybrid(rank.New(cards, ro), ix, opts), nil
	}
	return nil, fmt.Errorf("unknown ranker %q (want %s)", kind, strings.Join(Kinds, ", "))
}

// IsCooling reports whether err (as given to Options.OnFallback) is the
// embedder being skipped during its cooldown rather than a new failure.
func IsCooling(err error) bool {
	var c *errCooling
	return errors.As(err, &c)
}
