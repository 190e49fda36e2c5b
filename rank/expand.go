package rank

import (
	"bytes"
	_ "embed"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
)

//go:generate go run gen_related.go -o related.txt

// relatedText is the table of related words built from WordNet 3.0 by
// gen_related.go: one line per stem, "stem rel:w rel:w ...", w in tenths.
// It is embedded as plain text (2 MB) and searched where it lies: a
// process reads only the pages its lookups touch and decompresses
// nothing.
//
//go:embed related.txt
var relatedText []byte

// Related is one word related to another, by stem.
type Related struct {
	Stem string
	// Weight is the strength of the relation in (0,1]: 1 for a synonym of
	// the word's most frequent sense, less for rarer senses, derived
	// forms, similar adjectives and hypernyms.
	Weight float64
}

var (
	relatedOnce  sync.Once
	relatedTable *relatedWords
	relatedErr   error
)

// relatedWords is the table, searched in place: the lines are sorted by
// stem, so a lookup is a binary search over line offsets and only the
// found line is parsed. Loading costs one pass over the text, not a map
// of every stem.
type relatedWords struct {
	text  []byte
	lines []uint32 // offset of each line's start
	stems []uint8  // length of each line's stem
	// keys holds each line's stem's first 8 bytes as a number (see
	// stemKey), in line order: a binary search reads these 0.4 MB
	// rather than stems scattered over the text, then compares the
	// stems of the few lines whose key is the query's.
	keys []uint64
}

// stemKey is the first 8 bytes of s, big-endian, padded with zeros:
// keys are in the order of the stems they come from (equal for stems
// that share their first 8 bytes).
func stemKey[S string | []byte](s S) uint64 {
	var k uint64
	for i := range 8 {
		k <<= 8
		if i < len(s) {
			k |= uint64(s[i])
		}
	}
	return k
}

// RelatedTo returns the stems related to stem in the embedded WordNet
// table, strongest first (ties by stem), or nil if it has none. The table
// is loaded on first use.
func RelatedTo(stem string) []Related {
	t, err := loadRelated()
	if err != nil {
		return nil
	}
	return t.lookup(stem)
}

// loadRelated indexes the embedded table once.
func loadRelated() (*relatedWords, error) {
	relatedOnce.Do(func() {
		relatedTable, relatedErr = newRelatedWords(relatedText)
	})
	return relatedTable, relatedErr
}

// newRelatedWords indexes the lines of a table, which it keeps (and
// never writes to), checking that they are sorted by stem.
func newRelatedWords(text []byte) (*relatedWords, error) {
	n := bytes.Count(text, []byte{'\n'})
	t := &relatedWords{text: text, lines: make([]uint32, 0, n), stems: make([]uint8, 0, n), keys: make([]uint64, 0, n)}
	var prev []byte
	for off := 0; off < len(text); {
		end := bytes.IndexByte(text[off:], '\n')
		if end < 0 {
			end = len(text) - off
		}
		stem, _, _ := bytes.Cut(text[off:off+end], []byte{' '})
		if len(t.lines) > 0 && bytes.Compare(stem, prev) <= 0 {
			return nil, fmt.Errorf("related words line %d: stem %q out of order", len(t.lines)+1, stem)
		}
		if len(stem) > 255 {
			return nil, fmt.Errorf("related words line %d: stem too long", len(t.lines)+1)
		}
		prev = stem
		t.lines = append(t.lines, uint32(off))
		t.stems = append(t.stems, uint8(len(stem)))
		t.keys = append(t.keys, stemKey(stem))
		off += end + 1
	}
	return t, nil
}

// line returns line i without its newline.
func (t *relatedWords) line(i int) []byte {
	l := t.text[t.lines[i]:]
	if j := bytes.IndexByte(l, '\n'); j >= 0 {
		l = l[:j]
	}
	return l
}

// lookup finds stem's line and parses it; a malformed line gives nil
// (TestRelated checks every line of the embedded table).
func (t *relatedWords) lookup(stem string) []Related {
	i := t.find(stem)
	if i == len(t.lines) {
		return nil
	}
	s, rs, err := parseRelatedLine(string(t.line(i)))
	if err != nil || s != stem {
		return nil
	}
	return rs
}

