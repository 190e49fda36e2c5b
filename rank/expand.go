package rank

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"
)

//go:generate go run gen_related.go -o related.txt.gz

// relatedGz is the table of related words built from WordNet 3.0 by
// gen_related.go: one line per stem, "stem rel:w rel:w ...", w in tenths.
//
//go:embed related.txt.gz
var relatedGz []byte

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

// relatedWords is the decompressed table, searched in place: the lines
// are sorted by stem, so a lookup is a binary search over line offsets
// and only the found line is parsed. Loading costs a decompression and
// one pass over the text, not a map of every stem.
type relatedWords struct {
	text  []byte
	lines []uint32 // offset of each line's start
	stems []uint8  // length of each line's stem
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

// loadRelated decompresses the embedded table once.
func loadRelated() (*relatedWords, error) {
	relatedOnce.Do(func() {
		relatedTable, relatedErr = newRelatedWords(relatedGz)
	})
	return relatedTable, relatedErr
}

// newRelatedWords decompresses a table and indexes its lines, checking
// that they are sorted by stem.
func newRelatedWords(gz []byte) (*relatedWords, error) {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, fmt.Errorf("reading related words: %w", err)
	}
	var buf bytes.Buffer
	buf.Grow(4 * len(gz))
	if _, err := io.Copy(&buf, zr); err != nil {
		return nil, fmt.Errorf("reading related words: %w", err)
	}
	text := buf.Bytes()
	n := bytes.Count(text, []byte{'\n'})
	t := &relatedWords{text: text, lines: make([]uint32, 0, n), stems: make([]uint8, 0, n)}
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
	i := sort.Search(len(t.lines), func(i int) bool {
		off := t.lines[i]
		return string(t.text[off:off+uint32(t.stems[i])]) >= stem
	})
	if i == len(t.lines) {
		return nil
	}
	s, rs, err := parseRelatedLine(string(t.line(i)))
	if err != nil || s != stem {
		return nil
	}
	return rs
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

// parseRelated reads a whole gzip-compressed table into a map, reporting
// the first malformed line.
func parseRelated(gz []byte) (map[string][]Related, error) {
	t, err := newRelatedWords(gz)
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
// [Options.Expansion] times the relation's strength) and, when the
// catalog lacks the word, the parts of a compound ("codebase" -> code,
// base; weighted compoundPartWeight; see splitCompound) and the catalog's
// words nearest to it in meaning by word vectors (weighted by
// [Options.Neighbours] times their similarity; see neighbours). Each is also weighted by the term it came from. A stem
// already in q is not added again; a stem related to several terms keeps
// its best weight. Expansion terms record the query word they came from
// in From and their relation's strength (or similarity) in Strength. With
// both expansions off, q is returned as it is.
func (ix *Index) Expand(q []QueryTerm) []QueryTerm {
	alpha, beta := ix.opts.Expansion, ix.opts.Neighbours
	if ix.vec == nil {
		beta = 0
	}
	if (alpha <= 0 && beta <= 0) || len(q) == 0 {
		return q
	}
	var table *relatedWords
	if alpha > 0 {
		table, _ = loadRelated() // a table that fails to load only turns WordNet off
	}
	in := make(map[string]int, len(q)*4)
	for i, t := range q {
		in[t.Stem] = i
	}
	out := q[:len(q):len(q)]
	add := func(stem string, w, strength float64, from string) {
		if i, ok := in[stem]; ok {
			if out[i].From != "" && w > out[i].Weight {
				out[i].Weight, out[i].Strength, out[i].From = w, strength, from
			}
			return
		}
		in[stem] = len(out)
		out = append(out, QueryTerm{Stem: stem, Word: ix.words[stem], Weight: w, Strength: strength, From: from})
	}
	var near []neighbour
	lacking := 0
	for _, t := range q {
		if t.From != "" {
			continue
		}
		if table != nil {
			for _, r := range table.lookup(t.Stem) {
				if _, ok := ix.terms[r.Stem]; ok {
					add(r.Stem, alpha*r.Weight*t.Weight, r.Weight, t.Word)
				}
			}
		}
		if ix.vec != nil && ix.terms[t.Stem] == nil {
			// A compound the catalog lacks ("codebase"): its parts.
			for _, p := range ix.vec.splitCompound(t.Word) {
				if st := Stem(p); ix.terms[st] != nil && !stopWords[p] {
					add(st, compoundPartWeight*t.Weight, compoundPartWeight, t.Word)
				}
			}
		}
		if beta <= 0 || ix.terms[t.Stem] != nil || lacking == maxNeighbourWords {
			continue
		}
		lacking++
		near = ix.neighbours(t, near)
		for _, n := range near {
			add(n.stem, beta*n.sim*min(t.Weight, 1), n.sim, t.Word)
		}
	}
	return out
}
