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
	FieldValues
	// FieldUsage holds the words of past tasks and finds that led to a
	// call of the card ([Options.Usage], usage.go).
	FieldUsage
	numFields
)

var fieldNames = [numFields]string{"name", "description", "params", "tags", "values", "usage"}

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
	// Substitution replaces Expansion for a query word the catalog lacks
	// ("remember" against tools that speak of memory): its related words
	// stand in for it, the only evidence it can have, so they count more
	// than beside a word that matches itself. If zero,
	// DefaultSubstitution; negative uses Expansion.
	Substitution float64
	// Rare multiplies the first-stage weight of a query word only one
	// card has and the word vectors do not know (see rarity). If zero,
	// DefaultRare; 1 or less turns it off.
	Rare float64
	// Coverage weighs the second-stage bonus for matching much of the
	// query: a card's score is multiplied by 1 + Coverage × the share of
	// the query's IDF weight it matches (its own words only, in any
	// field). If zero, DefaultCoverage; negative turns it off.
	Coverage float64
	// Phrase weighs the second-stage bonus for query words that stand
	// next to each other in the card's name or description as in the
	// query ("area under curve"): the score is multiplied by
	// 1 + Phrase × min(pairs, 3)/3. If zero, DefaultPhrase; negative
	// turns it off.
	Phrase float64
	// Rerank is how many of the best first-stage cards the second stage
	// rescores; they stay ahead of the rest. If zero, DefaultRerank.
	Rerank int
	// Similar weighs the third-stage bonus for meaning: a card's score is
	// multiplied by 1 + Similar × the share of the query's words that have
	// a word of like meaning (by GloVe vectors) in the card's name,
	// description or parameter names, + NameFit × the share of the card's
	// name words that have one in the query. If zero, DefaultSimilar;
	// negative turns it off.
	Similar float64
	// NameFit weighs the third-stage bonus for the card's name (see
	// Similar). If zero, DefaultNameFit; negative turns it off.
	NameFit float64
	// Neighbours weighs the words added to a query word the catalog lacks:
	// the catalog's words nearest to it in meaning by word vectors, each
	// counting Neighbours times its similarity. If zero,
	// DefaultNeighbours; negative turns them off (as does turning off
	// both Similar and NameFit, which loads no vectors).
	Neighbours float64
	// SimilarDepth is how many of the best second-stage cards the third
	// stage rescores. If zero, DefaultSimilarDepth.
	SimilarDepth int
	// ValueHint weighs the words a query's values imply ("date" for "on
	// March 5th", "url" for "https://…"; see [ValueKinds]). If zero,
	// DefaultValueHint; negative turns them off.
	ValueHint float64
	// Usage is what past sessions asked for before they called each card,
	// by card name: it fills [FieldUsage]. Names the catalog lacks are
	// ignored. Nil: no card has usage.
	Usage Usage
	// UsageEvidence is the evidence (faded past sessions, see
	// [CardEvidence]) at which a card's usage field weighs half of
	// Fields[FieldUsage].Weight: the field's weight for a card with
	// evidence e is Weight × e/(e+UsageEvidence), so it grows with what
	// past sessions said of that card and is zero without it. If zero,
	// DefaultUsageEvidence; negative: every card with usage gets the
	// full weight.
	UsageEvidence float64
	// Precedent weighs the past phrase most like the query (see
	// precedent.go): a card's first-stage score is raised by Precedent ×
	// its evidence share (as for the usage field) × the phrase's
	// likeness to the query × the query's best first-stage score. If
	// zero, DefaultPrecedent; negative turns it off.
	Precedent float64
	// Memo, if set, remembers how each card was read (its fields' words)
	// from one process to the next; see [Memo]. It changes nothing of
	// the index, only what building it costs. The caller saves it.
	Memo *Memo
}

// Defaults, chosen on the development benchmarks in ../shared/bench and
// kept general: names weigh most because a tool's name is its shortest
// summary, parameters least because their text repeats across tools.
const DefaultK1 = 1.2

// Defaults of the query expansion and the second stage, chosen on the
// development benchmarks (see doc.go).
const (
	DefaultExpansion    = 0.3
	DefaultSubstitution = 0.5
	DefaultRare         = 2.0
	DefaultCoverage     = 1.0
	DefaultPhrase       = 0.2
	DefaultRerank       = 20

	DefaultSimilar      = 3.0
	DefaultNameFit      = 1.5
	DefaultSimilarDepth = 15
	DefaultNeighbours   = 0.3
	DefaultValueHint    = 0.8
)