// find returns the first line whose stem is not before stem, or the
// number of lines.
func (t *relatedWords) find(stem string) int {
	key := stemKey(stem)
	lo, hi := 0, len(t.keys)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if t.keys[mid] < key {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	// Lines of the same key are in the order of their whole stems.
	for lo < len(t.keys) && t.keys[lo] == key && string(t.stem(lo)) < stem {
		lo++
	}
	return lo
}

// stem returns line i's stem.
func (t *relatedWords) stem(i int) []byte {
	off := t.lines[i]
	return t.text[off : off+uint32(t.stems[i])]
}

// relation is one related stem, read in place from the table's text.
type relation struct {
	stem   []byte
	weight float64
}

// appendRelated appends to dst the stems related to stem, as lookup
// returns them, but read in place: Expand looks up every word of every
// query, and copying and splitting each line cost more than the search
// for it. A line not in the plain form "stem rel:w rel:w" (single
// spaces, printable ASCII, w from 1 to 10) is left to lookup.
func (t *relatedWords) appendRelated(dst []relation, stem string) []relation {
	i := t.find(stem)
	if i == len(t.lines) {
		return dst
	}
	line := t.line(i)
	if string(line[:t.stems[i]]) != stem {
		return dst
	}
	n := len(dst)
	rest := line[t.stems[i]:]
	for len(rest) > 0 {
		r, w, tail, ok := plainRelation(rest)
		if !ok {
			return t.appendLookup(dst[:n], stem)
		}
		dst = append(dst, relation{stem: r, weight: float64(w) / 10})
		rest = tail
	}
	if len(dst) == n {
		return t.appendLookup(dst, stem) // no relations: lookup's error
	}
	return dst
}

// plainRelation reads " rel:w" from the start of b, w from 1 to 10, and
// returns the rest of b.
func plainRelation(b []byte) (rel []byte, w int, rest []byte, ok bool) {
	if len(b) < 4 || b[0] != ' ' {
		return nil, 0, nil, false
	}
	end := 1
	for end < len(b) && b[end] != ' ' {
		if b[end] <= ' ' || b[end] >= 0x7f {
			return nil, 0, nil, false
		}
		end++
	}
	f := b[1:end]
	colon := bytes.IndexByte(f, ':')
	if colon <= 0 {
		return nil, 0, nil, false
	}
	switch d := f[colon+1:]; {
	case len(d) == 1 && d[0] >= '1' && d[0] <= '9':
		w = int(d[0] - '0')
	case string(d) == "10":
		w = 10
	default:
		return nil, 0, nil, false
	}
	return f[:colon], w, b[end:], true
}

// appendLookup appends lookup's relations of stem to dst.
func (t *relatedWords) appendLookup(dst []relation, stem string) []relation {
	for _, r := range t.lookup(stem) {
		dst = append(dst, relation{stem: []byte(r.Stem), weight: r.Weight})
	}
	return dst
}

// parseRelatedLine reads "stem rel:w rel:w ...", w in tenths.
func parseRelatedLine(line string) (string, []Related, error) {
	fs := strings.Fields(line)
	if len(fs) < 2 {
		return "", nil, fmt.Errorf("want a stem and at least one relation")
	}
	rs := make([]Related, 0, len(fs)-1)
	for _, f := range fs[1:] {
		s, w, ok := strings.Cut(f, ":")
		n, err := strconv.Atoi(w)
		if !ok || s == "" || err != nil || n < 1 || n > 10 {
			return "", nil, fmt.Errorf("bad relation %q (want stem:1..10)", f)
		}
		rs = append(rs, Related{Stem: s, Weight: float64(n) / 10})
	}
	return fs[0], rs, nil
}

// parseRelated reads a whole table into a map, reporting the first
// malformed line.
func parseRelated(text []byte) (map[string][]Related, error) {
	t, err := newRelatedWords(text)
	if err != nil {
		return nil, err
	}
	m := make(map[string][]Related, len(t.lines))
	for i := range t.lines {
		stem, rs, err := parseRelatedLine(string(t.line(i)))
		if err != nil {
			return nil, fmt.Errorf("related words line %d: %w", i+1, err)
		}
		m[stem] = rs
	}
	return m, nil
}

// Expand adds to q the indexed stems related to its terms: for each of
// the query's own words, the words WordNet relates to it (weighted by
// [Options.Expansion] times the relation's strength, or
// [Options.Substitution] for a word the catalog lacks) and, when the
// catalog lacks the word, the parts of a compound ("codebase" -> code,
// base; weighted compoundPartWeight; see splitCompound) and the catalog's
// words nearest to it in meaning by word vectors (weighted by
// [Options.Neighbours] times their similarity; see neighbours). Each is also weighted by the term it came from. A stem
// already in q is not added again; a stem related to several terms keeps
// its best weight. Expansion terms record the query word they came from
// in From and their relation's strength (or similarity) in Strength. With
// both expansions off, q is returned as it is.
func (ix *Index) Expand(q []QueryTerm) []QueryTerm {
	return ix.expand(q, nil)
}

// expand is Expand, taking each word's expansion from cache when it has
// it and keeping it there (a nil cache keeps nothing).
func (ix *Index) expand(q []QueryTerm, cache map[expansionKey]*wordExpansion) []QueryTerm {
	alpha, beta := ix.opts.Expansion, ix.opts.Neighbours
	if ix.vec == nil {
		beta = 0
	}
	if (alpha <= 0 && beta <= 0) || len(q) == 0 {
		return q
	}
	in := make(map[string]int, len(q)*4)
	for i, t := range q {
		in[t.Stem] = i
	}
	out := q[:len(q):len(q)]
	add := func(stem string, w, strength float64, from string, standsIn bool) {
		if i, ok := in[stem]; ok {
			if out[i].From != "" && w > out[i].Weight {
				out[i].Weight, out[i].Strength, out[i].From, out[i].StandsIn = w, strength, from, standsIn
			}
			return
		}
		in[stem] = len(out)
		out = append(out, QueryTerm{Stem: stem, Word: ix.words[stem], Weight: w, Strength: strength, From: from, StandsIn: standsIn})
	}
	var buf wordExpansion // a word's expansion, when there is no cache to keep it
	lacking := 0
	for _, t := range q {
		if t.From != "" {
			continue
		}
		e := ix.expansionOf(t, alpha, cache, &buf)
		a, lacks := alpha, ix.terms[t.Stem] == nil
		if lacks {
			a = ix.opts.Substitution // it stands in for a word the catalog lacks
		}
		for k, r := range e.related {
			add(r.Stem, a*r.Weight*t.Weight, r.Weight, t.Word, lacks && k >= e.everyday)
		}
		for _, st := range e.parts {
			add(st, compoundPartWeight*t.Weight, compoundPartWeight, t.Word, false)
		}
		if beta <= 0 || ix.terms[t.Stem] != nil || lacking == maxNeighbourWords {
			continue
		}
		lacking++
		if !e.nearDone {
			e.near, e.nearDone = ix.neighbours(t, e.near), true
		}
		for _, n := range e.near {
			if !opposite(t.Stem, n.stem) {
				add(n.stem, beta*n.sim*min(t.Weight, 1), n.sim, t.Word, false)
			}
		}
	}
	return out
}

// wordExpansion is what expansion adds for one of a query's own words,
// before the word's weight scales it: the words WordNet relates to it,
// the parts of a compound the catalog lacks, and its nearest catalog
// words by word vectors, once looked for.
type wordExpansion struct {
	related []Related // in the table's order, only the catalog's
	// everyday is where the everyday relations start in related (after
	// WordNet's): made for words that name what tools do, they stand in
	// for a word the catalog lacks as its own match ([Match.StandsIn]).
	everyday int
	parts    []string // stems
	near     []neighbour
	nearDone bool
}

// expansionKey names a query word's expansion: it depends on the word's
// stem and form alone.
type expansionKey struct{ stem, word string }

// expansionOf returns the expansion of t: cache's when it has it, else
// worked out (its neighbours only when asked for) and kept in cache, or in
// buf when cache is nil.
func (ix *Index) expansionOf(t QueryTerm, alpha float64, cache map[expansionKey]*wordExpansion, buf *wordExpansion) *wordExpansion {
	key := expansionKey{t.Stem, t.Word}
	if e := cache[key]; e != nil {
		return e
	}
	e := buf
	if cache != nil {
		e = &wordExpansion{}
		cache[key] = e
	}
	e.related, e.parts, e.nearDone, e.everyday = e.related[:0], e.parts[:0], false, 0
	if alpha > 0 {
		// A table that fails to load only turns WordNet off.
		if table, _ := loadRelated(); table != nil {
			var rels [16]relation
			for _, r := range table.appendRelated(rels[:0], t.Stem) {
				if _, ok := ix.terms[string(r.stem)]; ok && !opposite(t.Stem, string(r.stem)) {
					e.related = append(e.related, Related{Stem: string(r.stem), Weight: r.weight})
				}
			}
		}
		// The everyday relations go last; one WordNet also makes
		// moves there, with the everyday weight (written for this).
		var every [8]Related
		days := every[:0]
		for _, r := range everydayRelated(t.Stem) {
			if _, ok := ix.terms[r.Stem]; !ok {
				continue
			}
			if k := slices.IndexFunc(e.related, func(x Related) bool { return x.Stem == r.Stem }); k >= 0 {
				e.related = slices.Delete(e.related, k, k+1)
			}
			days = append(days, r)
		}
		e.everyday = len(e.related)
		e.related = append(e.related, days...)
	}
	if ix.vec != nil && ix.terms[t.Stem] == nil {
		// A compound the catalog lacks ("codebase"): its parts.
		for _, p := range ix.vec.splitCompound(t.Word) {
			if st := Stem(p); ix.terms[st] != nil && !stopWords[p] {
				e.parts = append(e.parts, st)
			}
		}
	}
	return e
}
