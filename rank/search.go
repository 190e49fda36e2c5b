package rank

import (
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Hit is one ranked card with its explanation.
type Hit struct {
	// Name is the card's name.
	Name string `json:"name"`
	// Index is the card's position in the slice given to [New].
	Index int `json:"-"`
	// Score is the BM25F score times the second-stage bonuses (see
	// [Options.Coverage] and [Options.Phrase]); only its order within one
	// search matters.
	Score float64 `json:"score"`
	// Coverage is the share of the query's own words' weight (IDF times
	// query weight; a word the catalog lacks counts as a rare one) that
	// this card matched, in [0,1]. A word matched only through a related
	// word earns the relation's strength.
	Coverage float64 `json:"coverage"`
	// Phrases is the number of places where two words adjacent in the
	// query are adjacent in the card's name or description; each raises
	// the score in the second stage (see [Options.Phrase]).
	Phrases int `json:"phrases,omitempty"`
	// Meaning and NameFit are the third stage's measures, in [0,1], for
	// the cards it rescored (see [Options.Similar]): the share of the
	// query's words that have a word of like meaning in the card, and the
	// share of the card's name words that have one in the query.
	Meaning float64 `json:"meaning,omitempty"`
	NameFit float64 `json:"name_fit,omitempty"`
	// Similarity is the cosine similarity of the card's and the query's
	// sentence vectors, set when a dense or hybrid ranker (package dense)
	// compared them; 0 otherwise.
	Similarity float64 `json:"similarity,omitempty"`
	// SimilarityZ is how many standard deviations Similarity stands above
	// the mean over the catalog (for a task of several sentences, its best
	// sentence's), set by z-score fusion; 0 otherwise. Unlike a cosine, it
	// says whether the similarity is unusual for this catalog: a nonsense
	// task's best card is about as similar to it as a real task's.
	SimilarityZ float64 `json:"-"`
	// Asked is, when the card matched words of what past sessions asked
	// for before calling it ([FieldUsage]), the past phrase that shares
	// the most of the query's words.
	Asked *Asked `json:"asked,omitempty"`
	// Override is, when the card's description was overridden locally
	// (capbroker.yaml's overrides, package override), what its
	// card.Meta[MetaOverride] says of it, for reasons.
	Override string `json:"override,omitempty"`
	// Matches explains the first-stage (BM25F) score term by term, in
	// query order; Score is that score times the second-stage bonuses for
	// coverage and phrases and the third stage's for meaning.
	Matches []Match `json:"matches,omitempty"`
}

// Match is one query term's contribution to a hit.
type Match struct {
	// Term is the query word as the user wrote it (lower-cased).
	Term string `json:"term"`
	// Fields are the card fields the term's stem was found in.
	Fields []Field `json:"fields"`
	// Score is the term's share of the hit's first-stage score.
	Score float64 `json:"score"`
	// Via is, when Term is a related word added by query expansion, the
	// query word it is related to.
	Via string `json:"via,omitempty"`
	// StandsIn is true when Term is an everyday relation (not WordNet's,
	// whose senses stray: "tunes" -> "lines") of a query word the catalog
	// lacks ("memory" for "remember"): the only evidence that word can
	// have (see [Options.Substitution]).
	StandsIn bool `json:"-"`
}

// QueryTerm is one weighted term of a parsed query.
type QueryTerm struct {
	Stem   string
	Word   string
	Weight float64 // 1 for a word of the query; less for an expansion
	// From is, for an expansion term, the query word it is related to;
	// for a value hint, the value's text; empty for the query's own words.
	From string
	// Strength is, for an expansion term, how closely it is related to
	// the word it came from, in (0,1]: a card matching it earns that share
	// of the word's weight in [Hit.Coverage].
	Strength float64
	// StandsIn marks an expansion term related to a query word the
	// catalog lacks (see [Match.StandsIn]).
	StandsIn bool
	// Boost marks a term that only adds to cards other terms matched: a
	// value hint ("date" for "on March 5th") says what a fitting tool
	// takes, not what it does, so it never finds a card by itself.
	Boost bool
}

// MaxQueryBytes bounds the text a query is read from: [Index.Search]
// reads only a query's first MaxQueryBytes bytes (see [ClipQuery]), so
// that no query, however long, costs more than one of this size. It is
// three times the longest task of the benchmarks (BFCL's 4.7 KB).
const MaxQueryBytes = 16 << 10

// ClipQuery returns text cut to at most MaxQueryBytes bytes: at the last
// space before the limit when there is one in its last quarter, else at a
// rune boundary. Text within the limit is returned as it is.
func ClipQuery(text string) string {
	if len(text) <= MaxQueryBytes {
		return text
	}
	cut := MaxQueryBytes
	for cut > 0 && !utf8.RuneStart(text[cut]) {
		cut--
	}
	if sp := strings.LastIndexFunc(text[:cut], unicode.IsSpace); sp >= MaxQueryBytes*3/4 {
		cut = sp
	}
	return text[:cut]
}

// queryK3 saturates the weight of a word repeated in the query, as k3
// does in Robertson's BM25: a word said n times weighs
// (k3+1)·n/(k3+n), so 1, 1.2, 1.29, ... and never more than 1+k3.
const queryK3 = 0.5

// ParseQuery turns text into weighted query terms: stop words dropped,
// stems deduplicated in first-seen order, a repeated word weighing a
// little more than a single one (see queryK3). Words that are most likely
// an argument's value rather than a hint of the capability weigh less: a
// number (numberWeight) and a word said only inside quotes or a URL
// (valueWeight).
func ParseQuery(text string) []QueryTerm {
	seen := make(map[string]int)
	var q []QueryTerm
	var tf, scale []float64
	for _, seg := range contentClauses(valueSpans(text)) {
		f := 1.0
		if seg.value {
			f = valueWeight
		}
		for _, t := range Tokens(phrasalVerbs(seg.text)) {
			if i, ok := seen[t.Stem]; ok {
				tf[i]++
				scale[i] = max(scale[i], f)
				continue
			}
			seen[t.Stem] = len(q)
			q = append(q, QueryTerm{Stem: t.Stem, Word: t.Word, Weight: 1})
			tf = append(tf, 1)
			scale = append(scale, f)
		}
	}
	for i, n := range tf {
		q[i].Weight = (queryK3 + 1) * n / (queryK3 + n) * scale[i]
		if isNumber(q[i].Word) {
			q[i].Weight *= numberWeight
		}
	}
	return q
}

// valueWeight scales a query word that appears only inside a quoted
// value or a URL ("rename 'Quarterly Report' to ...", "fetch
// https://example.com/docs"): it names the thing the capability acts on,
// not the capability.
const valueWeight = 0.5

// segment is a piece of a query; value is true for quoted text and URLs.
type segment struct {
	text  string
	value bool
}

// valueSpans cuts text into the parts that quote a value — text between
// quotes ('Guardian Sword+', "Hello World") and URLs — and the rest. A
// quote that would cover most of the text is not a value. It takes time
// linear in the text: the closer a quote looks for is found from a
// cursor per kind of quote that only moves forward.
func valueSpans(text string) []segment {
	if !strings.ContainsAny(text, `"'“‘`) && !strings.Contains(text, "http") {
		// No quote and no URL: one segment (most tasks), without copying
		// the text into runes and back.
		return []segment{{text: text}}
	}
	var out []segment
	rs := []rune(text)
	isWord := func(i int) bool {
		return i >= 0 && i < len(rs) && (unicode.IsLetter(rs[i]) || unicode.IsDigit(rs[i]))
	}
	// closesAt reports whether rs[j] closes a quote opened by closer's
	// opener: a straight single quote or ’ closes only at a word's end.
	closesAt := func(j int, closer rune) bool {
		return rs[j] == closer && (closer == '"' || closer == '”' || !isWord(j+1))
	}
	// next[c] is the first j at or after the last search's start that
	// closes c, or -1 if none does. Searches start ever later, so each
	// kind of quote's scan passes over the text once.
	closers := map[rune]rune{'"': '"', '“': '”', '‘': '’', '\'': '\''}
	next := map[rune]int{}
	closing := func(from int, closer rune) int {
		if j, ok := next[closer]; ok && (j < 0 || j >= from) {
			return j
		}
		j := from
		for j < len(rs) && !closesAt(j, closer) {
			j++
		}
		if j == len(rs) {
			j = -1
		}
		next[closer] = j
		return j
	}
	start := 0
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		end := -1
		switch {
		case r == 'h' && !isWord(i-1) && (hasPrefixRunes(rs[i:], "https://") || hasPrefixRunes(rs[i:], "http://")):
			end = i
			for end < len(rs) && !unicode.IsSpace(rs[end]) {
				end++
			}
			out = append(out, segment{text: string(rs[start:i])}, segment{text: string(rs[i:end]), value: true})
			start = end
			i = end - 1
			continue
		case r == '"' || r == '“' || r == '‘' || (r == '\'' && !isWord(i-1)):
			end = closing(i+1, closers[r])
		}
		if end < 0 || 2*(end-i) > len(rs) {
			continue
		}
		out = append(out, segment{text: string(rs[start:i])}, segment{text: string(rs[i+1 : end]), value: true})
		start = end + 1
		i = end
	}
	return append(out, segment{text: string(rs[start:])})
}

