package rank

import (
	"math"
	"slices"
)

// DefaultPrecedent weighs what the past phrases most like the query say
// ([Options.Precedent]).
const DefaultPrecedent = 3.0

// precedentPower sharpens a phrase's likeness to the query (a cosine in
// [0,1]) before it counts: cubed, a near repeat of a past phrase counts
// almost whole and a phrase sharing a word or two with the query almost
// nothing, so a card asked for often does not gain from every query that
// shares its everyday words.
const precedentPower = 3

// precedents are the past phrases of every card's usage, each a document
// of its own: a query like a phrase some past session asked for before
// calling a card is evidence for that card however many other things the
// card was asked for. (The usage field pools a card's phrases into one
// bag of words, in which a card asked for often matches every query.)
type precedents struct {
	post map[int32][]int32 // term id -> the phrases that have it
	doc  []int32           // phrase -> its card
	norm []float64         // phrase -> the length of its IDF vector
	idf  map[int32]float64 // term id -> IDF over the phrases
	rare float64           // the IDF of a word no phrase has
	// evidence is each card's usage weight share, e/(e+UsageEvidence).
	evidence []float64
}

// buildPrecedents indexes the phrases of ix.usage, when there are any.
func (ix *Index) buildPrecedents() {
	if len(ix.usage) == 0 || ix.opts.Precedent <= 0 {
		return
	}
	p := &precedents{post: make(map[int32][]int32), idf: make(map[int32]float64), evidence: make([]float64, len(ix.names))}
	docs := make([]int32, 0, len(ix.usage))
	for d := range ix.usage {
		docs = append(docs, d)
	}
	slices.Sort(docs)
	for _, d := range docs {
		var asked []Asked
		for _, ph := range ix.usage[d] {
			id := int32(len(p.doc))
			p.doc = append(p.doc, d)
			for _, t := range ph.terms {
				p.post[t] = append(p.post[t], id)
			}
			asked = append(asked, ph.Asked)
		}
		p.evidence[d] = evidenceShare(CardEvidence(asked), ix.opts.UsageEvidence)
	}
	n := float64(len(p.doc))
	for t, ids := range p.post {
		p.idf[t] = logIDF(n, float64(len(ids)))
	}
	p.rare = logIDF(n, 0)
	p.norm = make([]float64, len(p.doc))
	id := 0
	for _, d := range docs {
		for _, ph := range ix.usage[d] {
			var sq float64
			for _, t := range ph.terms {
				sq += p.idf[t] * p.idf[t]
			}
			p.norm[id] = math.Sqrt(sq)
			id++
		}
	}
	ix.past = p
}

// evidenceShare is e/(e+k), or 1 for any evidence when k is negative.
func evidenceShare(e, k float64) float64 {
	if !(e > 0) {
		return 0
	}
	if k <= 0 {
		return 1
	}
	return e / (e + k)
}

// addPrecedents raises the first-stage score of each card by what its
// past phrase most like the query says: Precedent × the card's evidence
// share × the cosine of the query's and the phrase's IDF vectors (over
// the phrases, so words every past session says weigh little) × the best
// first-stage score, so it is on the scale of the query's scores. The
// query's own words count; a word no phrase has lengthens the query's
// vector as a rare word.
func (ix *Index) addPrecedents(q []QueryTerm, s *scratch) {
	p := ix.past
	if p == nil || len(s.touched) == 0 {
		return
	}
	if s.pastAcc == nil {
		s.pastAcc = make(map[int32]float64)
	}
	clear(s.pastAcc)
	var qsq float64
	for j, qt := range q {
		if qt.From != "" || qt.Boost {
			continue
		}
		w := p.rare
		if t := s.terms[j]; t != nil {
			if idf, ok := p.idf[t.id]; ok {
				w = idf
				for _, id := range p.post[t.id] {
					s.pastAcc[id] += idf * idf * qt.Weight
				}
			}
		}
		qsq += w * w * qt.Weight * qt.Weight
	}
	if len(s.pastAcc) == 0 || qsq == 0 {
		return
	}
	qn := math.Sqrt(qsq)
	if s.pastVote == nil {
		s.pastVote = make(map[int32]float64)
	}
	clear(s.pastVote)
	for id, acc := range s.pastAcc {
		if p.norm[id] == 0 {
			continue
		}
		d := p.doc[id]
		if v := math.Pow(acc/(qn*p.norm[id]), precedentPower); v > s.pastVote[d] {
			s.pastVote[d] = v
		}
	}
	var top float64
	for _, d := range s.touched {
		top = max(top, s.scores[d])
	}
	for d, v := range s.pastVote {
		add := ix.opts.Precedent * p.evidence[d] * v * top
		if add <= 0 {
			continue
		}
		if s.scores[d] == 0 {
			s.touched = append(s.touched, d)
		}
		s.scores[d] += add
	}
}