// DefaultFields are the default field weights.
var DefaultFields = [numFields]FieldWeight{
	FieldName:        {Weight: 3.0, B: 0.5},
	FieldDescription: {Weight: 1.0, B: 0.75},
	FieldParams:      {Weight: 0.4, B: 0.75},
	FieldTags:        {Weight: 1.5, B: 0.5},
	FieldValues:      {Weight: 1.2, B: 0},
	FieldUsage:       {Weight: DefaultUsageWeight, B: 0.75},
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
	if r.Rare == 0 {
		r.Rare = DefaultRare
	}
	if r.Substitution == 0 {
		r.Substitution = DefaultSubstitution
	}
	if r.Substitution < 0 {
		r.Substitution = r.Expansion
	}
	if r.Coverage == 0 {
		r.Coverage = DefaultCoverage
	}
	if r.Phrase == 0 {
		r.Phrase = DefaultPhrase
	}
	if r.Rerank <= 0 {
		r.Rerank = DefaultRerank
	}
	r.Similar = orDefault(r.Similar, DefaultSimilar)
	r.NameFit = orDefault(r.NameFit, DefaultNameFit)
	r.ValueHint = orDefault(r.ValueHint, DefaultValueHint)
	r.Neighbours = orDefault(r.Neighbours, DefaultNeighbours)
	if r.UsageEvidence == 0 {
		r.UsageEvidence = DefaultUsageEvidence
	}
	r.Precedent = orDefault(r.Precedent, DefaultPrecedent)
	if r.SimilarDepth <= 0 {
		r.SimilarDepth = DefaultSimilarDepth
	}
	for f := range r.Fields {
		if r.Fields[f] == (FieldWeight{}) {
			r.Fields[f] = DefaultFields[f]
		}
	}
	return r
}

// orDefault returns def for zero and 0 for a negative v (off).
func orDefault(v, def float64) float64 {
	switch {
	case v == 0:
		return def
	case v < 0:
		return 0
	}
	return v
}

// posting is one card's entry for one term: all a search's first stage
// reads, 8 bytes, so the postings of a term are read in few cache lines.
type posting struct {
	doc int32
	sat float32 // saturated BM25F term frequency, see Index.saturate
}

// termFreqs are one card's frequencies of one term, per field; only index
// building and explanations read them. A frequency is kept up to 255:
// past a few occurrences BM25F's saturation makes more count for almost
// nothing (with k1 1.2, 255 and 1,000 occurrences in a description of
// average length saturate to 0.995 and 0.999).
type termFreqs [numFields]uint8

// term is the index entry of one stem.
type term struct {
	id       int32
	idf      float64
	postings []posting
	freqs    []termFreqs // freqs[i] are postings[i]'s
}

// Index is an immutable BM25F index over cards. It is safe for concurrent
// searches.
type Index struct {
	opts   Options
	names  []string
	order  []int32             // each card's position in name order, to break ties
	lens   [][numFields]uint16 // field lengths per card, in tokens
	avgLen [numFields]float64
	terms  map[string]*term
	words  map[string]string // stem -> a surface word, for explanations
	// seq holds every card's name and description as term ids in text
	// order, each field followed by -1; card i's part is
	// seq[seqOff[i]:seqOff[i+1]]. The second stage reads it to find query
	// words that stand next to each other.
	seq    []int32
	seqOff []int32
	// vec is the word-vector table of the third stage (nil when it is
	// off), cardVec each card's words in it.
	vec     *wordVectors
	cardVec cardVectors
	// usage holds the past phrases of the cards that have them, for
	// explanations (usage.go).
	usage map[int32][]usagePhrase
	// usageW is each card's weight of FieldUsage, grown with its
	// evidence (usageWeight); nil when no card has usage.
	usageW []float64
	// past indexes the usage phrases one by one (precedent.go); nil
	// when no card has usage.
	past *precedents
	// overrides holds card.Meta[MetaOverride] of the cards that have it.
	overrides map[int32]string
}

// MetaOverride is the card.Meta key of a locally overridden description
// (package override sets it); a hit of such a card says so
// ([Hit.Override]).
const MetaOverride = "override"