// lookUp matches the phrasal verb "look up" in its forms.
var lookUp = regexp.MustCompile(`(?i)\blook(?:s|ed|ing)?\s+up\b`)

// phrasalVerbs writes a phrasal verb whose meaning its words do not
// carry as one word: "look up the news" asks to look something up, a
// lookup, while "look" alone mostly means to seem ("how's CPU looked").
// "lookup" then matches tools named so and, by the everyday relations,
// tools that search or find.
func phrasalVerbs(text string) string {
	if !strings.Contains(text, "ook") {
		return text
	}
	return lookUp.ReplaceAllString(text, "lookup")
}

// contentClauses marks as a value the clause a verb of memory opens
// ("remember that Alice leads project X", "recall who leads project X",
// "forget what I said about the budget"): what is remembered or recalled
// is the data the tool stores or looks for, not the capability, as a
// quoted value is. The clause runs to the end of its sentence or to the
// next comma, colon or semicolon. Only plain segments are cut; values stay
// values.
func contentClauses(segs []segment) []segment {
	var out []segment
	for k, seg := range segs {
		if seg.value || !hasMemoryVerb(seg.text) {
			if out != nil {
				out = append(out, seg)
			}
			continue
		}
		if out == nil {
			out = append(make([]segment, 0, len(segs)+2), segs[:k]...)
		}
		out = appendClauses(out, seg.text)
	}
	if out == nil {
		return segs
	}
	return out
}

