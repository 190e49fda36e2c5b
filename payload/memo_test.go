package payload

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tiktoken-go/tokenizer"
)

// memoTexts are texts whose counts the memo tests compare: rendered
// definitions, plain text, invalid UTF-8, the empty string.
var memoTexts = []string{
	`[{"type":"function","function":{"name":"read_file","description":"Read a file.","parameters":{"type":"object","properties":{"path":{"type":"string"}}}}}]`,
	"post the release notes to slack",
	"caf\xe9 \xff bytes",
	"",
	strings.Repeat("tokens ", 500),
}

// TestCountMemo: a counter with a memo counts what one without counts,
// the first time and again from the file in a later "process" (a new
// memo read from the same path), where it never loads the vocabulary.
func TestCountMemo(t *testing.T) {
	for _, enc := range []Encoding{O200k, CL100k} {
		t.Run(string(enc), func(t *testing.T) {
			plain, err := NewCounter(enc)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "tokens.bin")
			memo, err := OpenCountMemo(path, enc)
			if err != nil {
				t.Fatalf("a missing file: %v", err)
			}
			c, err := plain.WithMemo(memo)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]int{}
			for _, s := range memoTexts {
				want[s] = plain.Count(s)
				if got := c.Count(s); got != want[s] {
					t.Errorf("Count(%.30q) with a memo = %d, without = %d", s, got, want[s])
				}
			}
			if err := memo.Save(); err != nil {
				t.Fatal(err)
			}
			// A later process: the counts come from the file, and the
			// vocabulary is not loaded.
			memo2, err := OpenCountMemo(path, enc)
			if err != nil {
				t.Fatal(err)
			}
			if memo2.Len() != len(memoTexts) {
				t.Errorf("the file holds %d counts, want %d", memo2.Len(), len(memoTexts))
			}
			noVocab := &Counter{enc: enc, codec: func() tokenizer.Codec {
				t.Fatal("the vocabulary was loaded for a text the memo holds")
				return nil
			}}
			c2, err := noVocab.WithMemo(memo2)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range memoTexts {
				if got := c2.Count(s); got != want[s] {
					t.Errorf("Count(%.30q) from the file = %d, want %d", s, got, want[s])
				}
			}
			// Nothing was added: Save leaves the file alone.
			st, _ := os.Stat(path)
			os.Chtimes(path, st.ModTime().Add(-time.Hour), st.ModTime().Add(-time.Hour))
			st, _ = os.Stat(path)
			if err := memo2.Save(); err != nil {
				t.Fatal(err)
			}
			if st2, _ := os.Stat(path); !st2.ModTime().Equal(st.ModTime()) {
				t.Error("Save rewrote a file to which nothing was added")
			}
		})
	}
}

// TestCountMemoBad: a memo of another vocabulary is refused by the
// counter; a file that is not a memo of the vocabulary, or is truncated,
// gives an empty memo and an error naming the file and the problem, and
// Save replaces it.
func TestCountMemoBad(t *testing.T) {
	o200k, _ := NewCounter(O200k)
	dir := t.TempDir()
	other, err := OpenCountMemo(filepath.Join(dir, "cl.bin"), CL100k)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := o200k.WithMemo(other); err == nil || !strings.Contains(err.Error(), "cl100k cannot serve a o200k counter") {
		t.Errorf("WithMemo(a cl100k memo) on o200k: err = %v", err)
	}
	good := filepath.Join(dir, "good.bin")
	m, _ := OpenCountMemo(good, O200k)
	c, _ := o200k.WithMemo(m)
	c.Count("one text")
	if err := m.Save(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, text, enc, want string
	}{
		{"other vocabulary", string(data), "cl100k", `header "capbroker-tokens/1 o200k", want "capbroker-tokens/1 cl100k\n"`},
		{"not a memo", "hello\n", "o200k", `header "hello", want`},
		{"truncated", string(data[:len(data)-3]), "o200k", "17 bytes of records, not a multiple of 20"},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "-"))
		os.WriteFile(path, []byte(tt.text), 0o644)
		m, err := OpenCountMemo(path, Encoding(tt.enc))
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: err = %v, want it to name %s and say %q", tt.name, err, path, tt.want)
			continue
		}
		if m == nil || m.Len() != 0 {
			t.Fatalf("%s: want an empty memo", tt.name)
		}
		counter, _ := NewCounter(Encoding(tt.enc))
		c, _ := counter.WithMemo(m)
		c.Count("again")
		if err := m.Save(); err != nil {
			t.Fatal(err)
		}
		if m2, err := OpenCountMemo(path, Encoding(tt.enc)); err != nil || m2.Len() != 1 {
			t.Errorf("%s: after Save: %d counts, err %v; want 1, nil", tt.name, m2.Len(), err)
		}
	}
}