// New indexes cards. The order of cards decides Hit.Index; names break ties.
func New(cards []card.Card, opts *Options) *Index {
	ix := &Index{
		opts:   opts.resolved(),
		names:  make([]string, len(cards)),
		lens:   make([][numFields]uint16, len(cards)),
		terms:  make(map[string]*term),
		words:  make(map[string]string),
		seqOff: make([]int32, len(cards)+1),
	}
	var total [numFields]float64
	// counts holds the current card's frequencies per term, in first-seen
	// order so that the index is built the same way every time.
	type count struct {
		t  *term
		tf termFreqs
	}
	var counts []count
	slot := make(map[*term]int)
	stems := make(wordTokens)
	if ix.opts.Similar > 0 || ix.opts.NameFit > 0 {
		// A table that fails to load only turns the third stage off; the
		// embedded table is checked by the package's tests.
		ix.vec, _ = loadVectors()
		ix.cardVec.off = append(make([]int32, 0, len(cards)+1), 0)
		ix.cardVec.slot = make(map[int32]int32)
	}
	var nameToks, descToks []Token
	for i := range cards {
		c := &cards[i]
		ix.names[i] = c.Name
		if o := c.Meta[MetaOverride]; o != "" {
			if ix.overrides == nil {
				ix.overrides = make(map[int32]string)
			}
			ix.overrides[int32(i)] = o
		}
		counts = counts[:0]
		clear(slot)
		// The fields' words: as the memo remembers them, else read (and
		// remembered).
		var (
			key     memoKey
			known   *[FieldUsage][]Token
			read    [FieldUsage][]Token
			texts   [numFields]string
			memoize = ix.opts.Memo != nil
		)
		if memoize {
			key = memoKeyOf(c, ix.vec != nil)
			known, _ = ix.opts.Memo.lookup(key)
		}
		if known == nil {
			texts = fieldTexts(c)
		}
		nameToks, descToks = nameToks[:0], descToks[:0]
		for f := range FieldUsage { // usage: weighted phrases, not text (see addUsage)
			var toks []Token
			if known != nil {
				toks = known[f]
			} else {
				toks = tokens(texts[f], stems)
				if f == FieldName && ix.vec != nil {
					toks = ix.vec.splitCompounds(toks, stems)
				}
				read[f] = toks
			}
			switch f {
			case FieldName:
				nameToks = append(nameToks, toks...)
			case FieldDescription:
				descToks = append(descToks, toks...)
			}
			for _, tok := range toks {
				t := ix.terms[tok.Stem]
				if t == nil {
					t = &term{id: int32(len(ix.terms))}
					ix.terms[tok.Stem] = t
					ix.words[tok.Stem] = tok.Word
				}
				if Field(f) <= FieldDescription {
					ix.seq = append(ix.seq, t.id)
				}
				j, ok := slot[t]
				if !ok {
					j = len(counts)
					slot[t] = j
					counts = append(counts, count{t: t})
				}
				if counts[j].tf[f] < math.MaxUint8 {
					counts[j].tf[f]++
				}
				if ix.lens[i][f] < math.MaxUint16 {
					ix.lens[i][f]++
				}
			}
			total[f] += float64(ix.lens[i][f])
			if Field(f) <= FieldDescription {
				ix.seq = append(ix.seq, -1)
			}
		}
		if memoize && known == nil {
			ix.opts.Memo.remember(key, &read)
		}
		if asked := ix.opts.Usage[c.Name]; len(asked) > 0 {
			ix.addUsage(int32(i), asked, stems, func(tok Token) (*term, *termFreqs) {
				t := ix.terms[tok.Stem]
				if t == nil {
					t = &term{id: int32(len(ix.terms))}
					ix.terms[tok.Stem] = t
					ix.words[tok.Stem] = tok.Word
				}
				j, ok := slot[t]
				if !ok {
					j = len(counts)
					slot[t] = j
					counts = append(counts, count{t: t})
				}
				return t, &counts[j].tf
			})
			total[FieldUsage] += float64(ix.lens[i][FieldUsage])
		}
		ix.seqOff[i+1] = int32(len(ix.seq))
		if ix.vec != nil {
			ix.cardVec.add(ix.vec, nameToks, descToks)
		}
		for _, c := range counts {
			c.t.postings = append(c.t.postings, posting{doc: int32(i)})
			c.t.freqs = append(c.t.freqs, c.tf)
		}
	}
	ix.cardVec.slot = nil
	ix.buildPrecedents()
	n := float64(len(cards))
	for f := range total {
		if n > 0 {
			ix.avgLen[f] = total[f] / n
		}
		if ix.avgLen[f] == 0 {
			ix.avgLen[f] = 1
		}
	}
	byName := make([]int32, len(cards))
	for i := range byName {
		byName[i] = int32(i)
	}
	sort.SliceStable(byName, func(a, b int) bool { return ix.names[byName[a]] < ix.names[byName[b]] })
	ix.order = make([]int32, len(cards))
	for pos, i := range byName {
		ix.order[i] = int32(pos)
	}
	for _, t := range ix.terms {
		t.idf = logIDF(n, float64(len(t.postings)))
		for i := range t.postings {
			p := &t.postings[i]
			p.sat = float32(ix.saturate(p.doc, &t.freqs[i]))
		}
	}
	return ix
}

// fieldTexts returns the text of each field of c.
func fieldTexts(c *card.Card) [numFields]string {
	var out [numFields]string
	name := c.Name
	if c.OriginalName != "" && c.OriginalName != c.Name {
		name += " " + c.OriginalName
	}
	if t := c.Meta[card.MetaTitle]; t != "" && !strings.EqualFold(t, c.Name) {
		name += " " + t
	}
	out[FieldName] = name
	out[FieldDescription] = c.Description
	out[FieldParams], out[FieldValues] = schemaTexts(c.InputSchema)
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
