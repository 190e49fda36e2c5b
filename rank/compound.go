package rank

// Compound words in names.
//
// Tool and plugin names often run words together without a separator
// ("geodistance", "websearch", "askyourpdf"), which no case or
// punctuation rule can split, so a task that says "distance" misses the
// tool named "geodistance". A name word that is not itself an English
// word is split into the fewest English words that spell it — the words
// of the embedded vector table (wordvec.go), which holds the 52,000 most
// common — and the parts are indexed before the whole word, as for
// camelCase.

// A task's word the catalog lacks is split the same way, and its parts
// the catalog has join the query with weight compoundPartWeight (a part
// says less than the whole word: "codebase" is more than "code").
const compoundPartWeight = 0.5

// Bounds of a split: each part has at least minCompoundPart letters and a
// word splits into at most maxCompoundParts parts. Shorter parts and more
// of them would split ordinary words into nonsense ("con"+"cat"+"enate").
const (
	minCompoundPart  = 3
	maxCompoundParts = 3
	maxPartLen       = 20
)

// splitCompound returns the fewest known words that spell w, in order,
// or nil if w is a known word itself, is not all ASCII letters, or has no
// split into two or three parts. Of equally short splits it takes the
// one with the longest last part, the head of most English compounds.
func (t *wordVectors) splitCompound(w string) []string {
	n := len(w)
	if n < 2*minCompoundPart || n > maxCompoundParts*maxPartLen {
		return nil
	}
	for i := 0; i < n; i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return nil
		}
	}
	if t.has(w) {
		return nil
	}
	// parts[i] is the fewest parts that spell w[:i] (0: none found),
	// from[i] where the last of them starts.
	var partsBuf, fromBuf [maxCompoundParts*maxPartLen + 1]int8
	parts, from := partsBuf[:n+1], fromBuf[:n+1]
	for i := minCompoundPart; i <= n; i++ {
		for j := max(0, i-maxPartLen); j <= i-minCompoundPart; j++ {
			if j > 0 && parts[j] == 0 {
				continue
			}
			if !t.has(w[j:i]) {
				continue
			}
			if p := parts[j] + 1; parts[i] == 0 || p < parts[i] {
				parts[i], from[i] = p, int8(j)
			}
		}
	}
	if parts[n] < 2 || parts[n] > maxCompoundParts {
		return nil
	}
	out := make([]string, parts[n])
	for i, k := n, len(out)-1; i > 0; i, k = int(from[i]), k-1 {
		out[k] = w[from[i]:i]
	}
	return out
}

// splitCompounds returns toks with the parts of each compound word
// inserted before it (see splitCompound), stemmed and without stop
// words; toks as it is when nothing splits. A camelCase word kept whole
// ("GetWeather" -> get, weather, getweather) is split again, so its parts
// count twice in the name: measured on the benchmarks, that does better
// than once (BFCL NDCG@10 0.8235 against 0.8217, MetaTool 0.676 against
// 0.667).
func (t *wordVectors) splitCompounds(toks []Token, stems wordTokens) []Token {
	var out []Token
	for i, tok := range toks {
		parts := t.splitCompound(tok.Word)
		if parts == nil {
			if out != nil {
				out = append(out, tok)
			}
			continue
		}
		if out == nil {
			out = append(make([]Token, 0, len(toks)+4), toks[:i]...)
		}
		for _, p := range parts {
			out = append(out, tokens(p, stems)...)
		}
		out = append(out, tok)
	}
	if out == nil {
		return toks
	}
	return out
}
