package rank

import (
	"math"
	"slices"
	"strconv"
	"strings"
)

// Usage is what past sessions asked for before they called each card,
// keyed by card name: the evidence [FieldUsage] is made of. Package learn
// builds it from the traces of a store.
type Usage map[string][]Asked

// Asked is one phrase — a task or a find_capability query — that past
// sessions asked for before calling a card.
type Asked struct {
	// Phrase is the task or query as it was said.
	Phrase string `json:"phrase"`
	// Sessions is how many distinct past sessions asked for it.
	Sessions int `json:"sessions"`
	// Weight is the evidence: the sessions, each faded by its age. Each
	// of the phrase's words counts Weight times in the usage field (a
	// word repeated within the phrase once). A phrase of weight 0 or less
	// is ignored.
	Weight float64 `json:"weight,omitempty"`
}

// String says it as a reason: `asked for as "ship the build" in 3 past
// sessions`.
func (a *Asked) String() string {
	var b strings.Builder
	b.WriteString("asked for as ")
	b.WriteString(strconv.Quote(a.Phrase))
	b.WriteString(" in ")
	b.WriteString(strconv.Itoa(a.Sessions))
	if a.Sessions == 1 {
		b.WriteString(" past session")
	} else {
		b.WriteString(" past sessions")
	}
	return b.String()
}

// DefaultUsageWeight is the weight of [FieldUsage] for a card with much
// evidence: a card with evidence e gets e/(e+[DefaultUsageEvidence]) of
// it ([Options.UsageEvidence]), so the field weighs nothing for a card no
// past session called, little for one called once (0.067) and up to 0.2
// for one called often. With [DefaultUsageEvidence], [DefaultPrecedent]
// and 16 phrases a card (package learn), chosen by leave-one-dataset-out
// on the time split (capbroker eval --learn-split 0.5) over MetaTool
// single and multi, BFCL, Seal-Tools dev, examples/tasks.jsonl and the odd
// half of examples/heldout.jsonl: every held-out set gains with the
// parameters the other sets chose (docs/learning.md). A fixed weight, as
// before (0.05), had to stay low so that BFCL, whose cards were called
// once or twice, lost no more than 0.005.
const DefaultUsageWeight = 0.2

// DefaultUsageEvidence is the evidence (faded past sessions) at which a
// card's usage field weighs half of its weight ([Options.UsageEvidence]).
const DefaultUsageEvidence = 2.0

// usageUnit is the resolution of a usage frequency: a term's frequency in
// [FieldUsage] is kept, like the other fields', in a byte, counting
// 1/usageUnit of a session each, so a faded session still counts a
// fraction and up to 255/usageUnit sessions are told apart (BM25F's
// saturation makes more count for little).
const usageUnit = 8

// maxUsageWords bounds the words one phrase adds, so a task as long as
// a document adds no more than a short one.
const maxUsageWords = 32

// usagePhrase is one phrase of a card's usage, with its words as term
// ids, for explanations.
type usagePhrase struct {
	Asked
	terms []int32
}

// addUsage adds card d's usage phrases to the index: each distinct word
// of a phrase (at most maxUsageWords) counts the phrase's weight in
// FieldUsage. entry returns the term of a token and the card's
// frequencies of it.
func (ix *Index) addUsage(d int32, asked []Asked, stems wordTokens, entry func(Token) (*term, *termFreqs)) {
	var kept []usagePhrase
	for _, a := range asked {
		if !(a.Weight > 0) || math.IsInf(a.Weight, 0) {
			continue
		}
		units := math.Round(a.Weight * usageUnit)
		units = max(units, 1)
		p := usagePhrase{Asked: a}
		for _, tok := range tokens(a.Phrase, stems) {
			if len(p.terms) == maxUsageWords {
				break
			}
			t, tf := entry(tok)
			if slices.Contains(p.terms, t.id) {
				continue
			}
			p.terms = append(p.terms, t.id)
			tf[FieldUsage] = uint8(min(float64(tf[FieldUsage])+units, math.MaxUint8))
			if ix.lens[d][FieldUsage] < math.MaxUint16 {
				ix.lens[d][FieldUsage]++
			}
		}
		if len(p.terms) > 0 {
			kept = append(kept, p)
		}
	}
	if len(kept) == 0 {
		return
	}
	if ix.usage == nil {
		ix.usage = make(map[int32][]usagePhrase)
		ix.usageW = make([]float64, len(ix.names))
	}
	ix.usage[d] = kept
	ix.usageW[d] = ix.usageWeight(CardEvidence(asked))
}

// CardEvidence is how much past sessions say of a card: the sum of its
// phrases' weights (each the past sessions that asked it before calling
// the card, faded by their age and weighed by how the call ended; see
// package learn). Phrases of weight 0 or less, NaN or infinite add
// nothing.
func CardEvidence(asked []Asked) float64 {
	var e float64
	for _, a := range asked {
		if a.Weight > 0 && !math.IsInf(a.Weight, 0) {
			e += a.Weight
		}
	}
	return e
}

// usageWeight is the weight of FieldUsage for a card with evidence e:
// Fields[FieldUsage].Weight × e/(e+UsageEvidence), zero without evidence
// (or the full weight when UsageEvidence is negative).
func (ix *Index) usageWeight(e float64) float64 {
	return ix.opts.Fields[FieldUsage].Weight * evidenceShare(e, ix.opts.UsageEvidence)
}

// asked returns the past phrase of card doc that explains its usage
// matches best: the one holding the most of the query's weight among the
// matched terms found in the usage field, then the one asked in more
// sessions, then the first. Nil when no match was in the usage field.
func (ix *Index) asked(doc int32, matches []Match, q []QueryTerm, terms []*term) *Asked {
	phrases := ix.usage[doc]
	if len(phrases) == 0 {
		return nil
	}
	var ids []int32
	var ws []float64
	for _, m := range matches {
		if !slices.Contains(m.Fields, FieldUsage) {
			continue
		}
		for j, qt := range q {
			if qt.Word == m.Term && qt.From == m.Via && terms[j] != nil {
				ids = append(ids, terms[j].id)
				ws = append(ws, m.Score)
				break
			}
		}
	}
	if len(ids) == 0 {
		return nil
	}
	best, bestW := -1, 0.0
	for i, p := range phrases {
		var w float64
		for k, id := range ids {
			if slices.Contains(p.terms, id) {
				w += ws[k]
			}
		}
		if w == 0 {
			continue
		}
		if best < 0 || w > bestW || (w == bestW && p.Sessions > phrases[best].Sessions) {
			best, bestW = i, w
		}
	}
	if best < 0 {
		return nil
	}
	a := phrases[best].Asked
	return &a
}
