package session

import (
	"sort"
	"unicode/utf8"

	"github.com/capbroker/capbroker/rank"
)

// CloseNames returns up to n of names close to name, best first, judged
// as a refused call's suggestions are (edit distance and shared words;
// see [NotExposedError]): for a caller that holds its own list of names,
// such as the gateway. The name itself is not returned.
func CloseNames(name string, names []string, n int) []string {
	if n <= 0 || (len(name) > maxSuggestRunes && utf8.RuneCountInString(name) > maxSuggestRunes) {
		return nil
	}
	words := rank.Words(name)
	type scored struct {
		name  string
		score float64
	}
	var out []scored
	for _, c := range names {
		if c == name {
			continue
		}
		if sc := similarity(name, words, c); sc >= minSimilarity {
			out = append(out, scored{c, sc})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].score != out[j].score {
			return out[i].score > out[j].score
		}
		return out[i].name < out[j].name
	})
	var res []string
	for i, s := range out {
		if i == n || s.score < out[0].score-suggestionSpread {
			break
		}
		res = append(res, s.name)
	}
	return res
}
