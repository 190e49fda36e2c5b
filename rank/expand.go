package rank

import (
	"bufio"
	"bytes"
	"compress/gzip"
	_ "embed"
	"fmt"
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
	relatedTable map[string][]Related
	relatedErr   error
)

// RelatedTo returns the stems related to stem in the embedded WordNet
// table, strongest first (ties by stem), or nil if it has none. The table
// is loaded on first use.
func RelatedTo(stem string) []Related {
	t, err := loadRelated()
	if err != nil {
		return nil
	}
	return t[stem]
}

// loadRelated parses the embedded table once.
func loadRelated() (map[string][]Related, error) {
	relatedOnce.Do(func() {
		relatedTable, relatedErr = parseRelated(relatedGz)
	})
	return relatedTable, relatedErr
}

// parseRelated reads a gzip-compressed related-word table.
func parseRelated(gz []byte) (map[string][]Related, error) {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, fmt.Errorf("reading related words: %w", err)
	}
	t := make(map[string][]Related, 50000)
	sc := bufio.NewScanner(zr)
	line := 0
	for sc.Scan() {
		line++
		fs := strings.Fields(sc.Text())
		if len(fs) < 2 {
			return nil, fmt.Errorf("related words line %d: want a stem and at least one relation", line)
		}
		rs := make([]Related, 0, len(fs)-1)
		for _, f := range fs[1:] {
			s, w, ok := strings.Cut(f, ":")
			n, err := strconv.Atoi(w)
			if !ok || s == "" || err != nil || n < 1 || n > 10 {
				return nil, fmt.Errorf("related words line %d: bad relation %q (want stem:1..10)", line, f)
			}
			rs = append(rs, Related{Stem: s, Weight: float64(n) / 10})
		}
		t[fs[0]] = rs
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading related words: %w", err)
	}
	if err := zr.Close(); err != nil {
		return nil, fmt.Errorf("reading related words: %w", err)
	}
	return t, nil
}

// Expand adds to q the indexed stems related to its terms, each weighted
// by [Options.Expansion] times the relation's strength times the weight of
// the term it came from. A stem already in q is not added again; a stem
// related to several terms keeps its best weight. Expansion terms record
// the query word they came from in From. With expansion off, q is returned
// as it is.
func (ix *Index) Expand(q []QueryTerm) []QueryTerm {
	alpha := ix.opts.Expansion
	if alpha <= 0 || len(q) == 0 {
		return q
	}
	table, err := loadRelated()
	if err != nil {
		return q
	}
	in := make(map[string]int, len(q)*4)
	for i, t := range q {
		in[t.Stem] = i
	}
	out := q[:len(q):len(q)]
	for _, t := range q {
		if t.From != "" {
			continue
		}
		for _, r := range table[t.Stem] {
			if _, ok := ix.terms[r.Stem]; !ok {
				continue
			}
			w := alpha * r.Weight * t.Weight
			if i, ok := in[r.Stem]; ok {
				if out[i].From != "" && w > out[i].Weight {
					out[i].Weight = w
					out[i].From = t.Word
				}
				continue
			}
			in[r.Stem] = len(out)
			out = append(out, QueryTerm{Stem: r.Stem, Word: ix.words[r.Stem], Weight: w, From: t.Word})
		}
	}
	return out
}
