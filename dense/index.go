package dense

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/rank"
)

// Fusion names how [Hybrid] combines the lexical and dense rankings.
type Fusion string

// The fusion methods.
const (
	// RRF is reciprocal rank fusion: a card scores
	// wl/(K+lexical rank) + wd/(K+dense rank); scores are ignored, so the
	// two scales never need calibrating.
	RRF Fusion = "rrf"
	// Blend is a weighted sum of normalized scores, (1-w)*lexical +
	// w*dense: lexical BM25F divided by the best candidate's (it has a
	// natural zero), cosine similarity min-max scaled over the dense
	// candidates (its range differs from model to model).
	Blend Fusion = "blend"
	// ZScore is a weighted sum of standardized scores, (1-w)*zl + w*zd:
	// the lexical score's z-score over the lexical candidates (a card
	// lexical ranking did not return gets the lowest candidate's), and
	// the cosine similarity's z-score over the whole catalog, so "how
	// unusually close in meaning" weighs against "how unusually well the
	// words match" whatever the model's cosine range. The default: on
	// the dev sets it beats RRF and Blend with the built-in encoder.
	ZScore Fusion = "zscore"
)

// Defaults of [Options].
const (
	DefaultQueryTimeout = 2 * time.Second
	DefaultRRFK         = 60
	// DefaultDenseWeight is the largest z-score fusion weight (in steps
	// of 0.05) at which no dev set ranks below lexical ranking with the
	// built-in encoder (NDCG@10, hybrid vs lexical: MetaTool single 0.702
	// vs 0.604, BFCL 0.839 vs 0.824, Seal-Tools dev 0.940 vs 0.939; at
	// 0.55 Seal-Tools dev drops to 0.937). Leave-one-dataset-out figures
	// are in the README. Tasks of several sentences are compared sentence
	// by sentence (see [QueryParts]).
	DefaultDenseWeight = 0.5
	// DefaultCoverageExponent: see Options.CoverageExponent.
	DefaultCoverageExponent = 0.0
	DefaultDepth            = 50
	DefaultCooldown         = 30 * time.Second
)

// Options tunes dense and hybrid ranking. A nil *Options uses every
// default.
type Options struct {
	// Int8 quantizes the card vectors (see VectorOptions.Int8).
	Int8 bool
	// Parallel bounds the goroutines of one vector search. If zero,
	// GOMAXPROCS.
	Parallel int
	// QueryTimeout bounds embedding one query, retries included. If zero,
	// DefaultQueryTimeout. A hybrid ranker that runs out of it falls back
	// to lexical ranking.
	QueryTimeout time.Duration
	// Fusion is ZScore, RRF or Blend. If empty, ZScore.
	Fusion Fusion
	// RRFK is the K of reciprocal rank fusion. If zero, DefaultRRFK.
	RRFK float64
	// DenseWeight is the dense ranking's share of the fused score, in
	// [0,1]: with RRF the dense and lexical terms are multiplied by 2w and
	// 2(1-w), with Blend by w and 1-w. If zero, DefaultDenseWeight;
	// negative means 0 (dense ranking ignored).
	DenseWeight float64
	// CoverageExponent, when positive, makes z-score fusion trust the
	// words more the more of the task they cover: the dense weight of a
	// query is DenseWeight·(1−c)^CoverageExponent, c the best lexical
	// candidate's coverage. Zero uses DefaultCoverageExponent; negative
	// turns it off (a fixed DenseWeight).
	CoverageExponent float64
	// Depth is how many candidates each ranking contributes to the
	// fusion. If zero, DefaultDepth; it is raised to k when k is larger.
	Depth int
	// MinSimilarity drops dense candidates whose cosine similarity is
	// below it, so a card lexical ranking missed enters only on real
	// similarity. If zero, no floor.
	MinSimilarity float64
	// Cooldown is how long a hybrid ranker skips the embedder after it
	// failed, answering lexically at once instead of waiting out
	// QueryTimeout on every query. If zero, DefaultCooldown; negative
	// disables it (every query tries the embedder).
	Cooldown time.Duration
	// OnFallback, if non-nil, is called each time a hybrid ranker answers
	// lexically because the dense part failed, with the query and why. It
	// must be safe for concurrent calls.
	OnFallback func(query string, err error)
	// Rank tunes the lexical index [NewRanker] builds. Nil uses rank's
	// defaults.
	Rank *rank.Options
}

