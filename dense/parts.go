package dense

import (
	"context"
	"fmt"
	"strings"

	"github.com/capbroker/capbroker/rank"
	"github.com/capbroker/capbroker/steps"
)

// MaxQueryParts bounds how many parts a query is embedded as: the steps
// past it are joined to the last one.
const MaxQueryParts = steps.Max

// QueryParts returns the texts a query is embedded as: its steps
// (steps.Split: sentences, lines, clauses joined by "then" or by "and"
// before a new action) when it has more than one, otherwise the query
// itself.
//
// The vector of a task of several requests, "Find the budget for 2023.
// Then open the valve on device X.", lies between them and near neither
// tool, while each step alone lands near its own. A task of several steps
// is therefore compared with a card step by step, and the card keeps its
// best step's score (see [Hybrid]). The steps together are about as many
// word pieces as the whole task, so embedding them costs about the same;
// selection ranks a task with its steps, which then embeds each step once
// ([Index.EmbedQueries]). Split at sentences only, NDCG@10 was the same
// within 0.0005 on every dev set.
func QueryParts(query string) []string {
	ss := steps.Split(query)
	if len(ss) <= 1 {
		return []string{query}
	}
	parts := make([]string, len(ss))
	for i, s := range ss {
		parts[i] = s.Text
	}
	return parts
}

// EmbedQueryParts embeds the [QueryParts] of a query in one call, within
// the QueryTimeout.
func (ix *Index) EmbedQueryParts(ctx context.Context, query string) ([][]float32, error) {
	if strings.TrimSpace(query) == "" {
		return nil, fmt.Errorf("embedding query: empty query")
	}
	parts := QueryParts(query)
	ctx, cancel := context.WithTimeout(ctx, ix.o.QueryTimeout)
	defer cancel()
	vs, err := ix.embedQueries(ctx, parts)
	if err != nil {
		return nil, fmt.Errorf("embedding query: %w", err)
	}
	if len(vs) != len(parts) {
		return nil, fmt.Errorf("embedding query: got %d vectors for %d texts", len(vs), len(parts))
	}
	return vs, nil
}

// partScores are a query of several parts' scores of every card: the
// z-score of the card's best part (its similarity standardized over the
// catalog for that part) and that part's cosine similarity.
type partScores struct {
	z, sim []float64
}

// partScoresOf keeps, per card, the best z-score of the parts whose
// similarities rows holds (one row a part, see Vectors.scoreRows) and
// that part's similarity. mo are the first part's moments (their N is
// the store's size).
func partScoresOf(rows [][]float32) (*partScores, Moments) {
	n := len(rows[0])
	ps := &partScores{z: make([]float64, n), sim: make([]float64, n)}
	var first Moments
	for p, row := range rows {
		var sum, sq float64
		for _, s32 := range row {
			s := float64(s32)
			sum += s
			sq += s * s
		}
		mo := moments(sum, sq, n)
		if p == 0 {
			first = mo
		}
		for i, s32 := range row {
			s := float64(s32)
			z := 0.0
			if mo.Std > 0 {
				z = (s - mo.Mean) / mo.Std
			}
			if p == 0 || z > ps.z[i] {
				ps.z[i], ps.sim[i] = z, s
			}
		}
	}
	return ps, first
}

// searchParts is the dense search of a query embedded as qs (see
// [QueryParts]): one part is a plain cosine search; several rank cards by
// their best part's z-score, and each hit's Dense.Score is that part's
// similarity. It returns the parts' similarity rows (Vectors.scoreRows)
// too, for the caller to release; the partScores are nil for one part.
func (ix *Index) searchParts(qs [][]float32, k int) ([]Hit, Moments, *partScores, *scores, error) {
	sc, err := ix.vecs.scoreRows(qs)
	if err != nil {
		return nil, Moments{}, nil, nil, fmt.Errorf("dense search: %w", err)
	}
	hits, mo, ps := ix.searchRows(sc.rows, k)
	return hits, mo, ps, sc, nil
}

// searchRows is searchParts of parts already scored.
func (ix *Index) searchRows(rows [][]float32, k int) ([]Hit, Moments, *partScores) {
	if len(rows) == 1 {
		sc, mo := ix.vecs.topOfRow(rows[0], k)
		return ix.hitsOf(sc), mo, nil
	}
	ps, mo := partScoresOf(rows)
	n := ix.vecs.Len()
	if k <= 0 || k > n {
		k = n
	}
	h := newHeap(k, ix.vecs.names)
	for i, z := range ps.z {
		h.offer(int32(i), float32(z))
	}
	top := h.sorted()
	hits := make([]Hit, 0, len(top))
	for i, s := range top {
		sim := ps.sim[s.Index]
		if ix.o.MinSimilarity != 0 && sim < ix.o.MinSimilarity {
			continue
		}
		hits = append(hits, Hit{
			Hit:   rank.Hit{Name: s.Name, Index: s.Index, Score: sim, Coverage: clamp01(sim)},
			Dense: &Part{Rank: i + 1, Score: sim, Fused: sim},
		})
	}
	return hits, mo, ps
}
