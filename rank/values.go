package rank

import (
	"regexp"
	"slices"
	"strings"
)

// Value hints.
//
// A task names the values it will pass as much as the capability it
// needs: "the forecast for Pacifica on April 11th, 2023" holds a date,
// "retrieve data from 'https://api.example.com/v1/data'" a URL. A tool
// that takes such a value says so in its parameters ("date", "url"), so
// each kind of value found in the task adds the words naming it to the
// query with weight [Options.ValueHint], as a boost: it raises the cards
// the task's words found and finds none by itself (Match.Via shows the
// value's text). A URL's hint alone also finds (see valueKind.finds).

// valueKind is a kind of value recognised in task text.
type valueKind struct {
	words []string // the words a tool taking it uses
	re    *regexp.Regexp
	// maybe is a cheap test, on the lower-cased text, that must pass
	// before re is tried: most tasks hold no value of most kinds.
	maybe func(lower string) bool
	// finds makes the words find cards, not only raise them: a URL in a
	// task is a thing to fetch, open or scrape, whatever the verb ("grab
	// the text of https://…"), and the tools that do it take a "url".
	finds bool
}

const monthRE = `jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?`

var (
	dateWords  = []string{"date"}
	timeWords  = []string{"time"}
	moneyWords = []string{"amount", "currency"}
)

// valueKinds are tried in order; several may imply the same words (the
// forms of a date), and a word is added once.
var valueKinds = []valueKind{
	{
		words: dateWords,
		re: regexp.MustCompile(`(?i)\b(?:` + monthRE + `)\.? +\d{1,2}(?:st|nd|rd|th)?\b` +
			`|\b\d{1,2}(?:st|nd|rd|th)? +(?:of +)?(?:` + monthRE + `)\b`),
		maybe: func(s string) bool { return hasDigit(s) && hasMonth(s) },
	},
	{
		words: dateWords,
		re:    regexp.MustCompile(`\b\d{4}-\d{1,2}-\d{1,2}\b|\b\d{1,2}/\d{1,2}/\d{2,4}\b`),
		maybe: func(s string) bool { return strings.ContainsAny(s, "-/") && hasDigit(s) },
	},
	{
		words: dateWords,
		re: regexp.MustCompile(`(?i)\b(?:today|tomorrow|yesterday|tonight)\b` +
			`|\b(?:next|this|last|upcoming|coming) +(?:week|weekend|month|year|monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b`),
		maybe: func(s string) bool { return containsAny(s, relativeDates) },
	},
	{
		words: timeWords,
		re:    regexp.MustCompile(`(?i)\b\d{1,2}:\d{2}\b|\b\d{1,2} *(?:am|pm|a\.m\.|p\.m\.)(?:\W|$)`),
		maybe: func(s string) bool {
			return hasDigit(s) && (strings.Contains(s, ":") || strings.Contains(s, "am") || strings.Contains(s, "pm") || strings.Contains(s, ".m."))
		},
	},
	{
		words: []string{"url"},
		re:    regexp.MustCompile(`(?i)\bhttps?://\S+`),
		maybe: func(s string) bool { return strings.Contains(s, "://") },
		finds: true,
	},
	{
		words: []string{"email"},
		re:    regexp.MustCompile(`(?i)\b[\w.+-]+@[\w-]+(?:\.[\w-]+)*\.[a-z]{2,}\b`),
		maybe: func(s string) bool { return strings.Contains(s, "@") },
	},
	{
		words: []string{"file", "path"},
		re: regexp.MustCompile(`(?i)(?:^|\s)(?:~|\.{1,2}|[a-z]:)?[/\\][\w.-]+(?:[/\\][\w.-]+)+` +
			`|\b[\w-]+\.(?:txt|csv|tsv|json|ya?ml|toml|ini|py|go|js|ts|rb|rs|java|c|cpp|h|md|pdf|png|jpe?g|gif|svg|docx?|xlsx?|pptx?|html?|xml|log|sh|zip|tar|gz|mp3|mp4|wav)\b`),
		maybe: func(s string) bool { return strings.ContainsAny(s, "/\\") || hasExtension(s) },
	},
	{
		words: []string{"coordinates", "latitude", "longitude"},
		re:    regexp.MustCompile(`(?i)-?\d{1,3}\.\d+ *°? *[ns]?\s*,\s*-?\d{1,3}\.\d+ *°? *[ew]?\b`),
		maybe: func(s string) bool { return strings.Contains(s, ".") && strings.Contains(s, ",") && hasDigit(s) },
	},
	{
		words: []string{"list", "array"},
		re:    regexp.MustCompile(`\[[^\[\]]*,[^\[\]]*\]`),
		maybe: func(s string) bool { return strings.Contains(s, "[") },
	},
	{
		words: moneyWords,
		re:    regexp.MustCompile(`[$€£¥] ?\d`),
		maybe: func(s string) bool { return strings.ContainsAny(s, "$€£¥") },
	},
	{
		words: moneyWords,
		re:    regexp.MustCompile(`(?i)\b\d+(?:\.\d+)? ?(?:usd|eur|gbp|jpy|dollars?|euros?|pounds|yen|bucks)\b`),
		maybe: func(s string) bool { return hasDigit(s) && hasCurrencyWord(s) },
	},
}

