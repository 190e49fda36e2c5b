package route

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/capbroker/capbroker/rank"
)

// The scoring rules. A keyword counts once per text, however often it occurs.
const (
	// PointsExact is given for a keyword that occurs as a whole word (or a
	// whole phrase of words).
	PointsExact = 10
	// PointsPartial is given for a keyword that occurs only inside a longer
	// word ("test" in "testing").
	PointsPartial = 3
	// PointsFirstSentence is added for a keyword that occurs, exactly or
	// partially, in the first sentence.
	PointsFirstSentence = 5
	// PointsFurther is added for each matched keyword of the same category
	// after the first.
	PointsFurther = 2

	// HighMin is the lowest score of High confidence.
	HighMin = 25
	// MediumMin is the lowest score of Medium confidence.
	MediumMin = 15
)

// Confidence is how sure a keyword score is: High, Medium or Low, and
// None for the built-in default.
type Confidence string

// The confidence tiers.
const (
	High   Confidence = "High"
	Medium Confidence = "Medium"
	Low    Confidence = "Low"
	None   Confidence = "None"
)

// Tier returns the confidence of a score: High at 25 and above, Medium
// from 15 to 24, Low below 15.
func Tier(score int) Confidence {
	switch {
	case score >= HighMin:
		return High
	case score >= MediumMin:
		return Medium
	}
	return Low
}

// Match is one keyword found in a text.
type Match struct {
	// Keyword is the keyword as the taxonomy spells it.
	Keyword string `json:"keyword"`
	// Exact is true for a whole-word match, false for a partial one.
	Exact bool `json:"exact"`
	// FirstSentence is true when the keyword occurs in the first sentence.
	FirstSentence bool `json:"first_sentence,omitempty"`
	// Points is what the keyword earned on its own (10 or 3, plus 5 in the
	// first sentence, divided by Shared); the further-keyword bonus is not
	// included.
	Points int `json:"points"`
	// Shared is, when more than one, the number of categories whose
	// vocabulary (name, purpose and keywords) holds the keyword's most
	// specific word: its points are divided by it (see [Specificity]).
	Shared int `json:"shared,omitempty"`
}

// token is one lowercased word of a text and the sentence it is in.
type token struct {
	text     string
	sentence int
}

// tokenize splits s into lowercased words. A word is a run of letters,
// digits, '#' and '+' ("c#", "c++"); a '.' joins a word when a letter or
// digit follows it (".net", "node.js", "3.12"). Anything else separates
// words. A sentence ends at '.', '!' or '?' followed by space or the end,
// and at a blank line.
func tokenize(s string) []token {
	var out []token
	var b strings.Builder
	sentence := 0
	flush := func() {
		if b.Len() > 0 {
			out = append(out, token{text: b.String(), sentence: sentence})
			b.Reset()
		}
	}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		next, _ := utf8.DecodeRuneInString(s[i+size:])
		atEnd := i+size >= len(s)
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '#' || r == '+':
			b.WriteRune(unicode.ToLower(r))
		case r == '.' && !atEnd && (unicode.IsLetter(next) || unicode.IsDigit(next)):
			b.WriteRune(r)
		case r == '.' || r == '!' || r == '?':
			flush()
			if atEnd || unicode.IsSpace(next) || next == '"' || next == '\'' || next == ')' {
				if len(out) > 0 && out[len(out)-1].sentence == sentence {
					sentence++
				}
			}
		case r == '\n' && next == '\n':
			flush()
			if len(out) > 0 && out[len(out)-1].sentence == sentence {
				sentence++
			}
		default:
			flush()
		}
		i += size
	}
	flush()
	return out
}

// words returns the texts of tokens.
func words(toks []token) []string {
	out := make([]string, len(toks))
	for i, t := range toks {
		out[i] = t.text
	}
	return out
}

// keyword is a taxonomy keyword split into words.
type keyword struct {
	text  string
	words []string
	// shared is the number of categories the keyword's most specific
	// word belongs to (1 when it defines its category, or outside a
	// taxonomy); its points are divided by it.
	shared int
}

func compileKeywords(list []string) []keyword {
	out := make([]keyword, 0, len(list))
	for _, k := range list {
		if w := words(tokenize(k)); len(w) > 0 {
			out = append(out, keyword{text: k, words: w, shared: 1})
		}
	}
	return out
}

// text is a tokenized text with the indexes that make keyword lookups
// cheap: the set of its words, and its distinct words (all, and those of
// the first sentence) joined by NUL, so that one substring search tells
// whether any word contains a keyword.
type text struct {
	toks  []token
	set   map[string]struct{}
	all   string
	first string
}

func newText(s string) *text {
	t := &text{toks: tokenize(s), set: map[string]struct{}{}}
	var all, first strings.Builder
	firstSeen := map[string]bool{}
	for _, tk := range t.toks {
		if _, ok := t.set[tk.text]; !ok {
			t.set[tk.text] = struct{}{}
			all.WriteByte(0)
			all.WriteString(tk.text)
		}
		if tk.sentence == 0 && !firstSeen[tk.text] {
			firstSeen[tk.text] = true
			first.WriteByte(0)
			first.WriteString(tk.text)
		}
	}
	t.all, t.first = all.String(), first.String()
	return t
}

