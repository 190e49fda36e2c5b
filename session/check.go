package session

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/policy"
	"github.com/capbroker/capbroker/rank"
)

// ErrNotExposed matches every [*NotExposedError], with errors.Is.
var ErrNotExposed = errors.New("tool not exposed")

// NotExposedError refuses a call to a tool the session does not expose.
// Its message is written for the model: it names find_capability and the
// closest names, so the model can recover in one step.
type NotExposedError struct {
	// Tool is the name called.
	Tool string
	// InCatalog is set when the catalog has the tool but the session does
	// not expose it: find_capability would expose it.
	InCatalog bool
	// Gone is set when the session exposes the name but the catalog no
	// longer has it (it was removed or renamed since the session started).
	Gone bool
	// Suggestions are the closest exposed or catalog names, best first.
	Suggestions []Suggestion
}

// Suggestion is a name close to one that was called.
type Suggestion struct {
	Name string `json:"name"`
	// Exposed is set when the session exposes it (callable now);
	// otherwise find_capability would expose it.
	Exposed bool `json:"exposed"`
	// Score is the similarity in [0,1].
	Score float64 `json:"score"`
}

func (e *NotExposedError) Error() string {
	var b strings.Builder
	tool := shorten(e.Tool)
	switch {
	case e.Gone:
		fmt.Fprintf(&b, "tool %q was exposed in this session but is no longer in the catalog (removed or renamed since the session started).", tool)
	case e.InCatalog:
		fmt.Fprintf(&b, "tool %q exists but is not exposed in this session.", tool)
	default:
		fmt.Fprintf(&b, "tool %q does not exist in this session's catalog.", tool)
	}
	var exposed, other []string
	for _, s := range e.Suggestions {
		if s.Exposed {
			exposed = append(exposed, s.Name)
		} else {
			other = append(other, s.Name)
		}
	}
	if len(exposed) > 0 {
		fmt.Fprintf(&b, " Exposed tools with a close name: %s.", strings.Join(exposed, ", "))
	}
	if len(other) > 0 {
		fmt.Fprintf(&b, " Not exposed, with a close name: %s.", strings.Join(other, ", "))
	}
	q := queryFor(tool)
	if e.InCatalog {
		fmt.Fprintf(&b, ` To use it, call %s with {"query": %q}; found tools become callable for the rest of the run.`, policy.HatchName, q)
	} else {
		fmt.Fprintf(&b, ` To find a tool that is not exposed, call %s with a plain description of what you need (for example {"query": %q}); found tools become callable for the rest of the run.`, policy.HatchName, q)
	}
	return b.String()
}

// shorten cuts a name past maxSuggestRunes runes for messages, marking
// the cut with "…" and the length it had.
func shorten(name string) string {
	if len(name) <= maxSuggestRunes {
		return name
	}
	n := 0
	for i := range name {
		if n == maxSuggestRunes {
			return fmt.Sprintf("%s… (%d bytes)", name[:i], len(name))
		}
		n++
	}
	return name
}

// Is makes errors.Is(err, ErrNotExposed) true.
func (e *NotExposedError) Is(target error) bool { return target == ErrNotExposed }

// queryFor turns a tool name into words for a find_capability query.
func queryFor(name string) string {
	return strings.Join(rank.Words(name), " ")
}

// CheckCall reports whether the session lets the model call name: nil
// for an exposed tool still in the catalog and for find_capability, else
// a *NotExposedError. It uses no iteration and records nothing (see
// [Session.Call]).
func (s *Session) CheckCall(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.check(name)
}

// check is CheckCall with s.mu held.
func (s *Session) check(name string) error {
	if name == policy.HatchName {
		return nil
	}
	cat := s.m.sel.Catalog()
	_, inCat := cat.Lookup(name)
	if slices.Contains(s.state.Exposed, name) {
		if inCat {
			return nil
		}
		return &NotExposedError{Tool: name, Gone: true, Suggestions: suggest(name, s.state.Exposed, cat, 3)}
	}
	return &NotExposedError{Tool: name, InCatalog: inCat, Suggestions: suggest(name, s.state.Exposed, cat, 3)}
}

// maxSuggestRunes is the longest name [suggest] looks for close names to.
const maxSuggestRunes = 256