// memoryVerbs open a clause of content; complementizers start it.
var (
	memoryVerbs      = map[string]bool{"remember": true, "remembers": true, "recall": true, "recalls": true, "memorize": true, "memorise": true, "forget": true}
	complementizers  = map[string]bool{"that": true, "who": true, "whom": true, "whose": true, "what": true, "where": true, "when": true, "which": true, "how": true, "whether": true, "if": true}
	clauseEndingRune = func(r rune) bool {
		return r == ',' || r == ';' || r == ':' || r == '.' || r == '?' || r == '!' || r == '\n'
	}
)

// hasMemoryVerb reports, cheaply, whether text may hold a verb of memory.
func hasMemoryVerb(text string) bool {
	l := strings.ToLower(text)
	return strings.Contains(l, "rememb") || strings.Contains(l, "recall") || strings.Contains(l, "memori") || strings.Contains(l, "forget")
}

// appendClauses appends text to out cut into plain segments and the
// content clauses of its verbs of memory, as values.
func appendClauses(out []segment, text string) []segment {
	start := 0 // of the plain text not yet appended
	prevMemory := false
	for i := 0; i < len(text); {
		if !isASCIILetter(text[i]) {
			i++
			continue
		}
		j := i
		for j < len(text) && isASCIILetter(text[j]) {
			j++
		}
		w := strings.ToLower(text[i:j])
		if prevMemory && complementizers[w] {
			end := j
			for end < len(text) && !clauseEndingRune(rune(text[end])) {
				end++
			}
			if end > j {
				out = append(out, segment{text: text[start:j]}, segment{text: text[j:end], value: true})
				start = end
			}
			i, prevMemory = end, false
			continue
		}
		prevMemory = memoryVerbs[w]
		i = j
	}
	return append(out, segment{text: text[start:]})
}

