package rank

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/capbroker/capbroker/card"
)

// usageCards are two cards that say the same of themselves, so only usage
// tells them apart, and a third that no query here matches by its words.
func usageCards() []card.Card {
	return []card.Card{
		{Name: "alpha_run", Description: "Run a job."},
		{Name: "beta_run", Description: "Run a job."},
		{Name: "gamma", Description: "Print a greeting."},
	}
}

// What past sessions asked for before calling a card is a field of its
// own: it lifts the card they called over an equal one, and the hit says
// which phrase, in how many sessions.
func TestUsageField(t *testing.T) {
	usage := Usage{"beta_run": {{Phrase: "ship the build", Sessions: 3, Weight: 3}}}
	plain := New(usageCards(), nil).Search("run the job to ship the build", 10)
	if diff := cmp.Diff([]string{"alpha_run", "beta_run"}, hitNames(plain)); diff != "" {
		t.Fatalf("without usage (-want +got):\n%s", diff)
	}
	hits := New(usageCards(), &Options{Usage: usage}).Search("run the job to ship the build", 10)
	if diff := cmp.Diff([]string{"beta_run", "alpha_run"}, hitNames(hits)); diff != "" {
		t.Fatalf("with usage (-want +got):\n%s", diff)
	}
	want := &Asked{Phrase: "ship the build", Sessions: 3, Weight: 3}
	if diff := cmp.Diff(want, hits[0].Asked); diff != "" {
		t.Errorf("beta_run's Asked (-want +got):\n%s", diff)
	}
	if hits[1].Asked != nil {
		t.Errorf("alpha_run has no usage but Asked %+v", hits[1].Asked)
	}
	var inUsage []string
	for _, m := range hits[0].Matches {
		if slices.Contains(m.Fields, FieldUsage) {
			inUsage = append(inUsage, m.Term)
		}
	}
	if diff := cmp.Diff([]string{"ship", "build"}, inUsage); diff != "" {
		t.Errorf("terms matched in usage (-want +got):\n%s", diff)
	}
	if got := hits[0].Asked.String(); got != `asked for as "ship the build" in 3 past sessions` {
		t.Errorf("reason %q", got)
	}
	if got := (&Asked{Phrase: "x", Sessions: 1}).String(); got != `asked for as "x" in 1 past session` {
		t.Errorf("reason %q", got)
	}
}

// A card found by its usage alone scores what BM25F gives: IDF times the
// saturated frequency w × sessions / (k1 + w × sessions), where w, the
// field's weight for the card, grows with its evidence: Weight × e/(e +
// UsageEvidence), e the sessions. The field is not normalised by length
// (B 0; gamma alone has usage, so with the default B its length is the
// average and the norm 1 too). Precedents are off: they add to the
// first stage's score, not to a match's.
func TestUsageScoreByHand(t *testing.T) {
	for _, tt := range []struct {
		name   string
		weight float64 // the evidence: sessions, faded
		want   float64 // frequency in the field, after rounding to usageUnit
	}{
		{"one session", 1, 1},
		{"two sessions", 2, 2},
		{"one faded to half", 0.5, 0.5},
		{"faded below a unit counts one unit", 0.01, 1.0 / usageUnit},
		{"rounded to eighths", 0.3, 2.0 / usageUnit},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := &Options{Usage: Usage{"gamma": {{Phrase: "deploy", Sessions: 1, Weight: tt.weight}}}, Precedent: -1}
			o.Fields[FieldUsage] = FieldWeight{Weight: DefaultUsageWeight, B: 0}
			ix := New(usageCards(), o)
			hits := ix.SearchTerms([]QueryTerm{{Stem: "deploy", Word: "deploy", Weight: 1}}, 10)
			if len(hits) != 1 || hits[0].Name != "gamma" {
				t.Fatalf("hits %v, want gamma alone", hitNames(hits))
			}
			w := DefaultUsageWeight * tt.weight / (tt.weight + DefaultUsageEvidence)
			tf := w * tt.want
			want := logIDF(3, 1) * tf / (DefaultK1 + tf)
			if got := hits[0].Matches[0].Score; math.Abs(got-want) > 1e-6*want { // sat is kept as float32
				t.Errorf("first-stage score %v, want %v", got, want)
			}
			if f := hits[0].Matches[0].Fields; !cmp.Equal(f, []Field{FieldUsage}) {
				t.Errorf("matched in %v, want usage", f)
			}
		})
	}
}