func (o *Options) resolved() Options {
	var r Options
	if o != nil {
		r = *o
	}
	if r.QueryTimeout <= 0 {
		r.QueryTimeout = DefaultQueryTimeout
	}
	if r.Fusion == "" {
		r.Fusion = ZScore
	}
	if r.RRFK <= 0 {
		r.RRFK = DefaultRRFK
	}
	switch {
	case r.DenseWeight == 0:
		r.DenseWeight = DefaultDenseWeight
	case r.DenseWeight < 0:
		r.DenseWeight = 0
	case r.DenseWeight > 1:
		r.DenseWeight = 1
	}
	switch {
	case r.CoverageExponent == 0:
		r.CoverageExponent = DefaultCoverageExponent
	case r.CoverageExponent < 0:
		r.CoverageExponent = 0
	}
	if r.Depth <= 0 {
		r.Depth = DefaultDepth
	}
	if r.Cooldown == 0 {
		r.Cooldown = DefaultCooldown
	}
	return r
}

// Hit is one ranked card with the explanation of both rankings. Its
// embedded rank.Hit is what [Index.Rank] and [Hybrid.Rank] return: Name,
// Index, the fused Score, Coverage (the lexical coverage, or the cosine
// similarity when that is larger, so a card found by meaning alone can
// clear a coverage threshold) and the lexical Matches.
type Hit struct {
	rank.Hit
	// Lexical is the card's place in the lexical ranking; nil when
	// lexical ranking did not return it.
	Lexical *Part `json:"lexical,omitempty"`
	// Dense is the card's place in the dense ranking; nil when dense
	// ranking did not return it or was not used.
	Dense *Part `json:"dense,omitempty"`
	// Fallback, when set, says why the dense part was left out and the
	// hit is lexical only.
	Fallback string `json:"fallback,omitempty"`
}

// Part is one ranking's view of a hit.
type Part struct {
	// Rank is the 1-based place in that ranking.
	Rank int `json:"rank"`
	// Score is that ranking's score: BM25F for lexical, cosine
	// similarity for dense.
	Score float64 `json:"score"`
	// Fused is this part's contribution to the hit's fused score.
	Fused float64 `json:"fused"`
}

// Explain describes the hit in one line, for people.
func (h *Hit) Explain() string {
	var parts []string
	if h.Lexical != nil {
		terms := make([]string, len(h.Matches))
		for i, m := range h.Matches {
			terms[i] = fmt.Sprintf("%q", m.Term)
		}
		parts = append(parts, fmt.Sprintf("lexical #%d (score %.2f, matched %s)", h.Lexical.Rank, h.Lexical.Score, strings.Join(terms, ", ")))
	}
	if h.Dense != nil {
		parts = append(parts, fmt.Sprintf("dense #%d (cosine %.3f)", h.Dense.Rank, h.Dense.Score))
	}
	if h.Fallback != "" {
		parts = append(parts, "dense skipped: "+h.Fallback)
	}
	return strings.Join(parts, "; ")
}

// Index ranks cards by the cosine similarity of their vectors to the
// query's. It is safe for concurrent use.
type Index struct {
	e     Embedder
	vecs  *Vectors
	stats EmbedStats
	o     Options
}

// NewIndex embeds cards (through cache, which may be nil) and indexes
// their vectors. Hit.Index is a card's position in cards.
func NewIndex(ctx context.Context, cards []card.Card, e Embedder, cache *Cache, opts *Options) (*Index, error) {
	o := opts.resolved()
	vecs, st, err := EmbedCards(ctx, cards, e, cache)
	if err != nil {
		return nil, fmt.Errorf("building dense index: %w", err)
	}
	names := make([]string, len(cards))
	for i := range cards {
		names[i] = cards[i].Name
	}
	v, err := NewVectors(names, vecs, &VectorOptions{Int8: o.Int8, Parallel: o.Parallel})
	if err != nil {
		return nil, fmt.Errorf("building dense index: %w", err)
	}
	return &Index{e: e, vecs: v, stats: st, o: o}, nil
}

