package rank

import (
	"math"
	"sort"
	"strings"

	"github.com/capbroker/capbroker/card"
)

// Field is one indexed part of a card.
type Field int

// The indexed fields.
const (
	FieldName Field = iota
	FieldDescription
	FieldParams
	FieldTags
	numFields
)

var fieldNames = [numFields]string{"name", "description", "params", "tags"}

func (f Field) String() string {
	if f < 0 || f >= numFields {
		return "unknown"
	}
	return fieldNames[f]
}

// MarshalText writes the field's name.
func (f Field) MarshalText() ([]byte, error) { return []byte(f.String()), nil }

// FieldParams holds the BM25F weight and length normalisation of a field.
type FieldWeight struct {
	// Weight multiplies the field's term frequency.
	Weight float64
	// B is the length normalisation in [0,1]: 0 ignores the field's length,
	// 1 divides fully by its length relative to the average.
	B float64
}

// Options tunes an index. A nil *Options uses the defaults.
type Options struct {
	// K1 saturates term frequency. If zero, DefaultK1.
	K1 float64
	// Fields gives each field's weight and normalisation. A zero entry
	// uses the default for that field (see DefaultFields).
	Fields [numFields]FieldWeight
	// Expansion weighs the related words (from WordNet, see [RelatedTo])
	// added to each query word: a related word counts Expansion times the
	// relation's strength. If zero, DefaultExpansion; negative turns
	// expansion off.
	Expansion float64
}

// Defaults, chosen on the development benchmarks in ../shared/bench and
// kept general: names weigh most because a tool's name is its shortest
// summary, parameters least because their text repeats across tools.
const DefaultK1 = 1.2

// DefaultExpansion is the default weight of query expansion terms.
const DefaultExpansion = 0.3

// DefaultFields are the default field weights.
var DefaultFields = [numFields]FieldWeight{
	FieldName:        {Weight: 3.0, B: 0.5},
	FieldDescription: {Weight: 1.0, B: 0.75},
	FieldParams:      {Weight: 0.4, B: 0.75},
	FieldTags:        {Weight: 1.5, B: 0.5},
}

func (o *Options) resolved() Options {
	var r Options
	if o != nil {
		r = *o
	}
	if r.K1 == 0 {
		r.K1 = DefaultK1
	}
	if r.Expansion == 0 {
		r.Expansion = DefaultExpansion
	}
	for f := range r.Fields {
		if r.Fields[f] == (FieldWeight{}) {
			r.Fields[f] = DefaultFields[f]
		}
	}
	return r
}

// posting is one card's frequencies of one term.
type posting struct {
	doc int32
	tf  [numFields]uint16
}

// term is the index entry of one stem.
type term struct {
	idf      float64
	postings []posting
}

// Index is an immutable BM25F index over cards. It is safe for concurrent
// searches.
type Index struct {
	opts   Options
	names  []string
	lens   [][numFields]uint16 // field lengths per card, in tokens
	avgLen [numFields]float64
	terms  map[string]*term
	words  map[string]string // stem -> a surface word, for explanations
}

// New indexes cards. The order of cards decides Hit.Index; names break ties.
func New(cards []card.Card, opts *Options) *Index {
	ix := &Index{
		opts:  opts.resolved(),
		names: make([]string, len(cards)),
		lens:  make([][numFields]uint16, len(cards)),
		terms: make(map[string]*term),
		words: make(map[string]string),
	}
	var total [numFields]float64
	counts := make(map[string]*[numFields]uint16)
	for i := range cards {
		c := &cards[i]
		ix.names[i] = c.Name
		clear(counts)
		for f, text := range fieldTexts(c) {
			for _, t := range Tokens(text) {
				n := counts[t.Stem]
				if n == nil {
					n = new([numFields]uint16)
					counts[t.Stem] = n
				}
				if n[f] < math.MaxUint16 {
					n[f]++
				}
				if ix.lens[i][f] < math.MaxUint16 {
					ix.lens[i][f]++
				}
				if _, ok := ix.words[t.Stem]; !ok {
					ix.words[t.Stem] = t.Word
				}
			}
			total[f] += float64(ix.lens[i][f])
		}
		for stem, n := range counts {
			t := ix.terms[stem]
			if t == nil {
				t = &term{}
				ix.terms[stem] = t
			}
			t.postings = append(t.postings, posting{doc: int32(i), tf: *n})
		}
	}
	n := float64(len(cards))
	for f := range total {
		if n > 0 {
			ix.avgLen[f] = total[f] / n
		}
		if ix.avgLen[f] == 0 {
			ix.avgLen[f] = 1
		}
	}
	for _, t := range ix.terms {
		t.idf = logIDF(n, float64(len(t.postings)))
	}
	return ix
}

// fieldTexts returns the text of each field of c.
func fieldTexts(c *card.Card) [numFields]string {
	var out [numFields]string
	name := c.Name
	if c.OriginalName != "" && c.OriginalName != c.Name {
		name = c.Name + " " + c.OriginalName
	}
	out[FieldName] = name
	out[FieldDescription] = c.Description
	out[FieldParams] = schemaText(c.InputSchema)
	out[FieldTags] = strings.Join(c.Tags, " ")
	return out
}

// Len returns the number of indexed cards.
func (ix *Index) Len() int { return len(ix.names) }

// Terms returns the number of distinct stems in the index.
func (ix *Index) Terms() int { return len(ix.terms) }

// Vocabulary returns the indexed stems in order, for diagnostics.
func (ix *Index) Vocabulary() []string {
	v := make([]string, 0, len(ix.terms))
	for s := range ix.terms {
		v = append(v, s)
	}
	sort.Strings(v)
	return v
}

// logIDF is the BM25 inverse document frequency of a term found in df of n
// cards; it is always positive.
func logIDF(n, df float64) float64 {
	return math.Log(1 + (n-df+0.5)/(df+0.5))
}
