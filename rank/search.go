package rank

import (
	"container/heap"
	"sort"
	"sync"
)

// Hit is one ranked card with its explanation.
type Hit struct {
	// Name is the card's name.
	Name string `json:"name"`
	// Index is the card's position in the slice given to [New].
	Index int `json:"-"`
	// Score is the BM25F score; only its order within one search matters.
	Score float64 `json:"score"`
	// Coverage is the share of the query's weight (IDF-weighted query
	// terms) that this card matched, in [0,1].
	Coverage float64 `json:"coverage"`
	// Matches explains the score term by term, in query order.
	Matches []Match `json:"matches,omitempty"`
}

// Match is one query term's contribution to a hit.
type Match struct {
	// Term is the query word as the user wrote it (lower-cased).
	Term string `json:"term"`
	// Fields are the card fields the term's stem was found in.
	Fields []Field `json:"fields"`
	// Score is the term's share of the hit's score.
	Score float64 `json:"score"`
	// Via is, when Term is a related word added by query expansion, the
	// query word it is related to.
	Via string `json:"via,omitempty"`
}

// QueryTerm is one weighted term of a parsed query.
type QueryTerm struct {
	Stem   string
	Word   string
	Weight float64 // 1 for a word of the query; less for an expansion
	// From is, for an expansion term, the query word it is related to;
	// empty for the query's own words.
	From string
}

// ParseQuery turns text into weighted query terms: stop words dropped,
// stems deduplicated (a repeated word keeps weight 1), in first-seen order.
func ParseQuery(text string) []QueryTerm {
	toks := Tokens(text)
	seen := make(map[string]bool, len(toks))
	q := make([]QueryTerm, 0, len(toks))
	for _, t := range toks {
		if seen[t.Stem] {
			continue
		}
		seen[t.Stem] = true
		q = append(q, QueryTerm{Stem: t.Stem, Word: t.Word, Weight: 1})
	}
	return q
}

// scratch is per-search working memory, pooled to keep searches free of
// allocation proportional to the catalog.
type scratch struct {
	scores  []float64
	touched []int32
}

var scratchPool sync.Pool

func (ix *Index) getScratch() *scratch {
	s, _ := scratchPool.Get().(*scratch)
	if s == nil {
		s = &scratch{}
	}
	if cap(s.scores) < len(ix.names) {
		s.scores = make([]float64, len(ix.names))
	}
	s.scores = s.scores[:len(ix.names)]
	s.touched = s.touched[:0]
	return s
}

func (ix *Index) putScratch(s *scratch) {
	for _, d := range s.touched {
		s.scores[d] = 0
	}
	s.touched = s.touched[:0]
	scratchPool.Put(s)
}

// Search ranks the cards for a free-text query and returns the best k
// hits (all matching cards when k <= 0), best first, ties broken by name.
// Cards that match no query term are never returned.
func (ix *Index) Search(query string, k int) []Hit {
	return ix.SearchTerms(ix.Expand(ParseQuery(query)), k)
}

// SearchTerms is [Index.Search] over already parsed, weighted terms.
func (ix *Index) SearchTerms(q []QueryTerm, k int) []Hit {
	if len(q) == 0 || len(ix.names) == 0 {
		return nil
	}
	s := ix.getScratch()
	defer ix.putScratch(s)
	for _, qt := range q {
		t := ix.terms[qt.Stem]
		if t == nil {
			continue
		}
		w := t.idf * qt.Weight
		for i := range t.postings {
			p := &t.postings[i]
			if s.scores[p.doc] == 0 {
				s.touched = append(s.touched, p.doc)
			}
			s.scores[p.doc] += w * ix.saturate(p)
		}
	}
	if len(s.touched) == 0 {
		return nil
	}
	if k <= 0 || k > len(s.touched) {
		k = len(s.touched)
	}
	h := &topK{names: ix.names, scores: s.scores}
	for _, d := range s.touched {
		if h.Len() < k {
			heap.Push(h, d)
		} else if h.better(d, h.docs[0]) {
			h.docs[0] = d
			heap.Fix(h, 0)
		}
	}
	docs := h.docs
	sort.Slice(docs, func(i, j int) bool { return h.better(docs[i], docs[j]) })
	hits := make([]Hit, len(docs))
	for i, d := range docs {
		hits[i] = ix.explain(q, int(d), s.scores[d])
	}
	return hits
}

// saturate returns the BM25F saturated, length-normalised frequency of a
// posting.
func (ix *Index) saturate(p *posting) float64 {
	var tf float64
	lens := &ix.lens[p.doc]
	for f := Field(0); f < numFields; f++ {
		if p.tf[f] == 0 {
			continue
		}
		fw := ix.opts.Fields[f]
		norm := 1 - fw.B + fw.B*float64(lens[f])/ix.avgLen[f]
		tf += fw.Weight * float64(p.tf[f]) / norm
	}
	return tf / (ix.opts.K1 + tf)
}

// explain recomputes one hit's score term by term.
func (ix *Index) explain(q []QueryTerm, doc int, score float64) Hit {
	h := Hit{Name: ix.names[doc], Index: doc, Score: score}
	var total, matched float64
	for _, qt := range q {
		t := ix.terms[qt.Stem]
		if t == nil {
			if qt.Weight >= 1 {
				// An unknown word still counts against coverage, as much
				// as a rare indexed word would.
				total += ix.maxIDF() * qt.Weight
			}
			continue
		}
		w := t.idf * qt.Weight
		total += w
		i := sort.Search(len(t.postings), func(i int) bool { return t.postings[i].doc >= int32(doc) })
		if i == len(t.postings) || int(t.postings[i].doc) != doc {
			continue
		}
		p := &t.postings[i]
		matched += w
		m := Match{Term: qt.Word, Score: w * ix.saturate(p), Via: qt.From}
		for f := Field(0); f < numFields; f++ {
			if p.tf[f] > 0 {
				m.Fields = append(m.Fields, f)
			}
		}
		h.Matches = append(h.Matches, m)
	}
	if total > 0 {
		h.Coverage = matched / total
	}
	return h
}

// maxIDF is the IDF of a term found in a single card.
func (ix *Index) maxIDF() float64 {
	n := float64(len(ix.names))
	return logIDF(n, 1)
}

// topK is a min-heap of document ids by (score, name): the root is the
// worst of the best k.
type topK struct {
	names  []string
	scores []float64
	docs   []int32
}

// better orders by score descending, then name ascending.
func (h *topK) better(a, b int32) bool {
	if h.scores[a] != h.scores[b] {
		return h.scores[a] > h.scores[b]
	}
	return h.names[a] < h.names[b]
}

func (h *topK) Len() int           { return len(h.docs) }
func (h *topK) Less(i, j int) bool { return h.better(h.docs[j], h.docs[i]) }
func (h *topK) Swap(i, j int)      { h.docs[i], h.docs[j] = h.docs[j], h.docs[i] }
func (h *topK) Push(x any)         { h.docs = append(h.docs, x.(int32)) }
func (h *topK) Pop() any {
	x := h.docs[len(h.docs)-1]
	h.docs = h.docs[:len(h.docs)-1]
	return x
}