var (
	months        = strings.Fields("jan feb mar apr may jun jul aug sep oct nov dec")
	currencyWords = strings.Fields("usd eur gbp jpy dollar euro pound yen bucks")
	relativeDates = strings.Fields("day tomorrow tonight week month year")
)

func hasMonth(s string) bool        { return containsAny(s, months) }
func hasCurrencyWord(s string) bool { return containsAny(s, currencyWords) }

// containsAny reports whether s contains any of subs.
func containsAny(s string, subs []string) bool {
	return slices.ContainsFunc(subs, func(sub string) bool { return strings.Contains(s, sub) })
}

// hasExtension reports whether s has a dot followed by a letter, as a
// file name does.
func hasExtension(s string) bool {
	for i := strings.IndexByte(s, '.'); i >= 0 && i+1 < len(s); {
		if c := s[i+1]; c >= 'a' && c <= 'z' {
			return true
		}
		j := strings.IndexByte(s[i+1:], '.')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return false
}

func hasDigit(s string) bool { return strings.ContainsAny(s, "0123456789") }

// valueHint is a word implied by a value found in a task.
type valueHint struct {
	word  string
	text  string // the value as written, for explanations
	finds bool   // see valueKind.finds
}

// valueHints returns the words implied by the values in text, in the
// order of valueKinds.
func valueHints(text string) []valueHint {
	lower := strings.ToLower(text)
	var out []valueHint
	for _, k := range valueKinds {
		if !k.maybe(lower) {
			continue
		}
		loc := k.re.FindStringIndex(text)
		if loc == nil {
			continue
		}
		v := strings.TrimSpace(text[loc[0]:loc[1]])
		for _, w := range k.words {
			if !slices.ContainsFunc(out, func(h valueHint) bool { return h.word == w }) {
				out = append(out, valueHint{word: w, text: v, finds: k.finds})
			}
		}
	}
	return out
}

// addValueHints adds to q the indexed words implied by the values in
// text, each weighted [Options.ValueHint] and recorded as coming from the
// value's text. A word already in q is left as it is.
func (ix *Index) addValueHints(q []QueryTerm, text string) []QueryTerm {
	if ix.opts.ValueHint <= 0 {
		return q
	}
	var in map[string]bool // the stems in q, made on the first hint
	for _, h := range valueHints(text) {
		st := Stem(h.word)
		if _, ok := ix.terms[st]; !ok {
			continue
		}
		if in == nil {
			in = make(map[string]bool, len(q))
			for _, t := range q {
				in[t.Stem] = true
			}
		}
		if !in[st] {
			in[st] = true
			q = append(q, QueryTerm{Stem: st, Word: h.word, Weight: ix.opts.ValueHint, From: h.text, Boost: !h.finds})
		}
	}
	return q
}
