package learn

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/rank"
	"github.com/capbroker/capbroker/store"
	"github.com/capbroker/capbroker/trace"
)

// Defaults of [Options].
const (
	// DefaultHalfLife is how long it takes a session's evidence to count
	// half.
	DefaultHalfLife = 30 * 24 * time.Hour
	// DefaultMaxPhrases is how many phrases a card keeps: its strongest.
	DefaultMaxPhrases = 8
	// DefaultMaxRecords is how many of the newest trace records Load reads.
	DefaultMaxRecords = 50_000
)

// MaxPhraseBytes bounds a phrase as kept and quoted in reasons: a longer
// task is cut at a word boundary and marked with "…".
const MaxPhraseBytes = 160

// minWeight is the faded evidence below which a phrase is dropped: about
// six half-lives.
const minWeight = 1.0 / 64

// Options tunes what is learnt. A nil *Options uses the defaults.
type Options struct {
	// HalfLife is the age at which a session's evidence counts half; it
	// halves again every HalfLife after. If zero, DefaultHalfLife;
	// negative: evidence never fades.
	HalfLife time.Duration
	// MaxPhrases caps the phrases kept per card, the strongest first. If
	// zero, DefaultMaxPhrases.
	MaxPhrases int
	// MaxRecords caps the trace records [Load] reads, the newest. If
	// zero, DefaultMaxRecords.
	MaxRecords int
	// Now is the time evidence is aged against. If zero, the time of the
	// call.
	Now time.Time
}

func (o *Options) resolved() Options {
	var r Options
	if o != nil {
		r = *o
	}
	if r.HalfLife == 0 {
		r.HalfLife = DefaultHalfLife
	}
	if r.MaxPhrases <= 0 {
		r.MaxPhrases = DefaultMaxPhrases
	}
	if r.MaxRecords <= 0 {
		r.MaxRecords = DefaultMaxRecords
	}
	if r.Now.IsZero() {
		r.Now = time.Now()
	}
	return r
}

// Traces is the part of a store Load reads.
type Traces interface {
	Traces(ctx context.Context, q *store.TraceQuery) ([]trace.Record, error)
}

// Load reads the newest trace records of st (at most Options.MaxRecords)
// and returns what they teach about cards (see [FromTraces]). An empty
// store teaches nothing and is not an error.
func Load(ctx context.Context, st Traces, cards []card.Card, opts *Options) (rank.Usage, error) {
	o := opts.resolved()
	recs, err := st.Traces(ctx, &store.TraceQuery{Limit: o.MaxRecords, Newest: true})
	if err != nil {
		return nil, fmt.Errorf("learning from use: %w", err)
	}
	return FromTraces(recs, cards, &o), nil
}