func isASCIILetter(b byte) bool { return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' }

// hasPrefixRunes reports whether rs starts with the ASCII prefix p.
func hasPrefixRunes(rs []rune, p string) bool {
	if len(rs) < len(p) {
		return false
	}
	for i := 0; i < len(p); i++ {
		if rs[i] != rune(p[i]) {
			return false
		}
	}
	return true
}

// numberWeight scales a query word made of digits alone ("500", "2019"):
// in a task it is almost always an argument's value, not a hint of which
// capability fits, so matching it in a card's text is weak evidence.
const numberWeight = 0.5

// isNumber reports whether w is made of ASCII digits alone.
func isNumber(w string) bool {
	if w == "" {
		return false
	}
	for i := 0; i < len(w); i++ {
		if w[i] < '0' || w[i] > '9' {
			return false
		}
	}
	return true
}

// scratch is per-search working memory, pooled to keep searches free of
// allocation proportional to the catalog.
type scratch struct {
	scores []float64
	// has[d] has bit j set when card d has a posting of query term j, for
	// the first 64 terms (the first stage sets them; see hasTerm).
	has     []uint64
	touched []int32
	pairs   [][2]int32
	heap    []int32
	terms   []*term    // each query term's index entry, or nil
	phrases []docCount // phrase counts of the rescored cards

	// Explanations' (explain): each hit's postings, and the coverage
	// shared by the hits (see creditPlan).
	at        []int32
	credit    []float64
	credits   []int
	ownWords  []string
	ownWeight []float64

	// The third stage's (similar.go): the query's words with vectors,
	// each one's best similarity to the current card, the cached
	// similarity rows of card words (see simRow), and the measures of the
	// rescored cards.
	qvec    []queryVector
	qids    []int32
	qarena  []float32
	qbest   []float64
	plain   []plainWord
	sims    []float64
	simKey  []int32
	simAt   []int32
	simUsed int
	meaning []docMeasure
	// simBasis holds the vector ids of the words the cached rows are
	// over, simIdx each query word's position in it (see shareRows), and
	// simOut a row as the current search reads it.
	simBasis []int32
	simIdx   []int32
	simOut   []float64
	simAlone bool // the basis is the search's own words, in order

	// batch is set during SearchBatch, whose searches share their words'
	// expansions and similarity rows.
	batch      bool
	expansions map[expansionKey]*wordExpansion

	// Precedents' (precedent.go): each past phrase's dot product with
	// the query, and each card's best likeness.
	pastAcc  map[int32]float64
	pastVote map[int32]float64
}

var scratchPool sync.Pool

// denseClear: a search that scored at least 1/denseClear of the cards
// clears its scores whole rather than card by card.
const denseClear = 8

func (ix *Index) getScratch() *scratch {
	s, _ := scratchPool.Get().(*scratch)
	if s == nil {
		s = &scratch{}
	}
	if cap(s.scores) < len(ix.names) {
		s.scores = make([]float64, len(ix.names))
		s.has = make([]uint64, len(ix.names))
		s.touched = make([]int32, 0, len(ix.names)+1) // see addPostings
	}
	s.scores = s.scores[:len(ix.names)]
	s.has = s.has[:len(ix.names)]
	return s
}

// docCount is a card and a count.
type docCount struct {
	doc int32
	n   int
}

// phrasesOf returns card d's phrase count, as the second stage counted
// it if it rescored d.
func (s *scratch) phrasesOf(ix *Index, d int32) int {
	for _, p := range s.phrases {
		if p.doc == d {
			return p.n
		}
	}
	return ix.phrases(d, s.pairs)
}

// clearScores zeroes the scores of the cards the last search touched,
// for the next.
func (s *scratch) clearScores() {
	if len(s.touched) >= len(s.scores)/denseClear {
		// Most cards were scored: zeroing the whole of both slices, in
		// order, is faster than zeroing the touched ones one by one.
		clear(s.scores)
		clear(s.has)
	} else {
		for _, d := range s.touched {
			s.scores[d] = 0
			s.has[d] = 0
		}
	}
	s.touched = s.touched[:0]
}

func (ix *Index) putScratch(s *scratch) {
	s.endBatch()
	scratchPool.Put(s)
}

// Search ranks the cards for a free-text query and returns the best k
// hits (all matching cards when k <= 0), best first, ties broken by name.
// Cards that match no query term are never returned.
func (ix *Index) Search(query string, k int) []Hit {
	s := ix.getScratch()
	defer ix.putScratch(s)
	return ix.search(query, k, s)
}

// SearchBatch is [Index.Search] for each query, the i-th for ks[i] hits
// (all when ks has no i-th): each list is what Search returns for that
// query alone. The searches share what their queries share: the
// expansion of each word (see [Index.Expand]: a word the catalog lacks
// costs a pass over its words) and, in the third stage, the similarity
// of each card word to each query word when every word of a query is
// one of the first query's (as the steps of a task are the task's; see
// shareRows).
func (ix *Index) SearchBatch(queries []string, ks []int) [][]Hit {
	s := ix.getScratch()
	defer ix.putScratch(s)
	s.startBatch()
	out := make([][]Hit, len(queries))
	for i, q := range queries {
		k := 0
		if i < len(ks) {
			k = ks[i]
		}
		out[i] = ix.search(q, k, s)
	}
	return out
}

// search is Search with the scratch s.
func (ix *Index) search(query string, k int, s *scratch) []Hit {
	query = ClipQuery(query)
	return ix.searchTerms(ix.expand(ix.addValueHints(ParseQuery(query), query), s.expansions), k, s)
}

// startBatch makes s share expansions and similarities across searches
// until endBatch.
func (s *scratch) startBatch() {
	s.batch = true
	if s.expansions == nil {
		s.expansions = make(map[expansionKey]*wordExpansion)
	}
}

// endBatch ends a batch: the next search shares nothing with the last.
func (s *scratch) endBatch() {
	s.batch = false
	s.expansions = nil
	s.simBasis = s.simBasis[:0]
}

// SearchTerms is [Index.Search] over already parsed, weighted terms; it
// does not expand them or add value hints (Search is
// SearchTerms(ix.Expand(ix.addValueHints(ParseQuery(query), query)), k)).
func (ix *Index) SearchTerms(q []QueryTerm, k int) []Hit {
	s := ix.getScratch()
	defer ix.putScratch(s)
	return ix.searchTerms(q, k, s)
}

// searchTerms is SearchTerms with the scratch s, whose scores it leaves
// zero.
func (ix *Index) searchTerms(q []QueryTerm, k int, s *scratch) []Hit {
	if len(q) == 0 || len(ix.names) == 0 {
		return nil
	}
	s.touched, s.meaning, s.phrases = s.touched[:0], s.meaning[:0], s.phrases[:0]
	defer s.clearScores()
	var queryIDF float64
	boosts := false
	s.terms = s.terms[:0]
	for _, qt := range q {
		s.terms = append(s.terms, ix.terms[qt.Stem])
	}
	for j, qt := range q {
		t := s.terms[j]
		if t == nil {
			continue
		}
		if qt.Boost {
			boosts = true
			continue
		}
		if qt.From == "" {
			queryIDF += t.idf
		}
		s.touched = addPostings(s.scores, s.has, s.touched, t.postings, t.idf*qt.Weight*ix.rarity(qt, t), termBit(j))
	}
	if len(s.touched) == 0 {
		return nil
	}
	ix.addPrecedents(q, s)
	if boosts {
		for j, qt := range q {
			t := s.terms[j]
			if !qt.Boost || t == nil {
				continue
			}
			w, bit := t.idf*qt.Weight, termBit(j)
			for i := range t.postings {
				if p := &t.postings[i]; s.scores[p.doc] != 0 {
					s.scores[p.doc] += w * float64(p.sat)
					s.has[p.doc] |= bit
				}
			}
		}
	}
	if k <= 0 || k > len(s.touched) {
		k = len(s.touched)
	}
	var docs []int32
	if ix.opts.Coverage > 0 || ix.opts.Phrase > 0 || ix.vec != nil {
		// Second stage: rescore the Rerank best first-stage cards, the
		// same set whatever k is. Both bonuses only raise scores, so every
		// card of the set stays above every card outside it, and a
		// search for k hits is the head of a search for more.
		top := ix.best(s, s.touched, ix.opts.Rerank)
		ix.rescore(q, queryIDF, top, s)
		if ix.vec != nil {
			// Third stage: the best of the rescored cards, by meaning.
			// It too only raises scores, so they stay ahead.
			ix.thirdStage(q, ix.best(s, top, ix.opts.SimilarDepth), s)
		}
		if k <= len(top) {
			docs = ix.best(s, top, k)
		}
	}
	if docs == nil {
		docs = ix.best(s, s.touched, k)
	}
	hits := ix.explain(q, docs, s)
	for i, d := range docs {
		if ix.opts.Phrase > 0 {
			hits[i].Phrases = s.phrasesOf(ix, d)
		}
		for _, m := range s.meaning {
			if m.doc == d {
				hits[i].Meaning, hits[i].NameFit = m.meaning, m.name
				break
			}
		}
	}
	return hits
}

// addPostings adds w times each posting's saturated frequency to its
// card's score and sets bit in the card's has. Cards scored for the first
// time are appended to touched, which it returns; touched must have room
// for every card plus one.
//
// It is the first stage's inner loop, and it has no branch that depends
// on the data: each card is written at the end of touched, and the end
// moves past it only if the card was new. Whether a card is new is a coin
// toss to the processor, so an if around an append mispredicted about
// every other posting and took half the loop's time (BenchmarkSearchSteps).
func addPostings(scores []float64, has []uint64, touched []int32, postings []posting, w float64, bit uint64) []int32 {
	n := len(touched)
	touched = touched[:cap(touched)]
	for _, p := range postings {
		old := scores[p.doc]
		touched[n] = p.doc
		if old == 0 {
			n++ // compiled without a branch (a conditional move)
		}
		scores[p.doc] = old + w*float64(p.sat)
		has[p.doc] |= bit
	}
	return touched[:n]
}

// termBit is the bit of has that marks query term j, or 0 past the 64th.
func termBit(j int) uint64 {
	if j >= 64 {
		return 0
	}
	return 1 << j
}

// hasTerm reports whether card d may have a posting of query term j: for
// the first 64 terms has tells (false is sure); past them it may.
func (s *scratch) hasTerm(d int32, j int) bool {
	return j >= 64 || s.has[d]&(1<<j) != 0
}

// matchedIDF is the IDF of the query's own words card d matched, summed
// in query order, as the second stage's coverage bonus counts it.
func (s *scratch) matchedIDF(q []QueryTerm, d int32) float64 {
	var sum float64
	for j, qt := range q {
		t := s.terms[j]
		if t == nil || qt.From != "" || !s.hasTerm(d, j) {
			continue
		}
		if j < 64 {
			sum += t.idf
		} else if _, ok := t.find(d); ok {
			sum += t.idf
		}
	}
	return sum
}

// best returns the k best touched cards, best first (score, then name).
// It keeps a bounded min-heap whose root is the worst card kept, so most
// cards cost one comparison of scores.
func (ix *Index) best(s *scratch, docs []int32, k int) []int32 {
	h := topK{order: ix.order, scores: s.scores, docs: s.heap[:0]}
	scores := s.scores
	var root float64 // the worst kept score, once the heap is full
	for i, d := range docs {
		if len(h.docs) < k {
			h.push(d)
			root = scores[h.docs[0]]
			continue
		}
		// Most cards score below the worst kept: one comparison each.
		for _, d := range docs[i:] {
			sc := scores[d]
			if sc < root || (sc == root && !h.better(d, h.docs[0])) {
				continue
			}
			h.docs[0] = d
			h.down(0)
			root = scores[h.docs[0]]
		}
		break
	}
	s.heap = h.docs
	out := make([]int32, len(h.docs))
	copy(out, h.docs)
	slices.SortFunc(out, func(a, b int32) int {
		if h.better(a, b) {
			return -1
		}
		return 1 // never equal: names break ties
	})
	return out
}

// rescore applies the second stage to the cards of top: the coverage
// bonus (share of the query's own IDF weight matched) and the phrase
// bonus (adjacent query words adjacent in the card's name or
// description).
func (ix *Index) rescore(q []QueryTerm, queryIDF float64, top []int32, s *scratch) {
	s.pairs = s.pairs[:0]
	if ix.opts.Phrase > 0 {
		prev := int32(-1)
		for j, qt := range q {
			if qt.From != "" {
				continue
			}
			t := s.terms[j]
			if t == nil {
				prev = -1
				continue
			}
			if prev >= 0 {
				s.pairs = append(s.pairs, [2]int32{prev, t.id})
			}
			prev = t.id
		}
	}
	for _, d := range top {
		bonus := 1.0
		if ix.opts.Coverage > 0 && queryIDF > 0 {
			bonus += ix.opts.Coverage * s.matchedIDF(q, d) / queryIDF
		}
		if len(s.pairs) > 0 {
			n := ix.phrases(d, s.pairs)
			s.phrases = append(s.phrases, docCount{d, n})
			bonus += ix.opts.Phrase * float64(min(n, 3)) / 3
		}

		s.scores[d] *= bonus
	}
}

// phrases counts the places where a pair of adjacent query words stands
// adjacent, in the same order, in card d's name or description.
func (ix *Index) phrases(d int32, pairs [][2]int32) int {
	if len(pairs) == 0 {
		return 0
	}
	seq := ix.seq[ix.seqOff[d]:ix.seqOff[d+1]]
	n := 0
	for i := 1; i < len(seq); i++ {
		a, b := seq[i-1], seq[i]
		if a < 0 || b < 0 {
			continue
		}
		for _, p := range pairs {
			if p[0] == a && p[1] == b {
				n++
				break
			}
		}
	}
	return n
}

// saturate returns the BM25F saturated, length-normalised frequency of a
// term in card doc, whose frequencies per field are freqs. It depends on
// the card alone, so New computes it once per posting and searches only
// multiply it by the term's weight.
func (ix *Index) saturate(doc int32, freqs *termFreqs) float64 {
	lens := &ix.lens[doc]
	var tf float64
	for f := Field(0); f < numFields; f++ {
		if freqs[f] == 0 {
			continue
		}
		fw := ix.opts.Fields[f]
		norm := 1 - fw.B + fw.B*float64(lens[f])/ix.avgLen[f]
		freq := float64(freqs[f])
		if f == FieldUsage {
			freq /= usageUnit
			fw.Weight = ix.usageW[doc]
		}
		tf += fw.Weight * freq / norm
	}
	return tf / (ix.opts.K1 + tf)
}

// explain builds the hits of docs, in order: each one's first-stage score
// term by term (Matches) and its coverage, the share of the query's own
// words' weight (IDF times query weight; an unknown word counts as a rare
// one) that the card matched. A word matched only through a related word
// earns the relation's strength.
//
// It runs for every hit of every search, so what the hits share is
// worked out once (see creditPlan), each hit's postings are found by one
// binary search per term it has (the first stage marked them; see
// hasTerm), and all the hits' matches and fields are cut from one
// allocation each.
func (ix *Index) explain(q []QueryTerm, docs []int32, s *scratch) []Hit {
	hits := make([]Hit, len(docs))
	credits, weight, total := ix.creditPlan(q, s)
	// First pass: where each hit's postings are, and how many matches and
	// fields they make.
	at := s.at[:0] // at[h*len(q)+j]: hit h's posting of term j, or -1
	nMatches, nFields := 0, 0
	for _, d := range docs {
		for j, t := range s.terms {
			i, ok := -1, false
			if t != nil && s.hasTerm(d, j) {
				i, ok = t.find(d)
			}
			if !ok {
				at = append(at, -1)
				continue
			}
			at = append(at, int32(i))
			nMatches++
			nFields += t.freqs[i].fields()
		}
	}
	s.at = at
	matches := make([]Match, 0, nMatches)
	fields := make([]Field, 0, nFields)
	credit := s.credit[:0]
	for h, d := range docs {
		hit := &hits[h]
		*hit = Hit{Name: ix.names[d], Index: int(d), Score: s.scores[d]}
		credit = append(credit[:0], make([]float64, len(weight))...)
		firstMatch, firstField := len(matches), len(fields)
		for j, qt := range q {
			i := at[h*len(q)+j]
			if i < 0 {
				continue
			}
			t := s.terms[j]
			from := len(fields)
			for f := Field(0); f < numFields; f++ {
				if t.freqs[i][f] > 0 {
					fields = append(fields, f)
				}
			}
			w := t.idf * qt.Weight
			matches = append(matches, Match{Term: qt.Word, Fields: fields[from:len(fields):len(fields)], Score: w * float64(t.postings[i].sat), Via: qt.From, StandsIn: qt.StandsIn})
			if c := credits[j]; c < 0 {
				continue
			} else if qt.From == "" {
				credit[c] = weight[c]
			} else {
				credit[c] = max(credit[c], weight[c]*min(qt.Strength, 1))
			}
		}
		if len(matches) > firstMatch {
			hit.Matches = matches[firstMatch:len(matches):len(matches)]
		}
		if len(fields) > firstField && ix.usage != nil {
			hit.Asked = ix.asked(d, hit.Matches, q, s.terms)
		}
		if ix.overrides != nil {
			hit.Override = ix.overrides[d]
		}
		if total > 0 {
			var matched float64
			for _, c := range credit {
				matched += c
			}
			hit.Coverage = matched / total
		}
	}
	s.credit = credit
	return hits
}

// creditPlan works out the coverage shared by every hit of a search: the
// weight of each of the query's own words (IDF times query weight; an
// unknown word counts as a rare one), in order, their total, and for each
// term the own word it credits when a card matches it (itself, or for an
// expansion the word it came from; -1 for none).
func (ix *Index) creditPlan(q []QueryTerm, s *scratch) (credits []int, weight []float64, total float64) {
	own := s.ownWords[:0]
	weight = s.ownWeight[:0]
	for j, qt := range q {
		if qt.From != "" {
			continue
		}
		idf := ix.maxIDF()
		if t := s.terms[j]; t != nil {
			idf = t.idf
		}
		own = append(own, qt.Word)
		weight = append(weight, idf*qt.Weight)
		total += idf * qt.Weight
	}
	credits = s.credits[:0]
	for _, qt := range q {
		w := qt.Word
		if qt.From != "" {
			w = qt.From
		}
		credits = append(credits, slices.Index(own, w))
	}
	s.ownWords, s.ownWeight, s.credits = own, weight, credits
	return credits, weight, total
}

// fields counts the fields with a frequency.
func (f *termFreqs) fields() int {
	n := 0
	for _, x := range f {
		if x > 0 {
			n++
		}
	}
	return n
}

// find returns the position of card d's posting in t, if it has one.
func (t *term) find(d int32) (int, bool) {
	lo, hi := 0, len(t.postings)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if t.postings[mid].doc < d {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo, lo < len(t.postings) && t.postings[lo].doc == d
}

// maxIDF is the IDF of a term found in a single card.
func (ix *Index) maxIDF() float64 {
	n := float64(len(ix.names))
	return logIDF(n, 1)
}

// topK is a min-heap of document ids by (score, name): the root is the
// worst of the best k.
type topK struct {
	order  []int32 // each card's position in name order
	scores []float64
	docs   []int32
}

// better orders by score descending, then name ascending.
func (h *topK) better(a, b int32) bool {
	if h.scores[a] != h.scores[b] {
		return h.scores[a] > h.scores[b]
	}
	return h.order[a] < h.order[b]
}

func (h *topK) push(d int32) {
	h.docs = append(h.docs, d)
	i := len(h.docs) - 1
	for i > 0 {
		parent := (i - 1) / 2
		if !h.better(h.docs[parent], h.docs[i]) {
			break
		}
		h.docs[parent], h.docs[i] = h.docs[i], h.docs[parent]
		i = parent
	}
}

func (h *topK) down(i int) {
	n := len(h.docs)
	for {
		worst := i
		l, r := 2*i+1, 2*i+2
		if l < n && h.better(h.docs[worst], h.docs[l]) {
			worst = l
		}
		if r < n && h.better(h.docs[worst], h.docs[r]) {
			worst = r
		}
		if worst == i {
			return
		}
		h.docs[i], h.docs[worst] = h.docs[worst], h.docs[i]
		i = worst
	}
}

// rarity is the factor a query word's first-stage weight is multiplied by:
// [Options.Rare] for one of the query's own words that only one card of
// a catalog of [rareMinCards] or more has and that the word vectors do
// not know ("homestays", "WGS84"), 1 otherwise. Such a word says which
// tool is meant more surely than its IDF alone tells against two generic
// words a name shares with the task ("find" of find_free_time), and
// meaning cannot speak for it. Words the vectors know are left to the
// third stage: weighing every rare word more (IDF^1.25) spread the fused
// scores of hybrid ranking and cost the held-out halves .008 and .009.
func (ix *Index) rarity(qt QueryTerm, t *term) float64 {
	if ix.opts.Rare <= 1 || qt.From != "" || len(t.postings) != 1 || len(ix.names) < rareMinCards || ix.vec == nil {
		return 1
	}
	if _, ok := ix.vec.id(qt.Word, qt.Stem); ok {
		return 1
	}
	return ix.opts.Rare
}

// rareMinCards is the smallest catalog where a word in one card is rare:
// in a handful of cards, every word is.
const rareMinCards = 20
