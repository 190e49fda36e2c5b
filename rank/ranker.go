package rank

import "context"

// Rank is [Index.Search] in the shape selection code consumes, so a
// lexical index and rankers that can fail (dense, hybrid) share one
// interface. It fails only when ctx is already done (an HTTP client that
// left): the search is not started for nobody.
func (ix *Index) Rank(ctx context.Context, query string, k int) ([]Hit, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return ix.Search(query, k), nil
}
