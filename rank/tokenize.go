package rank

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/snowballstem"
	"github.com/blevesearch/snowballstem/english"
)

// Token is one indexed or query term: the stem that is matched and the
// surface word it came from (kept for explanations).
type Token struct {
	Stem string
	Word string
}

// Words splits s into lower-case words: on every rune that is not a letter,
// digit or combining mark, between a lower-case letter and an upper-case
// one ("readFile" -> read, file), inside runs of capitals before a
// lower-case letter ("HTTPServer" -> http, server), and before a capital
// that follows a digit ("get2Items" -> get2, items). Digits stay with the
// letters around them ("ipv4", "sha256sum"). snake_case, kebab-case,
// dotted.names and path/like names all split on their punctuation.
//
// Chinese and Japanese text, written without spaces, is split into
// overlapping pairs of characters ("天气预报" -> 天气, 气预, 预报), the usual
// way to index it without a dictionary; a lone character stays a word.
func Words(s string) []string { return splitWords(s, false) }

// splitWords is [Words]; with joined, a run of letters and digits split at
// case changes ("GitHub"), or at a hyphen next to a part of one or two
// letters ("e-mail", "log-in"), is also given whole after its parts (git,
// hub, github; e, mail, email), as it is also written. [Tokens] asks for
// that, so that "github" in a task matches "GitHub" in a card and the
// reverse.
func splitWords(s string, joined bool) []string {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	runStart, camel := 0, false
	endRun := func() {
		flush()
		if joined && camel && len(words)-runStart > 1 {
			words = append(words, strings.Join(words[runStart:], ""))
		}
		runStart, camel = len(words), false
	}
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		if isCJK(r) {
			endRun()
			j := i
			for j < len(rs) && isCJK(rs[j]) {
				j++
			}
			if j-i == 1 {
				words = append(words, string(rs[i]))
			}
			for k := i; k+1 < j; k++ {
				words = append(words, string(rs[k:k+2]))
			}
			i = j - 1
			runStart = len(words)
			continue
		}
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.IsMark(r) {
			if r == '-' && len(cur) > 0 && i+1 < len(rs) && unicode.IsLetter(rs[i+1]) && (len(cur) <= 2 || shortNext(rs[i+1:])) {
				// "e-mail", "to-do", "log-in": a short part joined by a
				// hyphen is also one word, as when written without it.
				flush()
				camel = true
				continue
			}
			endRun()
			continue
		}
		if len(cur) > 0 && unicode.IsUpper(r) {
			prev := cur[len(cur)-1]
			nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && nextLower) {
				flush()
				camel = true
			}
		}
		cur = append(cur, r)
	}
	endRun()
	return words
}

// shortNext reports whether the letters at the start of rs are at most
// two, then a rune that is not a letter.
func shortNext(rs []rune) bool {
	n := 0
	for n < len(rs) && unicode.IsLetter(rs[n]) {
		n++
	}
	return n <= 2
}

// isCJK reports whether r is a Chinese or Japanese character, written
// without spaces between words.
func isCJK(r rune) bool {
	if r < 0x2E80 { // below the CJK radicals: Latin, Greek, Cyrillic, Thai...
		return false
	}
	return unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r) ||
		r == 'ー' // the katakana length mark, which Unicode files under Common
}

// stemCache memoizes the Snowball stemmer, which dominates indexing time
// on large catalogs. Entries are never evicted: the vocabulary of tool
// descriptions is small (tens of thousands of words).
var stemCache sync.Map // string -> string

// Stem returns the Snowball (Porter2) English stem of a lower-case word.
// Words with digits and very short words are returned as they are.
func Stem(w string) string {
	if len(w) <= 2 {
		return w
	}
	for i := 0; i < len(w); i++ {
		if w[i] >= '0' && w[i] <= '9' {
			return w
		}
	}
	if v, ok := stemCache.Load(w); ok {
		return v.(string)
	}
	env := snowballstem.NewEnv(w)
	english.Stem(env)
	s := env.Current()
	stemCache.Store(w, s)
	return s
}

// Tokens splits s into words, drops stop words and stems the rest. A word
// split at case changes, or at a hyphen next to a short part, is also
// given whole ("GitHub" -> git, hub, github; "e-mail" -> mail, email), so
// that the same word written otherwise matches it.
func Tokens(s string) []Token {
	return tokens(s, nil)
}

// tokens is [Tokens] with an optional private stem cache, which New uses
// to avoid the shared cache's synchronisation on every word.
func tokens(s string, cache map[string]string) []Token {
	words := splitWords(s, true)
	toks := make([]Token, 0, len(words))
	for _, w := range words {
		if stopWords[w] || !utf8.ValidString(w) {
			continue
		}
		var st string
		if cache == nil {
			st = Stem(w)
		} else if c, ok := cache[w]; ok {
			st = c
		} else {
			st = Stem(w)
			cache[w] = st
		}
		toks = append(toks, Token{Stem: st, Word: w})
	}
	return toks
}

// stopWords are English function words and the filler of requests to an
// assistant ("can you please help me..."). They carry no signal about
// which capability fits.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`
a about above after again against all am an and any are aren as at be because been
before being below between both but by can cannot could couldn did didn do does doesn
doing don down during each few for from further had hadn has hasn have haven having he
her here hers herself him himself his how i if in into is isn it its itself just let
ll me more most mustn my myself no nor not now of off on once only or other ought our
ours ourselves out over own re s same shan she should shouldn so some such t than that
the their theirs them themselves then there these they this those through to too
under until up us ve very was wasn we were weren what when where which while who whom
why will with won would wouldn you your yours yourself yourselves
d m o y also etc via e g ie eg
please thanks thank hi hello hey
want wants wanted need needs needed like would could might may must shall
give tell know help helps using use used uses
something anything someone anyone thing things way
kindly assist assistance assisting provide providing provided specifically
specific interested curious wondering seeking looking appreciate greatly able
possible perhaps maybe really actually certain particular various
many much
`) {
		m[w] = true
	}
	return m
}()
