package rank

import (
	"math"
	"slices"
	"testing"

	"github.com/capbroker/capbroker/card"
)

// Irregular past forms meet their verb, and the verb "found" no longer
// meets "found" of find: "who founded Nvidia" does not match a card that
// lists the problems it found.
func TestIrregularPast(t *testing.T) {
	for w, want := range map[string]string{"found": Stem("find"), "wrote": Stem("write"), "told": Stem("tell"), "founded": "found", "finds": Stem("find")} {
		if got := Stem(w); got != want {
			t.Errorf("Stem(%q) = %q, want %q", w, got, want)
		}
	}
	cards := []card.Card{
		{Name: "lint_code", Description: "Run the linters and list the problems found."},
		{Name: "company_info", Description: "Who founded a company, when, and where it is based."},
	}
	hits := New(cards, nil).Search("who founded Nvidia", 10)
	if len(hits) == 0 || hits[0].Name != "company_info" || slices.ContainsFunc(hits, func(h Hit) bool { return h.Name == "lint_code" }) {
		t.Errorf("who founded Nvidia: %v, want company_info alone", hitNames(hits))
	}
}

// weights returns the query weight of each stem of text.
func weights(text string) map[string]float64 {
	m := map[string]float64{}
	for _, qt := range ParseQuery(text) {
		m[qt.Stem] = qt.Weight
	}
	return m
}

// What a verb of memory takes is the data a tool stores or looks for,
// not the capability: the clause after "remember that" or "recall who"
// weighs as a value, up to the end of its sentence or clause.
func TestMemoryClauseIsValue(t *testing.T) {
	for _, tt := range []struct {
		task        string
		full, value []string
	}{
		{"remember that Alice leads project X", []string{"remember"}, []string{"alice", "lead", "project"}},
		{"Recall who leads project X", []string{"recal"}, []string{"lead", "project"}},
		{"forget what I said about the budget, then list the files", []string{"forget", "list", "file"}, []string{"said", "budget"}},
		{"who leads project X", []string{"lead", "project"}, nil},
		{"remember the milk", []string{"remember", "milk"}, nil},
		{"I can't remember where the config lives: search the repo", []string{"remember", "search", "repo"}, []string{"config", "live"}},
	} {
		w := weights(tt.task)
		for _, s := range tt.full {
			if w[Stem(s)] != 1 {
				t.Errorf("%q: %s weighs %v, want 1 (%v)", tt.task, s, w[Stem(s)], w)
			}
		}
		for _, s := range tt.value {
			if w[Stem(s)] != valueWeight {
				t.Errorf("%q: %s weighs %v, want %v as a value (%v)", tt.task, s, w[Stem(s)], valueWeight, w)
			}
		}
	}
}

// "look up" is one verb, a lookup, which finds what searches; "look"
// alone (to seem) is not expanded.
func TestLookUp(t *testing.T) {
	for _, task := range []string{"look up the latest news", "Looking up the news", "she looked up the news"} {
		if w := weights(task); w["lookup"] != 1 || w[Stem("look")] != 0 {
			t.Errorf("%q: weights %v, want lookup and no look", task, w)
		}
	}
	if w := weights("how's CPU looked on the prod box"); w["lookup"] != 0 || w[Stem("look")] != 1 {
		t.Errorf("looked (seemed): weights %v", w)
	}
	cards := []card.Card{
		{Name: "news_search", Description: "Search recent news articles."},
		{Name: "cpu_metrics", Description: "CPU metrics of a server over a time range."},
	}
	hits := New(cards, nil).Search("look up the news", 10)
	if len(hits) == 0 || hits[0].Name != "news_search" {
		t.Errorf("look up the news: %v, want news_search first", hitNames(hits))
	}
	for _, h := range New(cards, nil).Search("how's CPU looked over the last day", 10) {
		for _, m := range h.Matches {
			if m.Via != "" && (m.Term == "search" || m.Term == "find") {
				t.Errorf("looked (seemed) expanded to %q in %s", m.Term, h.Name)
			}
		}
	}
}