// find reports whether kw occurs in t as a whole phrase (exact), only
// inside longer words (partial), and whether any occurrence starts in the
// first sentence.
func (kw *keyword) find(t *text) (exact, partial, first bool) {
	if len(kw.words) == 1 {
		w := kw.words[0]
		if !strings.Contains(t.all, w) {
			return false, false, false
		}
		_, exact = t.set[w]
		partial = !exact || containsInLonger(t.all, w)
		return exact, partial, strings.Contains(t.first, w)
	}
	if !strings.Contains(t.all, kw.words[0]) {
		return false, false, false
	}
	toks := t.toks
	n := len(kw.words)
	for i := 0; i+n <= len(toks); i++ {
		e, p := true, true
		for j, w := range kw.words {
			tt := toks[i+j].text
			if tt != w {
				e = false
				if !strings.Contains(tt, w) {
					p = false
					break
				}
			}
		}
		if !p {
			continue
		}
		if e {
			exact = true
		} else {
			partial = true
		}
		if toks[i].sentence == 0 {
			first = true
		}
	}
	return exact, partial, first
}

// containsInLonger reports whether w occurs in joined (NUL-separated
// words) inside a word longer than w.
func containsInLonger(joined, w string) bool {
	for i := 0; ; {
		j := strings.Index(joined[i:], w)
		if j < 0 {
			return false
		}
		start := i + j
		end := start + len(w)
		if joined[start-1] != 0 || (end < len(joined) && joined[end] != 0) {
			return true
		}
		i = start + 1
	}
}

// scoreText scores t against kws with the rules above, returning the
// total and the matches in keyword order.
func scoreText(t *text, kws []keyword) (int, []Match) {
	total := 0
	var matches []Match
	for i := range kws {
		exact, partial, first := kws[i].find(t)
		if !exact && !partial {
			continue
		}
		m := Match{Keyword: kws[i].text, Exact: exact, FirstSentence: first}
		if exact {
			m.Points = PointsExact
		} else {
			m.Points = PointsPartial
		}
		if first {
			m.Points += PointsFirstSentence
		}
		if n := kws[i].shared; n > 1 {
			m.Shared = n
			m.Points = max(1, (2*m.Points+n)/(2*n)) // rounded, never 0
		}
		total += m.Points
		matches = append(matches, m)
	}
	if len(matches) > 1 {
		total += PointsFurther * (len(matches) - 1)
	}
	return total, matches
}

// fullScore is the score of matches with every keyword at full points.
func fullScore(ms []Match) int {
	total := 0
	for _, m := range ms {
		p := PointsPartial
		if m.Exact {
			p = PointsExact
		}
		if m.FirstSentence {
			p += PointsFirstSentence
		}
		total += p
	}
	if len(ms) > 1 {
		total += PointsFurther * (len(ms) - 1)
	}
	return total
}

// ScoreText scores text against keywords with the routing rules: each
// keyword found as a whole word earns 10, found only inside a longer word
// 3, plus 5 when it occurs in the first sentence; each matched keyword
// after the first adds 2. Text and keywords are compared lowercased.
func ScoreText(s string, keywords []string) (int, []Match) {
	return scoreText(newText(s), compileKeywords(keywords))
}

// hasPhrase reports whether kw occurs in t as a whole phrase.
func (kw *keyword) hasPhrase(t *text) bool {
	if _, ok := t.set[kw.words[0]]; !ok {
		return false
	}
	if len(kw.words) == 1 {
		return true
	}
	toks := t.toks
	n := len(kw.words)
outer:
	for i := 0; i+n <= len(toks); i++ {
		for j, w := range kw.words {
			if toks[i+j].text != w {
				continue outer
			}
		}
		return true
	}
	return false
}

// Specificity returns, for each category of tax and each of its keywords
// (in taxonomy order), the number of categories that share the keyword.
// Words are compared by stem, without stop words. A word of the
// category's own name is shared with the categories whose names also hold
// it ("analysis" defines codebase-analysis; "implementation" names both
// tdd-implementation and code-implementation, 2); any other word with the
// categories whose vocabulary — the words of their name and purpose and
// their one-word keywords — holds it ("build": code-implementation's
// keyword, infrastructure's purpose, 2). A phrase counts its most
// specific word ("quality assurance": "assurance", 1). A keyword that
// defines its category gets 1. Scoring divides a keyword's points by
// this number (rounded, at least 1).
func Specificity(tax *Taxonomy) [][]int {
	names := make([]map[string]bool, len(tax.Categories))
	vocab := make([]map[string]bool, len(tax.Categories))
	for i, c := range tax.Categories {
		names[i], vocab[i] = map[string]bool{}, map[string]bool{}
		for _, st := range stems(strings.ReplaceAll(c.Name, "-", " ")) {
			names[i][st], vocab[i][st] = true, true
		}
		for _, st := range stems(c.Purpose) {
			vocab[i][st] = true
		}
		for _, kw := range c.Keywords {
			// A phrase's words are not the category's words: "acceptance
			// testing" does not make "test" a word of
			// requirements-validation.
			if st := stems(kw); len(st) == 1 {
				vocab[i][st[0]] = true
			}
		}
	}
	out := make([][]int, len(tax.Categories))
	for i, c := range tax.Categories {
		out[i] = make([]int, len(c.Keywords))
		for k, kw := range c.Keywords {
			n := 0
			for _, st := range stems(kw) {
				sets := vocab
				if names[i][st] {
					sets = names
				}
				in := 0
				for _, v := range sets {
					if v[st] {
						in++
					}
				}
				if n == 0 || in < n {
					n = in
				}
			}
			out[i][k] = max(n, 1)
		}
	}
	return out
}

// stems returns the stems of the content words of s.
func stems(s string) []string {
	var out []string
	for _, t := range rank.Tokens(s) {
		out = append(out, t.Stem)
	}
	return out
}
