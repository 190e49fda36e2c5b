package rank

import (
	"cmp"
	"slices"
)

// The third stage: similarity of meaning by word vectors.
//
// Lexical matching sees "tunes" and "music", or "film" and "movie", as
// different words; WordNet joins some such pairs but knows nothing of
// "taxi" and "ride" or "Bruce Willis" and "actor". The third stage
// compares words by their GloVe vectors (see wordvec.go) and rescores the
// best [Options.SimilarDepth] cards of the second stage by two measures,
// each in [0,1]:
//
//   - meaning: for each of the query's own words, its best cosine
//     similarity to a word of the card's name or description, averaged
//     with rare words weighing more (smooth inverse frequency) — how much
//     of the request the card speaks of (parameter names left out: they
//     did no better on the benchmarks and cost time);
//   - name fit: for each word of the card's name that has a vector, its
//     best similarity to a query word, averaged — how much of the card's
//     name the request speaks of, which sets "list_servers" above
//     "add_server" for "which servers are registered". (Counting a
//     name word without a vector — a brand, an acronym — as a match when
//     the query has it, or as a miss, both did worse on the benchmarks:
//     the first stage already weighs such rare words.)
//
// A query word without a vector that the catalog has (a tool's own name
// such as "kubectl", a word of another language) is a plain word: it
// counts in meaning as the rarest word, matched (similarity 1) by a card
// whose name or description has it and by no other, and a card whose
// name has it counts it as a name word that fits. Otherwise a card found
// by such a word, or one whose description has no vectors (empty, or not
// English), would be outscored by cards the vectors can speak for
// (TestThirdStagePlainWords); NDCG@10 rose a little on every benchmark
// set (MetaTool single 0.6001 -> 0.6015, BFCL 0.8232 -> 0.8238,
// Seal-Tools 0.9296 -> 0.9300).
//
// A similarity below similarFloor counts as none: below it GloVe
// relates words by topic, not by meaning. The card's score is multiplied
// by 1 + Similar × meaning + NameFit × name fit; like the second stage it
// only raises scores, so the rescored cards stay ahead of the others.

// maxCardWords bounds the distinct words of a card the third stage
// compares: a long description (an agent's whole prompt) is judged by its
// opening, which says what it is for, and costs no more than a short one.
const maxCardWords = 64

// simSlots is the size of a search's cache of similarity rows: room for
// 512 distinct card words, about what 20 cards hold.
const simSlots = 1024

// similarFloor is the cosine similarity below which two words are taken
// to be unrelated.
const similarFloor = 0.4

// cardVectors holds every card's words that have a vector: card i's are
// ids[off[i]:off[i+1]], its name's words first (nameN[i] of them), each
// word once. An id is a position in arena, which holds the vector of each
// word the catalog uses, once, as float32 (twice as fast to multiply as
// the table's bytes).
type cardVectors struct {
	ids   []int32
	off   []int32
	nameN []uint8
	arena []float32
	slot  map[int32]int32 // table id -> arena position, during New
	// stems holds each arena word's stem, by position, or "" for the
	// commonest words, which are never a query word's neighbour.
	stems []string
}

// add appends one card's words: those of its name, then those of the rest
// (its description), skipping words without a vector and repeats.
func (cv *cardVectors) add(t *wordVectors, name, rest []Token) {
	start := len(cv.ids)
	push := func(tok Token) {
		id, ok := t.id(tok.Word, tok.Stem)
		if !ok {
			return
		}
		at, ok := cv.slot[id]
		if !ok {
			at = int32(len(cv.arena) / t.dims)
			cv.slot[id] = at
			cv.arena = t.appendVector(cv.arena, id)
			stem := tok.Stem
			if id < neighbourMinRank {
				stem = ""
			}
			cv.stems = append(cv.stems, stem)
		}
		if !slices.Contains(cv.ids[start:], at) {
			cv.ids = append(cv.ids, at)
		}
	}
	for _, tok := range name {
		if len(cv.ids)-start < 255 {
			push(tok)
		}
	}
	cv.nameN = append(cv.nameN, uint8(len(cv.ids)-start))
	for _, tok := range rest {
		if len(cv.ids)-start >= maxCardWords {
			break
		}
		push(tok)
	}
	cv.off = append(cv.off, int32(len(cv.ids)))
}

// queryVector is one query word of the third stage.
type queryVector struct {
	id     int32
	vec    []float32
	weight float64
}