// FromTraces returns, for each of cards that past sessions called, the
// phrases they asked for before calling it: the session's task, and the
// find_capability queries that found the card. A session counts once per
// card and phrase however often it called the card; the same phrase in
// several sessions adds up, each session faded by the age of its last
// call of the card. Only calls that went through count (a call refused
// or over budget records a failure and is skipped), only cards the
// catalog still has, and only calls made of the card as it is now: a
// call recorded with another digest was of a card that changed since.
// Each card keeps its Options.MaxPhrases strongest phrases.
func FromTraces(recs []trace.Record, cards []card.Card, opts *Options) rank.Usage {
	o := opts.resolved()
	digest := make(map[string]string, len(cards))
	for i := range cards {
		digest[cards[i].Name] = cards[i].Digest
	}
	recs = slices.Clone(recs)
	slices.SortStableFunc(recs, func(a, b trace.Record) int {
		if c := strings.Compare(a.SessionID, b.SessionID); c != 0 {
			return c
		}
		if c := a.At.Compare(b.At); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	type key struct{ tool, phrase string }
	type evidence struct {
		phrase   string // as said, clipped
		sessions int
		weight   float64
		last     time.Time
	}
	agg := make(map[key]*evidence)
	var order []key // first-seen order, for a deterministic result
	// The current session's task, its finds, and the (tool, phrase)
	// pairs it has evidenced with the time of the last call.
	type find struct {
		query string
		found []string
	}
	var (
		sess  string
		task  string
		finds []find
		seen  = make(map[key]time.Time)
		said  = make(map[key]string)
	)
	flush := func() {
		for k, at := range seen {
			e := agg[k]
			if e == nil {
				e = &evidence{}
				agg[k] = e
				order = append(order, k)
			}
			e.sessions++
			e.weight += o.fade(at)
			if e.phrase == "" || at.After(e.last) {
				e.phrase, e.last = said[k], at
			}
		}
		clear(seen)
		clear(said)
		task, finds = "", finds[:0]
	}
	evidence1 := func(tool, phrase string, at time.Time) {
		norm := normalize(phrase)
		if norm == "" {
			return
		}
		k := key{tool, norm}
		if prev, ok := seen[k]; !ok || at.After(prev) {
			seen[k] = at
			said[k] = clip(strings.TrimSpace(phrase))
		}
	}
	for i := range recs {
		r := &recs[i]
		if r.SessionID == "" {
			continue // a one-off select or plan: nothing was called after it
		}
		if r.SessionID != sess {
			flush()
			sess = r.SessionID
		}
		if r.Task != "" && (r.Kind == trace.KindSelect || task == "") {
			task = r.Task
		}
		switch r.Kind {
		case trace.KindFind:
			if r.Query != "" && len(r.Found) > 0 {
				finds = append(finds, find{r.Query, r.Found})
			}
		case trace.KindCall:
			d, ok := digest[r.Tool]
			if !ok || r.Failed("") || (r.ToolDigest != "" && d != "" && r.ToolDigest != d) {
				continue
			}
			if task != "" {
				evidence1(r.Tool, task, r.At)
			}
			for _, f := range finds {
				if slices.Contains(f.found, r.Tool) {
					evidence1(r.Tool, f.query, r.At)
				}
			}
		}
	}
	flush()

	usage := make(rank.Usage)
	for _, k := range order {
		e := agg[k]
		if e.weight < minWeight {
			continue
		}
		usage[k.tool] = append(usage[k.tool], rank.Asked{Phrase: e.phrase, Sessions: e.sessions, Weight: e.weight})
	}
	for tool, asked := range usage {
		slices.SortStableFunc(asked, func(a, b rank.Asked) int {
			if c := cmp.Compare(b.Weight, a.Weight); c != 0 {
				return c
			}
			if c := cmp.Compare(b.Sessions, a.Sessions); c != 0 {
				return c
			}
			return strings.Compare(a.Phrase, b.Phrase)
		})
		if len(asked) > o.MaxPhrases {
			asked = slices.Clip(asked[:o.MaxPhrases])
		}
		usage[tool] = asked
	}
	return usage
}

// fade returns the weight of evidence from time at: 1 now (or in the
// future), halving every HalfLife.
func (o *Options) fade(at time.Time) float64 {
	if o.HalfLife < 0 {
		return 1
	}
	age := o.Now.Sub(at)
	if age <= 0 {
		return 1
	}
	return math.Exp2(-float64(age) / float64(o.HalfLife))
}

// normalize is the form phrases are compared in: lower case, runs of
// space and punctuation at the ends collapsed.
func normalize(s string) string {
	f := strings.FieldsFunc(strings.ToLower(s), unicode.IsSpace)
	out := strings.Join(f, " ")
	return strings.TrimFunc(out, func(r rune) bool { return unicode.IsPunct(r) || unicode.IsSpace(r) })
}

// clip cuts s to at most MaxPhraseBytes bytes, at the last space when
// there is one in the last half, and marks the cut with "…".
func clip(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= MaxPhraseBytes {
		return s
	}
	cut := MaxPhraseBytes - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	if sp := strings.LastIndexByte(s[:cut], ' '); sp >= cut/2 {
		cut = sp
	}
	return s[:cut] + "…"
}