// minSimilarity is the least similarity a suggestion needs.
const minSimilarity = 0.55

// suggestionSpread is how far below the best a suggestion may score.
const suggestionSpread = 0.2

// suggest returns up to n names close to name among the exposed ones
// (still in the catalog) and the catalog's, best first; an exposed name
// wins a tie.
//
// A name longer than maxSuggestRunes gets none: no tool name is that long
// (MCP caps them at 128 characters), so none would come close, and
// comparing it with every name would cost time in its length squared.
func suggest(name string, exposed []string, cat *card.Catalog, n int) []Suggestion {
	if len(name) > maxSuggestRunes && utf8.RuneCountInString(name) > maxSuggestRunes {
		return nil
	}
	isExposed := make(map[string]bool, len(exposed))
	for _, e := range exposed {
		if _, ok := cat.Lookup(e); ok {
			isExposed[e] = true
		}
	}
	words := rank.Words(name)
	var out []Suggestion
	consider := func(c string) {
		if c == name {
			return
		}
		if sc := similarity(name, words, c); sc >= minSimilarity {
			out = append(out, Suggestion{Name: c, Exposed: isExposed[c], Score: sc})
		}
	}
	for e := range isExposed {
		consider(e)
	}
	for _, c := range cat.Cards() {
		if !isExposed[c.Name] {
			consider(c.Name)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Score != b.Score {
			return a.Score > b.Score
		}
		if a.Exposed != b.Exposed {
			return a.Exposed
		}
		return a.Name < b.Name
	})
	// Keep only the close contenders of the best.
	for i := range out {
		if i == n || out[i].Score < out[0].Score-suggestionSpread {
			return out[:i]
		}
	}
	return out
}

// similarity scores two tool names in [0,1]: the better of their
// normalized edit distance and the overlap of their words, so
// "read_files", "readFile", "file_read" and "fs__read_file" all come
// close to "read_file".
func similarity(a string, aWords []string, b string) float64 {
	la, lb := strings.ToLower(a), strings.ToLower(b)
	ed := 1 - float64(card.EditDistance(la, lb))/float64(max(len([]rune(la)), len([]rune(lb)), 1))
	bWords := rank.Words(b)
	// A namespaced name ("github__create_issue") also counts by its tail.
	if _, tail, ok := strings.Cut(lb, card.Separator); ok {
		ed = max(ed, 1-float64(card.EditDistance(la, tail))/float64(max(len([]rune(la)), len([]rune(tail)), 1)))
	}
	return max(ed, overlap(aWords, bWords))
}

// overlap is the Dice coefficient of two word lists: the share of words
// of either list matched in the other. Words sharing a stem of four or
// more letters ("message"/"messages") match, and a short word matches the
// run of words it abbreviates ("pr" matches "pull", "request").
func overlap(a, b []string) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	matchedA, matchedB := 0, 0
	used := make([]bool, len(b))
	for _, x := range a {
		j := 0
		for j < len(b) && (used[j] || !sameWord(x, b[j])) {
			j++
		}
		if j < len(b) {
			used[j] = true
			matchedA++
			matchedB++
			continue
		}
		if n := abbreviates(x, b, used); n > 0 {
			matchedA++
			matchedB += n
		}
	}
	return float64(matchedA+matchedB) / float64(len(a)+len(b))
}

// abbreviates marks and counts the run of unused words of b whose
// initials spell x (two to four letters), or returns 0.
func abbreviates(x string, b []string, used []bool) int {
	n := len(x)
	if n < 2 || n > 4 {
		return 0
	}
	for i := 0; i+n <= len(b); i++ {
		ok := true
		for k := 0; k < n && ok; k++ {
			ok = !used[i+k] && b[i+k] != "" && b[i+k][0] == x[k]
		}
		if ok {
			for k := 0; k < n; k++ {
				used[i+k] = true
			}
			return n
		}
	}
	return 0
}

func sameWord(x, y string) bool {
	if x == y {
		return true
	}
	if len(x) > len(y) {
		x, y = y, x
	}
	return len(x) >= 4 && strings.HasPrefix(y, x) && len(y)-len(x) <= 3
}