// maxQueryWords bounds the query words the third stage compares.
const maxQueryWords = 64

// similarQuery returns the query's own words that have a vector, each
// once, weighted by rarity and by the word's query weight (at most 1, so
// a number or a quoted value counts less). Their vectors are kept in s.
func (ix *Index) similarQuery(q []QueryTerm, s *scratch) []queryVector {
	out := s.qvec[:0]
	s.qids = s.qids[:0]
	for _, qt := range q {
		if qt.From != "" {
			continue
		}
		id, ok := ix.vec.id(qt.Word, qt.Stem)
		if !ok || slices.Contains(s.qids, id) {
			continue
		}
		s.qids = append(s.qids, id)
		out = append(out, queryVector{id: id, weight: ix.vec.weight(id) * min(qt.Weight, 1)})
	}
	if len(out) > maxQueryWords {
		// A task as long as a document: its rarest words say the most,
		// and the cost grows with the words compared.
		slices.SortStableFunc(out, func(a, b queryVector) int { return cmp.Compare(b.weight, a.weight) })
		out = out[:maxQueryWords]
	}
	d := ix.vec.dims
	s.qarena = s.qarena[:0]
	for _, v := range out {
		s.qarena = ix.vec.appendVector(s.qarena, v.id)
	}
	for i := range out {
		out[i].vec = s.qarena[i*d : (i+1)*d]
	}
	s.qvec = out
	return out
}

// plainWord is one of the query's own words that has no vector (a brand,
// a tool's own name such as "kubectl", a word of another language) but
// that the catalog has: the third stage counts it as a word the card
// either has, similarity 1, or lacks, 0, so that a card matching it is
// not outscored by cards the vectors can speak for.
type plainWord struct {
	t      *term
	weight float64
}

// plainWords returns the query's own words that the catalog has and the
// vectors lack, each weighted as the rarest word (smooth inverse frequency
// gives an unseen word weight 1) times its query weight (at most 1).
func (ix *Index) plainWords(q []QueryTerm, s *scratch) []plainWord {
	out := s.plain[:0]
	for j, qt := range q {
		t := s.terms[j]
		if qt.From != "" || qt.Boost || t == nil {
			continue
		}
		if _, ok := ix.vec.id(qt.Word, qt.Stem); ok {
			continue
		}
		if slices.ContainsFunc(out, func(p plainWord) bool { return p.t == t }) {
			continue
		}
		out = append(out, plainWord{t: t, weight: min(qt.Weight, 1)})
	}
	s.plain = out
	return out
}

// has returns whether card d has term t in its name and in its
// description.
func (t *term) has(d int32) (name, desc bool) {
	i, ok := slices.BinarySearchFunc(t.postings, d, func(p posting, d int32) int { return cmp.Compare(p.doc, d) })
	if !ok {
		return false, false
	}
	f := &t.freqs[i]
	return f[FieldName] > 0, f[FieldDescription] > 0
}

// similar computes the third-stage measures of card d for the query
// words qv and the plain words pw: meaning and name fit, each in [0,1].
// sims caches, per card word, its similarity to each query word, across
// the cards of one search.
func (ix *Index) similar(d int32, qv []queryVector, pw []plainWord, s *scratch) (meaning, nameFit float64) {
	cv := &ix.cardVec
	words := cv.ids[cv.off[d]:cv.off[d+1]]
	nameN := int(cv.nameN[d])
	best := s.qbest[:len(qv)]
	for i := range best {
		best[i] = 0
	}
	for j, c := range words {
		row := s.simRow(cv, ix.vec.dims, c, qv)
		var top float64
		for i, x := range row {
			best[i] = max(best[i], x)
			top = max(top, x)
		}
		if j < nameN {
			nameFit += top
		}
	}
	var num, den float64
	for i, q := range qv {
		num += q.weight * best[i]
		den += q.weight
	}
	for _, p := range pw {
		den += p.weight
		inName, inDesc := p.t.has(d)
		if inName || inDesc {
			num += p.weight
		}
		if inName {
			// A name word without a vector counts when the task says it.
			nameFit++
			nameN++
		}
	}
	if den > 0 {
		meaning = num / den
	}
	if nameN > 0 {
		nameFit /= float64(nameN)
	}
	return meaning, nameFit
}

// notComputed marks a similarity of a cached row not computed yet.
const notComputed = -1

