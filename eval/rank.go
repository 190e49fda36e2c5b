package eval

import (
	"context"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/rank"
)

// BuildRank returns a [BuildFunc] for capbroker's lexical ranker: it
// indexes the tools with [rank.New] and ranks with [rank.Index.Search],
// with no floor, escape hatch or relevance threshold. Search returns only
// cards that match some query term, so a list may hold fewer than k names;
// padding it with non-matching cards would only add chance hits.
func BuildRank(opts *rank.Options) BuildFunc {
	return func(_ context.Context, tools []card.Card) (Ranker, error) {
		ix := rank.New(tools, opts)
		return RankFunc(func(_ context.Context, query string, k int) ([]string, error) {
			hits := ix.Search(query, k)
			names := make([]string, len(hits))
			for i, h := range hits {
				names[i] = h.Name
			}
			return names, nil
		}), nil
	}
}
