package dense

import (
	"context"
	"fmt"
	"strings"
	"unicode"

	"github.com/capbroker/capbroker/rank"
)

// MaxQueryParts bounds how many sentences a query is embedded as; the
// sentences past it are embedded with the last part.
const MaxQueryParts = 8

// QueryParts returns the texts a query is embedded as: its sentences when
// it has more than one, otherwise the query itself. A sentence ends at
// '.', '!', '?' or ';' followed by a space, or at a line break.
//
// The built-in encoder is a model of short sentences: the vector of "Find
// the budget for 2023. Then open the valve on device X." lies between
// both requests and near neither tool, while each sentence alone lands
// near its own. A task of several requests is therefore compared with a
// card sentence by sentence, and the card keeps its best sentence's
// score (see [Hybrid]). The sentences together are about as many pieces
// as the whole task, so embedding them costs about the same.
func QueryParts(query string) []string {
	var parts []string
	start := 0
	rs := []rune(query)
	for i, r := range rs {
		end := r == '\n' || r == '\r'
		if !end && strings.ContainsRune(".!?", r) && (i+1 == len(rs) || unicode.IsSpace(rs[i+1])) {
			end = true
		}
		if !end {
			continue
		}
		if s := strings.TrimSpace(string(rs[start : i+1])); hasLetter(s) {
			parts = append(parts, s)
		}
		start = i + 1
	}
	if s := strings.TrimSpace(string(rs[start:])); hasLetter(s) {
		parts = append(parts, s)
	}
	if len(parts) <= 1 {
		return []string{query}
	}
	if len(parts) > MaxQueryParts {
		parts[MaxQueryParts-1] = strings.Join(parts[MaxQueryParts-1:], " ")
		parts = parts[:MaxQueryParts]
	}
	return parts
}

func hasLetter(s string) bool {
	return strings.IndexFunc(s, unicode.IsLetter) >= 0
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
	vs, err := ix.e.Embed(ctx, parts)
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

// partScores scores every vector against each query and keeps, per
// vector, the best z-score and its similarity. mo are the first query's
// moments (their N is the store's size).
func (v *Vectors) partScores(qs [][]float32) (*partScores, Moments, error) {
	n := len(v.names)
	ps := &partScores{z: make([]float64, n), sim: make([]float64, n)}
	var first Moments
	row := make([]float64, n)
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	for p, q := range qs {
		sims, err := v.Similarities(q, all)
		if err != nil {
			return nil, first, err
		}
		var sum, sq float64
		for i, s := range sims {
			row[i] = s
			sum += s
			sq += s * s
		}
		mo := moments(sum, sq, n)
		if p == 0 {
			first = mo
		}
		for i, s := range row {
			z := 0.0
			if mo.Std > 0 {
				z = (s - mo.Mean) / mo.Std
			}
			if p == 0 || z > ps.z[i] {
				ps.z[i], ps.sim[i] = z, s
			}
		}
	}
	return ps, first, nil
}

// searchParts is the dense search of a query embedded as qs (see
// [QueryParts]): one part is a plain cosine search; several rank cards by
// their best part's z-score, and each hit's Dense.Score is that part's
// similarity. The partScores are nil for one part.
func (ix *Index) searchParts(qs [][]float32, k int) ([]Hit, Moments, *partScores, error) {
	if len(qs) == 1 {
		hits, mo, err := ix.searchVector(qs[0], k)
		return hits, mo, nil, err
	}
	ps, mo, err := ix.vecs.partScores(qs)
	if err != nil {
		return nil, mo, nil, fmt.Errorf("dense search: %w", err)
	}
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
	return hits, mo, ps, nil
}
