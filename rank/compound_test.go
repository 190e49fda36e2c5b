package rank

import (
	"testing"

	"github.com/capbroker/capbroker/card"
	"github.com/google/go-cmp/cmp"
)

func TestSplitCompound(t *testing.T) {
	vec, err := loadVectors()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		word string
		want []string
	}{
		{"geodistance", []string{"geo", "distance"}},
		{"websearch", []string{"web", "search"}},
		{"getweather", []string{"get", "weather"}},
		{"portfoliopilot", []string{"portfolio", "pilot"}},
		{"electromagnetism", []string{"electro", "magnetism"}},
		{"distance", nil},             // a word of the table
		{"qzxqzxqzx", nil},            // no split into known words
		{"geo_distance", nil},         // not all letters: split by Words already
		{"geodistance2", nil},         // not all letters
		{"webgeodistancesearch", nil}, // four parts
		{"webx", nil},                 // too short for two parts of three letters
		{"Geodistance", nil},          // upper case: words are lower-cased first
		{"searchsearchsearchsearchsearchsearchsearchsearchsearchsearchsearch", nil}, // too long
	} {
		if diff := cmp.Diff(tt.want, vec.splitCompound(tt.word)); diff != "" {
			t.Errorf("splitCompound(%q) (-want +got):\n%s", tt.word, diff)
		}
	}
}

// A task's word finds a tool whose name runs it together with another,
// and the match is explained in the name.
func TestCompoundNames(t *testing.T) {
	cards := []card.Card{
		{Name: "geodistance.find", Description: "Find how far apart two cities are."},
		{Name: "bus.find", Description: "Find a bus between two cities."},
	}
	ix := New(cards, nil)
	hits := ix.Search("distance from Paris to Rome", 10)
	if len(hits) == 0 || hits[0].Name != "geodistance.find" {
		t.Fatalf("hits %v, want geodistance.find first", hitNames(hits))
	}
	if m := hits[0].Matches[0]; m.Term != "distance" || !cmp.Equal(m.Fields, []Field{FieldName}) {
		t.Errorf("match %+v, want distance in name", m)
	}
	// Without the vector table (third stage off) names are not split.
	off := New(cards, &Options{Similar: -1, NameFit: -1})
	if hits := off.Search("distance from Paris to Rome", 10); len(hits) != 0 {
		t.Errorf("without vectors: hits %v, want none", hitNames(hits))
	}
}

// A task's compound word the catalog lacks is matched by its parts, at
// less weight, explained as coming from the word.
func TestCompoundTaskWords(t *testing.T) {
	cards := []card.Card{
		{Name: "search_code", Description: "Search source code in repositories."},
		{Name: "list_files", Description: "List files in a folder."},
	}
	ix := New(cards, nil)
	hits := ix.Search("where is deprecatedLogin used in the codebase", 10)
	if len(hits) == 0 || hits[0].Name != "search_code" {
		t.Fatalf("hits %v, want search_code first", hitNames(hits))
	}
	var m *Match
	for i := range hits[0].Matches {
		if hits[0].Matches[i].Term == "code" {
			m = &hits[0].Matches[i]
		}
	}
	if m == nil || m.Via != "codebase" {
		t.Fatalf("matches %+v, want code via codebase", hits[0].Matches)
	}
	q := ix.Expand(ParseQuery("codebase"))
	if len(q) != 2 || q[1].Stem != "code" || q[1].Weight != compoundPartWeight || q[1].Strength != compoundPartWeight {
		t.Errorf("Expand(codebase) = %+v, want code at the part weight", q)
	}
}
