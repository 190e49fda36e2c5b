package rank

import "context"

// Rank is [Index.Search] in the shape selection code consumes, so a
// lexical index and rankers that can fail (dense, hybrid) share one
// interface. It never fails.
func (ix *Index) Rank(_ context.Context, query string, k int) ([]Hit, error) {
	return ix.Search(query, k), nil
}
