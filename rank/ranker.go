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

// RankBatch is [Index.SearchBatch] in the shape of policy.BatchRanker: a
// selector ranks a task and its steps in one call, and the searches share
// the work their words have in common. It fails only when ctx is already
// done.
func (ix *Index) RankBatch(ctx context.Context, queries []string, ks []int) ([][]Hit, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return ix.SearchBatch(queries, ks), nil
}