// Stats says how the card vectors were obtained.
func (ix *Index) Stats() EmbedStats { return ix.stats }

// Vectors returns the index's vector store.
func (ix *Index) Vectors() *Vectors { return ix.vecs }

// Embedder returns the index's embedder.
func (ix *Index) Embedder() Embedder { return ix.e }

// embedQueries embeds query texts, with the embedder's EmbedQueries when
// it has one (see [QueryEmbedder]).
func (ix *Index) embedQueries(ctx context.Context, texts []string) ([][]float32, error) {
	if q, ok := ix.e.(QueryEmbedder); ok {
		return q.EmbedQueries(ctx, texts)
	}
	return ix.e.Embed(ctx, texts)
}

// EmbedQuery embeds one query within the QueryTimeout.
func (ix *Index) EmbedQuery(ctx context.Context, query string) ([]float32, error) {
	if strings.TrimSpace(query) == "" {
		return nil, fmt.Errorf("embedding query: empty query")
	}
	ctx, cancel := context.WithTimeout(ctx, ix.o.QueryTimeout)
	defer cancel()
	vs, err := ix.embedQueries(ctx, []string{query})
	if err != nil {
		return nil, fmt.Errorf("embedding query: %w", err)
	}
	if len(vs) != 1 {
		return nil, fmt.Errorf("embedding query: got %d vectors for 1 text", len(vs))
	}
	return vs[0], nil
}

// Search embeds the query and returns the k most similar cards (all when
// k <= 0), best first, ties broken by name. It fails when the query
// cannot be embedded; [Hybrid] falls back instead. Unlike [Hybrid], it
// embeds a task of several sentences whole: ranked by meaning alone,
// sentence by sentence costs MetaTool single 0.017 NDCG@10 and BFCL
// 0.015 (Seal-Tools gains 0.19).
func (ix *Index) Search(ctx context.Context, query string, k int) ([]Hit, error) {
	if strings.TrimSpace(query) == "" || ix.vecs.Len() == 0 {
		return nil, nil
	}
	q, err := ix.EmbedQuery(ctx, query)
	if err != nil {
		return nil, err
	}
	return ix.SearchVector(q, k)
}

// SearchVector is [Index.Search] with an already embedded query.
func (ix *Index) SearchVector(q []float32, k int) ([]Hit, error) {
	sc, err := ix.vecs.Search(q, k)
	if err != nil {
		return nil, fmt.Errorf("dense search: %w", err)
	}
	return ix.hitsOf(sc), nil
}

// hitsOf makes hits of a search's scored vectors, best first, down to
// the MinSimilarity.
func (ix *Index) hitsOf(sc []Scored) []Hit {
	hits := make([]Hit, 0, len(sc))
	for i, s := range sc {
		if ix.o.MinSimilarity != 0 && s.Score < ix.o.MinSimilarity {
			break
		}
		hits = append(hits, Hit{
			Hit:   rank.Hit{Name: s.Name, Index: s.Index, Score: s.Score, Coverage: clamp01(s.Score)},
			Dense: &Part{Rank: i + 1, Score: s.Score, Fused: s.Score},
		})
	}
	return hits
}

// Rank is [Index.Search] in the shape of policy.Ranker.
func (ix *Index) Rank(ctx context.Context, query string, k int) ([]rank.Hit, error) {
	hits, err := ix.Search(ctx, query, k)
	if err != nil {
		return nil, err
	}
	return plain(hits), nil
}

func plain(hits []Hit) []rank.Hit {
	out := make([]rank.Hit, len(hits))
	for i := range hits {
		out[i] = hits[i].Hit
	}
	return out
}

func clamp01(x float64) float64 {
	return min(max(x, 0), 1)
}