// TestCountMemoOtherBuild: counts another build of the program saved
// are not read (that build may count otherwise): the memo starts empty,
// without an error.
func TestCountMemoOtherBuild(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens.bin")
	other, _ := OpenCountMemo(path, O200k)
	other.program = "/elsewhere/capbroker 1 2"
	other.remember(memoKeyOf("text"), 3)
	if err := other.Save(); err != nil {
		t.Fatal(err)
	}
	m, err := OpenCountMemo(path, O200k)
	if err != nil || m.Len() != 0 {
		t.Errorf("another build's memo: %d counts, err %v; want 0, nil", m.Len(), err)
	}
}

// TestCountMemoBound: the file keeps the most recently used
// MaxMemoCounts counts; the ones this process used survive, the oldest
// unused go.
func TestCountMemoBound(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens.bin")
	m, _ := OpenCountMemo(path, O200k)
	for i := range MaxMemoCounts {
		m.remember(memoKeyOf(strconv.Itoa(i)), i)
	}
	if err := m.Save(); err != nil {
		t.Fatal(err)
	}
	m, _ = OpenCountMemo(path, O200k)
	if _, ok := m.lookup(memoKeyOf("0")); !ok {
		t.Fatal("the oldest count is missing before the bound is reached")
	}
	m.remember(memoKeyOf("new"), 7)
	if err := m.Save(); err != nil {
		t.Fatal(err)
	}
	m, _ = OpenCountMemo(path, O200k)
	if m.Len() != MaxMemoCounts {
		t.Errorf("%d counts kept, want %d", m.Len(), MaxMemoCounts)
	}
	for _, tt := range []struct {
		text string
		want bool
	}{
		{"0", true},   // used by the second process
		{"new", true}, // added by it
		{"1", false},  // the oldest unused
		{"2", true},
	} {
		if _, ok := m.lookup(memoKeyOf(tt.text)); ok != tt.want {
			t.Errorf("%q kept: %v, want %v", tt.text, ok, tt.want)
		}
	}
}

// BenchmarkCountCatalog counts a catalog's worth of rendered definitions
// (500 texts of about 100 tokens) the way a one-shot command does: with
// no memo (the vocabulary already loaded), and from a warm memo.
func BenchmarkCountCatalog(b *testing.B) {
	texts := make([]string, 500)
	for i := range texts {
		texts[i] = strings.Repeat(memoTexts[0], 3) + string(rune('a'+i%26)) + strings.Repeat("x", i)
	}
	plain, _ := NewCounter(O200k)
	plain.Count("load the vocabulary")
	b.Run("memo=none", func(b *testing.B) {
		for b.Loop() {
			for _, s := range texts {
				plain.Count(s)
			}
		}
	})
	m, _ := OpenCountMemo(filepath.Join(b.TempDir(), "t.bin"), O200k)
	c, _ := plain.WithMemo(m)
	for _, s := range texts {
		c.Count(s)
	}
	b.Run("memo=warm", func(b *testing.B) {
		for b.Loop() {
			for _, s := range texts {
				c.Count(s)
			}
		}
	})
}
