package dense

import (
	"context"
	"fmt"
	"strings"

	"github.com/capbroker/capbroker/rank"
)

// Batched search: a task and its steps (see package steps) are ranked
// together, so their vectors come from one call to the embedder (one
// forward pass of the built-in encoder over all of them, one request to
// an endpoint) instead of one call each. A task of several steps is
// embedded as its steps ([QueryParts]), so with its steps in the batch
// each step's text is embedded once. Each query is then ranked exactly
// as Search ranks it alone.

// EmbedQueries embeds several queries in one call to the embedder, within
// one QueryTimeout; a text given twice is embedded once, and both get the
// same vector. Every query must have text.
func (ix *Index) EmbedQueries(ctx context.Context, queries []string) ([][]float32, error) {
	at := make(map[string]int, len(queries))
	var uniq []string
	for i, q := range queries {
		if strings.TrimSpace(q) == "" {
			return nil, fmt.Errorf("embedding queries: query %d is empty", i)
		}
		if _, ok := at[q]; !ok {
			at[q] = len(uniq)
			uniq = append(uniq, q)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, ix.o.QueryTimeout)
	defer cancel()
	vs, err := ix.embedQueries(ctx, uniq)
	if err != nil {
		return nil, fmt.Errorf("embedding %d queries: %w", len(uniq), err)
	}
	if len(vs) != len(uniq) {
		return nil, fmt.Errorf("embedding queries: got %d vectors for %d texts", len(vs), len(uniq))
	}
	if len(uniq) == len(queries) {
		return vs, nil
	}
	out := make([][]float32, len(queries))
	for i, q := range queries {
		out[i] = vs[at[q]]
	}
	return out, nil
}

// SearchBatch is [Index.Search] for each query, embedded in one call; the
// i-th query gets ks[i] hits. It fails when the queries cannot be
// embedded.
func (ix *Index) SearchBatch(ctx context.Context, queries []string, ks []int) ([][]Hit, error) {
	out := make([][]Hit, len(queries))
	texts, which := nonBlank(queries)
	if len(texts) == 0 || ix.vecs.Len() == 0 {
		return out, nil
	}
	vecs, err := ix.EmbedQueries(ctx, texts)
	if err != nil {
		return nil, err
	}
	scores, err := ix.vecs.scoreRows(vecs) // one pass over the vectors
	if err != nil {
		return nil, fmt.Errorf("dense search: %w", err)
	}
	defer scores.release()
	for j, i := range which {
		sc, _ := ix.vecs.topOfRow(scores.rows[j], kAt(ks, i))
		out[i] = ix.hitsOf(sc)
	}
	return out, nil
}

// RankBatch is [Index.SearchBatch] in the shape of policy.BatchRanker.
func (ix *Index) RankBatch(ctx context.Context, queries []string, ks []int) ([][]rank.Hit, error) {
	hits, err := ix.SearchBatch(ctx, queries, ks)
	if err != nil {
		return nil, err
	}
	return plainAll(hits), nil
}

// SearchBatch is [Hybrid.Search] for each query, the i-th for ks[i] hits,
// with the queries embedded in one call. It never fails: when they cannot
// be embedded, each query is answered lexically and counted as a
// fallback, as Search would.
func (h *Hybrid) SearchBatch(ctx context.Context, queries []string, ks []int) [][]Hit {
	out := make([][]Hit, len(queries))
	depths := make([]int, len(queries))
	for i := range queries {
		depths[i] = max(h.o.Depth, kAt(ks, i))
	}
	// Ranked by words together: the queries share their words' work.
	lex := h.lex.SearchBatch(queries, depths)
	// Every query's sentences (see QueryParts), all in one call.
	_, which := nonBlank(queries)
	var texts []string
	first := make([]int, len(which)+1)
	for j, i := range which {
		first[j] = len(texts)
		texts = append(texts, QueryParts(queries[i])...)
	}
	first[len(which)] = len(texts)
	var vecs [][]float32
	var err error
	if len(texts) > 0 && h.dense.vecs.Len() > 0 {
		vecs, err = h.embedBatch(ctx, texts)
	}
	// Every query's sentences scored against the cards in one pass over
	// the vectors; a task's sentences are its steps, scored once. A vector
	// that cannot be scored (NaN, the wrong length: an embedder's fault)
	// fails only its own query, as in Search: the queries are then scored
	// one by one.
	var rows [][]float32
	if err == nil && vecs != nil {
		if sc, serr := h.dense.vecs.scoreRows(vecs); serr == nil {
			defer sc.release()
			rows = sc.rows
		}
	}
	dense := make([][][]float32, len(queries))
	denseRows := make([][][]float32, len(queries))
	for j, i := range which {
		if vecs != nil {
			dense[i] = vecs[first[j]:first[j+1]]
		}
		if rows != nil {
			denseRows[i] = rows[first[j]:first[j+1]]
		}
	}
	for i, q := range queries {
		k := kAt(ks, i)
		if strings.TrimSpace(q) == "" || h.dense.vecs.Len() == 0 {
			out[i] = lexicalOnly(lex[i], k, "") // as Search answers them
			continue
		}
		qerr := err
		var ds *denseResult
		switch {
		case qerr == nil && rows != nil:
			hits, mo, ps := h.dense.searchRows(denseRows[i], max(h.o.Depth, k))
			ds = &denseResult{hits: hits, mo: mo, parts: ps, rows: denseRows[i]}
		case qerr == nil:
			var sc *scores
			var hits []Hit
			var mo Moments
			var ps *partScores
			if hits, mo, ps, sc, qerr = h.dense.searchParts(dense[i], max(h.o.Depth, k)); qerr == nil {
				defer sc.release()
				ds = &denseResult{hits: hits, mo: mo, parts: ps, rows: sc.rows}
			}
		}
		if qerr == nil && h.o.Fusion == ZScore {
			qerr = h.lexicalSimilarities(lex[i], ds)
		}
		if qerr != nil {
			h.fallbacks.Add(1)
			if h.o.OnFallback != nil {
				h.o.OnFallback(q, qerr)
			}
			out[i] = lexicalOnly(lex[i], k, qerr.Error())
			continue
		}
		out[i] = h.fuse(lex[i], ds, k)
	}
	return out
}

// RankBatch is [Hybrid.SearchBatch] in the shape of policy.BatchRanker.
// Its error is always nil.
func (h *Hybrid) RankBatch(ctx context.Context, queries []string, ks []int) ([][]rank.Hit, error) {
	return plainAll(h.SearchBatch(ctx, queries, ks)), nil
}

// embedBatch embeds texts unless the embedder is cooling down after a
// failure, and starts the cooldown when it fails (see denseSearch).
func (h *Hybrid) embedBatch(ctx context.Context, texts []string) ([][]float32, error) {
	if err := h.cooling(); err != nil {
		return nil, err
	}
	vecs, err := h.dense.EmbedQueries(ctx, texts)
	if err != nil {
		h.failed(ctx, err)
	}
	return vecs, err
}

// SearchBatch is [Auto.Search] for each query, the i-th for ks[i] hits,
// embedded in one call once the card vectors are ready. It never fails.
func (a *Auto) SearchBatch(ctx context.Context, queries []string, ks []int) [][]Hit {
	h := a.ready.Load()
	out := make([][]Hit, len(queries))
	lexical := func(why string) [][]Hit {
		lex := a.lex.SearchBatch(queries, ks)
		for i := range queries {
			a.fallbacks.Add(1)
			out[i] = lexicalOnly(lex[i], kAt(ks, i), why)
		}
		return out
	}
	if h == nil {
		return lexical(a.Why())
	}
	if !a.o.Dense {
		return h.SearchBatch(ctx, queries, ks)
	}
	hits, err := h.dense.SearchBatch(ctx, queries, ks)
	if err != nil {
		if a.o.OnFallback != nil {
			for _, q := range queries {
				a.o.OnFallback(q, err)
			}
		}
		return lexical(err.Error())
	}
	for _, hs := range hits {
		for i := range hs {
			hs[i].Similarity = hs[i].Dense.Score
		}
	}
	return hits
}

// RankBatch is [Auto.SearchBatch] in the shape of policy.BatchRanker; its
// error is always nil.
func (a *Auto) RankBatch(ctx context.Context, queries []string, ks []int) ([][]rank.Hit, error) {
	return plainAll(a.SearchBatch(ctx, queries, ks)), nil
}

// nonBlank returns the queries with text and their positions.
func nonBlank(queries []string) (texts []string, which []int) {
	for i, q := range queries {
		if strings.TrimSpace(q) != "" {
			texts = append(texts, q)
			which = append(which, i)
		}
	}
	return texts, which
}

// kAt is ks[i], or 0 (every hit) past the end of ks.
func kAt(ks []int, i int) int {
	if i < len(ks) {
		return ks[i]
	}
	return 0
}

func plainAll(hits [][]Hit) [][]rank.Hit {
	out := make([][]rank.Hit, len(hits))
	for i := range hits {
		out[i] = plain(hits[i])
	}
	return out
}