// simRow returns the similarities of card word c to each query word,
// floored at similarFloor, computing each once. Rows are cached by card
// word in a small open-addressing table (slot holds c+1, 0 is empty); a
// row holds a similarity for each word of the basis (see shareRows),
// notComputed until a search reads it.
func (s *scratch) simRow(cv *cardVectors, dims int, c int32, qv []queryVector) []float64 {
	row, fresh := s.basisRow(c)
	if s.simAlone && !fresh {
		return row // the search's own words: complete, and in qv's order
	}
	v := cv.arena[int(c)*dims : int(c+1)*dims]
	out := row
	if !s.simAlone {
		out = s.simOut[:len(qv)]
	}
	// Two query words at a time: their sums do not wait on each other.
	i := 0
	for ; i+1 < len(qv); i += 2 {
		b0, b1 := s.simIdx[i], s.simIdx[i+1]
		if row[b0] == notComputed && row[b1] == notComputed {
			x0, x1 := dot2(qv[i].vec, qv[i+1].vec, v)
			row[b0], row[b1] = similarity(x0), similarity(x1)
		}
		out[i], out[i+1] = s.similarityAt(row, b0, qv[i].vec, v), s.similarityAt(row, b1, qv[i+1].vec, v)
	}
	if i < len(qv) {
		out[i] = s.similarityAt(row, s.simIdx[i], qv[i].vec, v)
	}
	return out[:len(qv)]
}

// similarityAt returns row[b], the similarity of the card word of vector
// v to the query word of vector q, computing it if it is not yet.
func (s *scratch) similarityAt(row []float64, b int32, q, v []float32) float64 {
	if row[b] == notComputed {
		row[b] = similarity(dot(q, v))
	}
	return row[b]
}

// similarity is a cosine similarity as the third stage counts it: below
// similarFloor it is none.
func similarity(dot float32) float64 {
	x := min(float64(dot), 1) // bytes round: a word's own is 1.00x
	if x < similarFloor {
		x = 0
	}
	return x
}

// basisRow returns the cached row of card word c, adding it, all
// notComputed, if the table lacks it (fresh).
func (s *scratch) basisRow(c int32) (row []float64, fresh bool) {
	n := len(s.simBasis)
	mask := len(s.simKey) - 1
	i := int(uint32(c)*2654435761) & mask
	for ; s.simKey[i] != 0; i = (i + 1) & mask {
		if s.simKey[i] == c+1 {
			at := int(s.simAt[i])
			return s.sims[at : at+n], false
		}
	}
	if 2*(s.simUsed+1) > len(s.simKey) {
		// Too full to probe quickly: forget the cache and keep going.
		clear(s.simKey)
		s.simUsed = 0
		i = int(uint32(c)*2654435761) & mask
	}
	at := len(s.sims)
	for range n {
		s.sims = append(s.sims, notComputed)
	}
	s.simKey[i], s.simAt[i] = c+1, int32(at)
	s.simUsed++
	return s.sims[at : at+n], true
}

// shareRows sets where a search's similarities are cached. Alone, a
// search caches them afresh, by card word, over its own query words (the
// basis). In a batch, a search whose query words are all in the basis
// reads and fills the rows the batch's earlier searches left: the steps
// of a task after the task (package policy) compute again only the
// similarities of the cards the task's search did not rescore. A search
// with a word the basis lacks starts afresh, its words the basis.
func (s *scratch) shareRows(qv []queryVector) {
	if s.batch && len(s.simBasis) > 0 && s.inBasis(qv) {
		s.simAlone = false
		return
	}
	s.simAlone = true
	if s.simKey == nil {
		s.simKey = make([]int32, simSlots)
		s.simAt = make([]int32, simSlots)
	} else {
		clear(s.simKey)
	}
	s.simUsed = 0
	s.sims = s.sims[:0]
	s.simBasis, s.simIdx = s.simBasis[:0], s.simIdx[:0]
	for i, q := range qv {
		s.simBasis = append(s.simBasis, q.id)
		s.simIdx = append(s.simIdx, int32(i))
	}
}

// inBasis reports whether every word of qv is in the basis, and sets
// simIdx to their positions in it.
func (s *scratch) inBasis(qv []queryVector) bool {
	s.simIdx = s.simIdx[:0]
	for _, q := range qv {
		b := slices.Index(s.simBasis, q.id)
		if b < 0 {
			return false
		}
		s.simIdx = append(s.simIdx, int32(b))
	}
	return true
}