// Evidence that is no evidence is ignored: a phrase of weight zero,
// negative, NaN or infinite, a phrase with no words, and usage of a name
// the catalog lacks (a card that was removed).
func TestUsageIgnored(t *testing.T) {
	usage := Usage{
		"gamma": {
			{Phrase: "deploy", Sessions: 1, Weight: 0},
			{Phrase: "deploy", Sessions: 1, Weight: -1},
			{Phrase: "deploy", Sessions: 1, Weight: math.NaN()},
			{Phrase: "deploy", Sessions: 1, Weight: math.Inf(1)},
			{Phrase: "the of and", Sessions: 1, Weight: 1},
		},
		"removed_tool": {{Phrase: "deploy", Sessions: 4, Weight: 4}},
	}
	ix := New(usageCards(), &Options{Usage: usage})
	if hits := ix.Search("deploy", 10); len(hits) != 0 {
		t.Errorf("hits %v, want none", hitNames(hits))
	}
	if slices.Contains(ix.Vocabulary(), "deploy") {
		t.Errorf("the vocabulary holds a word of ignored usage")
	}
	if len(ix.usage) != 0 {
		t.Errorf("usage kept for %d cards, want none", len(ix.usage))
	}
}

// A word repeated within a phrase counts once, and a phrase adds at most
// maxUsageWords words: a pasted document is not more evidence than a
// sentence.
func TestUsagePhraseCaps(t *testing.T) {
	once := New(usageCards(), &Options{Usage: Usage{"gamma": {{Phrase: "deploy", Sessions: 1, Weight: 1}}}})
	twice := New(usageCards(), &Options{Usage: Usage{"gamma": {{Phrase: "deploy deploy deploy", Sessions: 1, Weight: 1}}}})
	a, b := once.Search("deploy", 1), twice.Search("deploy", 1)
	if len(a) != 1 || len(b) != 1 || a[0].Score != b[0].Score {
		t.Errorf("repeated word: scores %v and %v, want equal", hitScores(a), hitScores(b))
	}
	var words []string
	for i := range maxUsageWords + 10 {
		words = append(words, "zq"+strings.Repeat("x", i%5)+string(rune('a'+i%26))+string(rune('a'+i/26)))
	}
	ix := New(usageCards(), &Options{Usage: Usage{"gamma": {{Phrase: strings.Join(words, " "), Sessions: 1, Weight: 1}}}})
	if got := ix.lens[2][FieldUsage]; got != maxUsageWords {
		t.Errorf("usage length %d, want %d", got, maxUsageWords)
	}
	if hits := ix.Search(words[len(words)-1], 10); len(hits) != 0 {
		t.Errorf("a word past the cap found %v", hitNames(hits))
	}
}

// The phrase a hit names is the one sharing the most of the query's
// matched words; between equals, the one asked in more sessions.
func TestUsageAskedPicksPhrase(t *testing.T) {
	usage := Usage{"gamma": {
		{Phrase: "deploy the site", Sessions: 1, Weight: 1},
		{Phrase: "deploy the site to staging", Sessions: 1, Weight: 1},
		{Phrase: "site deploy", Sessions: 5, Weight: 5},
	}}
	ix := New(usageCards(), &Options{Usage: usage})
	for _, tt := range []struct{ query, want string }{
		{"deploy to staging", "deploy the site to staging"},
		{"deploy the site", "site deploy"},
	} {
		hits := ix.Search(tt.query, 1)
		if len(hits) != 1 || hits[0].Asked == nil {
			t.Fatalf("%q: hits %+v, want gamma with a phrase", tt.query, hits)
		}
		if hits[0].Asked.Phrase != tt.want {
			t.Errorf("%q: phrase %q, want %q", tt.query, hits[0].Asked.Phrase, tt.want)
		}
	}
}

// Usage turned off (a zero weight field is the default; a caller turns
// usage off by passing none) leaves rankings exactly as without it.
func TestUsageNilIsPlain(t *testing.T) {
	a := New(usageCards(), nil).Search("run a job", 10)
	b := New(usageCards(), &Options{Usage: Usage{}}).Search("run a job", 10)
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("empty usage changed the ranking (-nil +empty):\n%s", diff)
	}
}

