package route

import (
	"strings"
	"unicode"
	"unicode/utf8"
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
	// first sentence); the further-keyword bonus is not included.
	Points int `json:"points"`
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
}

func compileKeywords(list []string) []keyword {
	out := make([]keyword, 0, len(list))
	for _, k := range list {
		if w := words(tokenize(k)); len(w) > 0 {
			out = append(out, keyword{text: k, words: w})
		}
	}
	return out
}

// find reports whether kw occurs in toks as a whole phrase (exact), only
// inside longer words (partial), and whether any occurrence starts in the
// first sentence.
func (kw *keyword) find(toks []token) (exact, partial, first bool) {
	n := len(kw.words)
	for i := 0; i+n <= len(toks); i++ {
		e, p := true, true
		for j, w := range kw.words {
			t := toks[i+j].text
			if t != w {
				e = false
				if !strings.Contains(t, w) {
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
		if exact && first {
			return true, partial, true
		}
	}
	return exact, partial, first
}

// scoreTokens scores toks against kws with the rules above, returning the
// total and the matches in keyword order.
func scoreTokens(toks []token, kws []keyword) (int, []Match) {
	total := 0
	var matches []Match
	for i := range kws {
		exact, partial, first := kws[i].find(toks)
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
		total += m.Points
		matches = append(matches, m)
	}
	if len(matches) > 1 {
		total += PointsFurther * (len(matches) - 1)
	}
	return total, matches
}

// ScoreText scores text against keywords with the routing rules: each
// keyword found as a whole word earns 10, found only inside a longer word
// 3, plus 5 when it occurs in the first sentence; each matched keyword
// after the first adds 2. Text and keywords are compared lowercased.
func ScoreText(text string, keywords []string) (int, []Match) {
	return scoreTokens(tokenize(text), compileKeywords(keywords))
}

// hasPhrase reports whether kw occurs in toks as a whole phrase.
func (kw *keyword) hasPhrase(toks []token) bool {
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