// thirdStage rescores the cards of head (best first) by similarity of
// meaning and records the measures for explanations.
func (ix *Index) thirdStage(q []QueryTerm, head []int32, s *scratch) {
	if ix.vec == nil || len(head) == 0 {
		return
	}
	qv := ix.similarQuery(q, s)
	pw := ix.plainWords(q, s)
	if len(qv) == 0 {
		// Nothing to compare by meaning: plain words alone would only
		// echo the first stage.
		return
	}
	s.shareRows(qv)
	if cap(s.qbest) < len(qv) {
		s.qbest = make([]float64, len(qv))
	}
	if cap(s.simOut) < len(qv) {
		s.simOut = make([]float64, len(qv))
	}
	for _, d := range head {
		meaning, fit := ix.similar(d, qv, pw, s)
		s.scores[d] *= 1 + ix.opts.Similar*meaning + ix.opts.NameFit*fit
		s.meaning = append(s.meaning, docMeasure{d, meaning, fit})
	}
}

// docMeasure is one card's third-stage measures, kept for [Hit].
type docMeasure struct {
	doc           int32
	meaning, name float64
}

// Neighbours: the catalog's words nearest in meaning to a query word the
// catalog lacks ("tunes" where the tools say "songs", "accommodations" where
// they say "hotel"). The first stage finds cards by their words alone, so
// without them such a task finds nothing, or the wrong cards, and the
// third stage has nothing to reorder.

// Bounds of the neighbours of a query word: at most maxNeighbours, each
// at least neighbourFloor similar (well above similarFloor: these words
// find cards, not only reorder them), for at most maxNeighbourWords query
// words, since each costs a pass over the catalog's words.
//
// A query word among the expandMinRank commonest English words is never
// expanded: those are the words a small catalog lacks by chance ("going",
// "done", "every"), and their nearest words are other common words
// ("get", "take"). Nor is a catalog word among the neighbourMinRank
// commonest ever a neighbour. (A word's id in the vector table is its
// frequency rank.) On the benchmarks this costs little (BFCL NDCG@10
// 0.8235 without these bounds, 0.8229 with them) and keeps a 20-tool
// catalog from answering "what is inside config.yaml" with movies. The
// price: a common word of the news GloVe learnt from, such as "dollars"
// (rank 207), is not expanded either.
const (
	maxNeighbours     = 3
	neighbourFloor    = 0.55
	maxNeighbourWords = 8
	expandMinRank     = 2000
	neighbourMinRank  = 500
)

// neighbour is a catalog word near a query word.
type neighbour struct {
	stem string
	sim  float64
}

// neighbours returns the catalog words nearest in meaning to the query
// word t (by stem: forms of one word count once), most similar first,
// ties by stem. The catalog's words are those the third stage compares:
// each card's name and the opening of its description.
func (ix *Index) neighbours(t QueryTerm, dst []neighbour) []neighbour {
	dst = dst[:0]
	id, ok := ix.vec.id(t.Word, t.Stem)
	if !ok || id < expandMinRank {
		return dst
	}
	d := ix.vec.dims
	var qbuf [128]float32
	q := ix.vec.appendVector(qbuf[:0], id)
	cv := &ix.cardVec
	for at, stem := range cv.stems {
		if stem == "" {
			continue
		}
		x := float64(dot(q, cv.arena[at*d:(at+1)*d]))
		if x < neighbourFloor {
			continue
		}
		dst = insertNeighbour(dst, neighbour{stem, min(x, 1)})
	}
	return dst
}

// insertNeighbour adds n to the list, best first and at most
// maxNeighbours long, keeping one entry per stem.
func insertNeighbour(list []neighbour, n neighbour) []neighbour {
	for i, m := range list {
		if m.stem == n.stem {
			if n.sim <= m.sim {
				return list
			}
			list = slices.Delete(list, i, i+1)
			break
		}
	}
	at := len(list)
	for i, m := range list {
		if n.sim > m.sim || (n.sim == m.sim && n.stem < m.stem) {
			at = i
			break
		}
	}
	if at >= maxNeighbours {
		return list
	}
	list = slices.Insert(list, at, n)
	if len(list) > maxNeighbours {
		list = list[:maxNeighbours]
	}
	return list
}