func hitScores(hits []Hit) []float64 {
	var out []float64
	for _, h := range hits {
		out = append(out, h.Score)
	}
	return out
}

// A query word is never expanded to its opposite: "write" does not reach
// a card that only reads, by WordNet or by word vectors.
func TestNoOppositeExpansion(t *testing.T) {
	if !opposite(Stem("write"), Stem("read")) || !opposite(Stem("read"), Stem("write")) || opposite(Stem("write"), Stem("compose")) {
		t.Fatal("opposite() does not hold read/write both ways, or holds a synonym")
	}
	cards := []card.Card{
		{Name: "reader", Description: "Read a text document."},
		{Name: "other", Description: "Compose and publish a letter."},
	}
	ix := New(cards, nil)
	for _, qt := range ix.Expand(ParseQuery("write it")) {
		if qt.Stem == Stem("read") {
			t.Errorf("write expanded to %+v", qt)
		}
	}
	// Everyday verbs of memory reach the words of memory tools.
	mem := New([]card.Card{{Name: "add_observations", Description: "Add new observations to entities in the knowledge graph memory."}}, nil)
	var got []string
	for _, qt := range mem.Expand(ParseQuery("remember this")) {
		if qt.From != "" {
			got = append(got, qt.Stem)
		}
	}
	if !slices.Contains(got, Stem("memory")) || !slices.Contains(got, Stem("observation")) {
		t.Errorf("remember expanded to %v, want memory and observation", got)
	}
}

// The usage field's weight grows with the card's evidence and is zero
// without it; a card with no usage ranks as if no card had any.
func TestUsageWeightGrowsWithEvidence(t *testing.T) {
	ix := New(usageCards(), &Options{Usage: Usage{"beta_run": {{Phrase: "ship it", Sessions: 1, Weight: 1}}}})
	prev := 0.0
	for _, e := range []float64{0, 0.5, 1, 4, 16, 256} {
		w := ix.usageWeight(e)
		if e == 0 && w != 0 {
			t.Errorf("no evidence: weight %v, want 0", w)
		}
		if e > 0 && !(w > prev) {
			t.Errorf("evidence %v: weight %v, not above %v", e, w, prev)
		}
		if w > DefaultUsageWeight {
			t.Errorf("evidence %v: weight %v above the field's %v", e, w, DefaultUsageWeight)
		}
		prev = w
	}
	plain := New(usageCards(), nil).Search("run the job", 10)
	with := ix.Search("run the job", 10)
	if diff := cmp.Diff(hitNames(plain), hitNames(with)); diff != "" {
		t.Errorf("a query no usage matches ranks otherwise (-without +with):\n%s", diff)
	}
	for i := range plain {
		if plain[i].Name == "alpha_run" && with[i].Score != plain[i].Score {
			t.Errorf("alpha_run, with no usage, scores %v, was %v", with[i].Score, plain[i].Score)
		}
	}
}

// A query that repeats a phrase past sessions asked before calling a card
// raises that card (a precedent), more with more evidence, and not at all
// with precedents off.
func TestPrecedent(t *testing.T) {
	cards := []card.Card{
		{Name: "a_report", Description: "Make a report of the numbers."},
		{Name: "b_report", Description: "Make a report of the numbers."},
	}
	query := "quarterly figures for the board"
	usage := func(w float64) Usage {
		return Usage{"b_report": {{Phrase: "quarterly figures for the board", Sessions: int(w), Weight: w}, {Phrase: "make a report", Sessions: 1, Weight: 1}}}
	}
	off := New(cards, &Options{Usage: usage(1), Precedent: -1}).Search(query+" report", 2)
	on := New(cards, &Options{Usage: usage(1)}).Search(query+" report", 2)
	more := New(cards, &Options{Usage: usage(8)}).Search(query+" report", 2)
	if len(on) != 2 || on[0].Name != "b_report" {
		t.Fatalf("with a precedent: %v, want b_report first", hitNames(on))
	}
	gap := func(h []Hit) float64 { return h[0].Score - h[1].Score }
	if !(gap(on) > gap(off)) || !(gap(more) > gap(on)) {
		t.Errorf("lead of b_report: off %v, on %v, more evidence %v; want it growing", gap(off), gap(on), gap(more))
	}
}
