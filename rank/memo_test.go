package rank

import (
	"encoding/json"
	"github.com/capbroker/capbroker/internal/recent"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/examples"
	"github.com/capbroker/capbroker/internal/synth"
)

// memoCards are the example catalog (schemas, titles, compound names),
// synthetic cards, and cards that differ only in what the memo keys on.
func memoCards(t testing.TB) []card.Card {
	cards, err := examples.Cards()
	if err != nil {
		t.Fatal(err)
	}
	cards = append(cards, synth.Cards(300, 7)...)
	return append(cards,
		card.Card{Name: "codebase_search", Description: "Search the codebase.", Tags: []string{"code", "search"}},
		card.Card{Name: "codebase_search2", Description: "Search the codebase.", Tags: []string{"code search"}},
		card.Card{Name: "t", OriginalName: "weather_now", Meta: map[string]string{card.MetaTitle: "Current Weather"}},
		card.Card{Name: "s", InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string","enum":["Paris","Rome"]}}}`)},
		card.Card{Name: "s2", InputSchema: json.RawMessage(`{"type":"object","properties":{"town":{"type":"string","enum":["Paris","Rome"]}}}`)},
	)
}

// sameIndex fails unless a and b are the same index (but for the memo
// they were built with).
func sameIndex(t *testing.T, what string, a, b *Index) {
	t.Helper()
	a.opts.Memo, b.opts.Memo = nil, nil
	if !reflect.DeepEqual(a, b) {
		t.Errorf("%s: the index differs from one built without a memo", what)
	}
}

// TestMemo: an index built with a memo, cold (reading every card) or
// warm (from the file a previous "process" saved, reading none), is the
// very index built without one, and searches alike; with compounds split
// or not (the third stage off), each remembered apart; a changed card is
// read again.
func TestMemo(t *testing.T) {
	cards := memoCards(t)
	path := filepath.Join(t.TempDir(), "memo.bin")
	for _, opts := range []Options{{}, {Similar: -1, NameFit: -1}} {
		plain := New(cards, &opts)
		m, err := OpenMemo(path)
		if err != nil {
			t.Fatal(err)
		}
		o := opts
		o.Memo = m
		cold := New(cards, &o)
		sameIndex(t, "cold", plain, cold)
		if err := m.Save(); err != nil {
			t.Fatal(err)
		}
		m2, err := OpenMemo(path)
		if err != nil {
			t.Fatal(err)
		}
		o.Memo = m2
		warm := New(cards, &o)
		sameIndex(t, "warm", plain, warm)
		for _, q := range []string{"search the codebase", "weather in Paris", "create a github issue", "send an email to bob"} {
			if a, b := plain.Search(q, 10), warm.Search(q, 10); !reflect.DeepEqual(a, b) {
				t.Errorf("Search(%q): %v from the memo, %v without", q, b, a)
			}
		}
	}
	m, _ := OpenMemo(path)
	if n := m.Len(); n != 2*len(cards) { // each card with compounds split and without
		t.Errorf("the memo holds %d readings, want %d", n, 2*len(cards))
	}
	// A changed card is read again: its new words are indexed.
	changed := append([]card.Card(nil), cards...)
	changed[0].Description = "Zygomorphic florets of the asteraceae."
	o := Options{Memo: m}
	ix := New(changed, &o)
	if hits := ix.Search("zygomorphic florets", 3); len(hits) == 0 || hits[0].Name != changed[0].Name {
		t.Errorf("a changed card's new words were not indexed: %v", hits)
	}
	sameIndex(t, "changed", New(changed, nil), ix)
}

// TestMemoFiles: a memo file that is damaged, truncated or not a memo is
// reported with its path and started afresh (Save replaces it); a memo
// another program wrote is started afresh without a word; Save writes
// nothing when no card was added.
func TestMemoFiles(t *testing.T) {
	cards := synth.Cards(20, 1)
	dir := t.TempDir()
	good := filepath.Join(dir, "good.bin")
	m, _ := OpenMemo(good)
	New(cards, &Options{Memo: m})
	if err := m.Save(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(good)
	m, err = OpenMemo(good)
	if err != nil || m.Len() != 20 {
		t.Fatalf("reopened: %d cards, err %v", m.Len(), err)
	}
	New(cards, &Options{Memo: m})
	if err := m.Save(); err != nil {
		t.Fatal(err)
	}
	if st2, _ := os.Stat(good); !st2.ModTime().Equal(st.ModTime()) {
		t.Error("Save rewrote a memo to which nothing was added")
	}
	flip := append([]byte(nil), data...)
	flip[len(flip)-3] ^= 0x40
	for _, tt := range []struct{ name, text, want string }{
		{"damaged", string(flip), "checksum mismatch"},
		{"truncated", string(data[:len(data)-5]), "truncated"},
		{"other", "hello", "not a capbroker-rankmemo/2 file"},
	} {
		path := filepath.Join(dir, tt.name)
		os.WriteFile(path, []byte(tt.text), 0o600)
		m, err := OpenMemo(path)
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), path) || m.Len() != 0 {
			t.Errorf("%s: err %v, %d cards; want an empty memo and an error naming %s and saying %q", tt.name, err, m.Len(), path, tt.want)
			continue
		}
		New(cards, &Options{Memo: m})
		if err := m.Save(); err != nil {
			t.Fatal(err)
		}
		if m2, err := OpenMemo(path); err != nil || m2.Len() != 20 {
			t.Errorf("%s: not replaced: %d cards, err %v", tt.name, m2.Len(), err)
		}
	}
	// Another program's memo: empty, no error.
	m = &Memo{path: filepath.Join(dir, "other-program"), program: "another build 1 2", cards: recent.New[memoKey, *memoCard](0)}
	New(cards, &Options{Memo: m})
	if err := m.Save(); err != nil {
		t.Fatal(err)
	}
	if m2, err := OpenMemo(m.path); err != nil || m2.Len() != 0 {
		t.Errorf("another program's memo: %d cards, err %v; want 0, nil", m2.Len(), err)
	}
}

// BenchmarkNewMemo builds the index of 500 synthetic cards and the
// example catalog without a memo and from a warm one.
func BenchmarkNewMemo(b *testing.B) {
	cards := memoCards(b)
	b.Run("memo=none", func(b *testing.B) {
		for b.Loop() {
			New(cards, nil)
		}
	})
	m, _ := OpenMemo(filepath.Join(b.TempDir(), "m.bin"))
	New(cards, &Options{Memo: m})
	b.Run("memo=warm", func(b *testing.B) {
		for b.Loop() {
			New(cards, &Options{Memo: m})
		}
	})
}