// The related words of a query word the catalog lacks stand in for it at
// Substitution; those of a word it has add to it at Expansion.
func TestSubstitution(t *testing.T) {
	ix := New([]card.Card{
		{Name: "add_observations", Description: "Add observations to the knowledge graph memory."},
		{Name: "remember_me", Description: "Keep a login session: remember the user's knowledge of a password."},
	}, nil)
	lacks := New([]card.Card{{Name: "add_observations", Description: "Add observations to the knowledge graph memory."}}, nil)
	weightOf := func(ix *Index, stem string) float64 {
		for _, qt := range ix.Expand(ParseQuery("remember this")) {
			if qt.Stem == stem && qt.From != "" {
				return qt.Weight
			}
		}
		return 0
	}
	strength := 0.0
	for _, r := range everydayRelated(Stem("remember")) {
		if r.Stem == Stem("knowledge") {
			strength = r.Weight
		}
	}
	if got, want := weightOf(lacks, Stem("knowledge")), DefaultSubstitution*strength; math.Abs(got-want) > 1e-9 {
		t.Errorf("catalog lacks remember: knowledge weighs %v, want %v", got, want)
	}
	if got, want := weightOf(ix, Stem("knowledge")), DefaultExpansion*strength; math.Abs(got-want) > 1e-9 {
		t.Errorf("catalog has remember: knowledge weighs %v, want %v", got, want)
	}
}

// A name of short parts joined by an ampersand is also one word: "H&M"
// in a task matches the card that names H&M, not only cards with an "m".
func TestAmpersandName(t *testing.T) {
	var got []string
	for _, tok := range Tokens("coupons for H&M and AT&T") {
		got = append(got, tok.Stem)
	}
	for _, w := range []string{"hm", "att"} {
		if !slices.Contains(got, w) {
			t.Errorf("Tokens: %v lack %q", got, w)
		}
	}
	cards := []card.Card{
		{Name: "store_coupons", Description: "Coupon codes for H&M, Zara and Uniqlo."},
		{Name: "mail_merge", Description: "Merge a mail template with M fields and coupons."},
	}
	hits := New(cards, nil).Search("any coupon codes for H&M?", 10)
	if len(hits) == 0 || hits[0].Name != "store_coupons" {
		t.Errorf("H&M: %v, want store_coupons first", hitNames(hits))
	}
}

// A word only one card has, that the word vectors do not know, says which
// tool is meant more surely than two generic words a name shares with the
// task: "homestays" finds the Airbnb search before find_free_time.
func TestRareWord(t *testing.T) {
	cards := []card.Card{
		{Name: "find_free_time", Description: "Find free time slots shared by several people's calendars for a meeting next week or weekend."},
		{Name: "airbnb_search", Description: "Search for Airbnb listings with various filters and pagination. Provide direct links to the user. Covers homestays."},
		{Name: "datum_conversion", Description: "Convert coordinates between geodetic datums such as WGS84 and NAD83."},
		{Name: "geocode_address", Description: "Convert a street address into coordinates, and coordinates into an address."},
	}
	for _, w := range []string{"email", "calendar", "weather", "news", "file", "folder", "issue", "branch", "invoice", "payment",
		"ticket", "song", "movie", "recipe", "flight", "hotel", "stock", "tweet"} {
		cards = append(cards, card.Card{Name: "get_" + w, Description: "Find and get a " + w + " for the user, next or previous."})
	}
	if n := len(cards); n < rareMinCards {
		t.Fatalf("%d cards, want %d", n, rareMinCards)
	}
	for _, tt := range []struct {
		task, want, off string
	}{
		{"find homestays in Lisbon for next weekend", "airbnb_search", "find_free_time"},
	} {
		if hits := New(cards, nil).Search(tt.task, 5); len(hits) == 0 || hits[0].Name != tt.want {
			t.Errorf("%q: %v, want %s first", tt.task, hitNames(hits), tt.want)
		}
		if hits := New(cards, &Options{Rare: 1}).Search(tt.task, 5); len(hits) == 0 || hits[0].Name != tt.off {
			t.Errorf("%q without rarity: %v, want %s first (the test no longer shows the miss)", tt.task, hitNames(hits), tt.off)
		}
	}
}
