package rank

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// quadraticValueSpans is valueSpans as it was before it became linear:
// each quote scanned ahead for its closer. The property test below holds
// the linear one to the same output.
func quadraticValueSpans(text string) []segment {
	var out []segment
	rs := []rune(text)
	isWord := func(i int) bool {
		return i >= 0 && i < len(rs) && (unicode.IsLetter(rs[i]) || unicode.IsDigit(rs[i]))
	}
	start := 0
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		end := -1
		switch {
		case r == 'h' && !isWord(i-1) && (strings.HasPrefix(string(rs[i:min(i+8, len(rs))]), "https://") || strings.HasPrefix(string(rs[i:min(i+7, len(rs))]), "http://")):
			end = i
			for end < len(rs) && !unicode.IsSpace(rs[end]) {
				end++
			}
			out = append(out, segment{text: string(rs[start:i])}, segment{text: string(rs[i:end]), value: true})
			start = end
			i = end - 1
			continue
		case r == '"' || r == '“' || r == '‘' || (r == '\'' && !isWord(i-1)):
			closer := map[rune]rune{'"': '"', '“': '”', '‘': '’', '\'': '\''}[r]
			for j := i + 1; j < len(rs); j++ {
				if rs[j] == closer && (closer == '"' || closer == '”' || !isWord(j+1)) {
					end = j
					break
				}
			}
		}
		if end < 0 || 2*(end-i) > len(rs) {
			continue
		}
		out = append(out, segment{text: string(rs[start:i])}, segment{text: string(rs[i+1 : end]), value: true})
		start = end + 1
		i = end
	}
	return append(out, segment{text: string(rs[start:])})
}

// TestValueSpansLinearMatchesQuadratic checks the linear valueSpans
// against the quadratic one it replaced, on random texts made of quotes,
// apostrophes, URLs and words: same segments, so ranking is unchanged.
func TestValueSpansLinearMatchesQuadratic(t *testing.T) {
	parts := []string{"'", "\"", "“", "”", "‘", "’", "a", "bc", " ", "it's", "http://x.y/z", "https://a", "h", "9", "é", ".", "'q'", "\"w e\""}
	r := rand.New(rand.NewPCG(1, 2))
	for n := range 20000 {
		var b strings.Builder
		for range r.IntN(24) {
			b.WriteString(parts[r.IntN(len(parts))])
		}
		text := b.String()
		if got, want := valueSpans(text), quadraticValueSpans(text); !slices.Equal(got, want) {
			t.Fatalf("text %d %q:\n got %+v\nwant %+v", n, text, got, want)
		}
	}
}

func TestClipQuery(t *testing.T) {
	words := strings.Repeat("word ", MaxQueryBytes) // longer than the limit
	for _, tc := range []struct {
		name, text string
	}{
		{"short", "open a pull request"},
		{"at the limit", strings.Repeat("a", MaxQueryBytes)},
		{"words past the limit", words},
		{"one long word", strings.Repeat("x", 3*MaxQueryBytes)},
		{"multi-byte runes", strings.Repeat("é", MaxQueryBytes)},
		{"CJK at the limit", "a" + strings.Repeat("漢", MaxQueryBytes)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ClipQuery(tc.text)
			switch {
			case len(tc.text) <= MaxQueryBytes && got != tc.text:
				t.Errorf("changed a query within the limit")
			case len(got) > MaxQueryBytes:
				t.Errorf("clipped to %d bytes, want at most %d", len(got), MaxQueryBytes)
			case !utf8.ValidString(got):
				t.Errorf("cut inside a rune")
			case !strings.HasPrefix(tc.text, got):
				t.Errorf("not a prefix")
			case len(tc.text) > MaxQueryBytes && len(got) < MaxQueryBytes*3/4:
				t.Errorf("clipped to %d bytes, too short", len(got))
			case len(tc.text) > MaxQueryBytes && strings.Contains(tc.text, " ") && strings.ContainsFunc(tc.text[len(got):len(got)+1], func(r rune) bool { return !unicode.IsSpace(r) }):
				t.Errorf("cut inside a word: ...%q|%q", got[len(got)-5:], tc.text[len(got):len(got)+5])
			}
		})
	}
}

// TestSearchCostBounded checks that a query far past MaxQueryBytes ranks
// as its first MaxQueryBytes do: what lies past the limit is not read.
func TestSearchCostBounded(t *testing.T) {
	ix := New(testCards(), nil)
	head := strings.Repeat("read the file and search github issues ", MaxQueryBytes/40)
	long := head + strings.Repeat("'deploy kubernetes pods ", 1<<15)
	got, want := ix.Search(long, 10), ix.Search(ClipQuery(long), 10)
	if len(got) == 0 || !slices.EqualFunc(got, want, func(a, b Hit) bool { return a.Name == b.Name && a.Score == b.Score }) {
		t.Errorf("a long query ranks %v, its clipped head %v", hitNames(got), hitNames(want))
	}
}

// TestRankStopsWhenContextDone checks that a request whose client left
// is not ranked.
func TestRankStopsWhenContextDone(t *testing.T) {
	ix := New(testCards(), nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if hits, err := ix.Rank(ctx, "read a file", 5); err == nil || hits != nil {
		t.Errorf("Rank with a done context = %v, %v; want no hits and the context's error", hits, err)
	}
	if hits, err := ix.Rank(context.Background(), "read a file", 5); err != nil || len(hits) == 0 {
		t.Errorf("Rank = %v, %v", hits, err)
	}
}
