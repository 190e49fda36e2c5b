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
// case changes ("GitHub"), at a hyphen next to a part of one or two
// letters ("e-mail", "log-in"), or at an ampersand between two such parts
// ("H&M", "AT&T"), is also given whole after its parts (git, hub, github;
// e, mail, email; h, m, hm), as it is also written. [Tokens] asks for
// that, so that "github" in a task matches "GitHub" in a card and the
// reverse.
//
// A word is a run of the text, so each is sliced from s, lower-cased
// (which copies only a word that has capitals), rather than built rune
// by rune: splitting runs for every query, every step of a task and
// every field of every card.
func splitWords(s string, joined bool) []string {
	words := make([]string, 0, len(s)/5+1) // English words are about 5 bytes with their space
	start := -1                            // byte offset of the current word, or -1 between words
	n := 0                                 // its runes
	var prev rune                          // its last rune
	flush := func(end int) {
		if start >= 0 {
			words = append(words, strings.ToLower(s[start:end]))
			start, n = -1, 0
		}
	}
	runStart, camel := 0, false
	endRun := func(end int) {
		flush(end)
		if joined && camel && len(words)-runStart > 1 {
			words = append(words, strings.Join(words[runStart:], ""))
		}
		runStart, camel = len(words), false
	}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		next, _ := utf8.DecodeRuneInString(s[i+size:]) // RuneError at the end: no letter
		if isCJK(r) {
			endRun(i)
			words, i = appendCJK(words, s, i)
			runStart = len(words)
			continue
		}
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.IsMark(r) {
			if r == '-' && n > 0 && unicode.IsLetter(next) && (n <= 2 || shortNext(s[i+size:])) {
				// "e-mail", "to-do", "log-in": a short part joined by a
				// hyphen is also one word, as when written without it.
				flush(i)
				camel = true
			} else if r == '&' && n > 0 && n <= 2 && unicode.IsLetter(next) && shortNext(s[i+size:]) {
				// "H&M", "AT&T", "R&D": short parts joined by an
				// ampersand name one thing, also matched whole (hm).
				flush(i)
				camel = true
			} else {
				endRun(i)
			}
			i += size
			continue
		}
		if n > 0 && unicode.IsUpper(r) {
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && unicode.IsLower(next)) {
				flush(i)
				camel = true
			}
		}
		if start < 0 {
			start = i
		}
		n++
		prev = r
		i += size
	}
	endRun(len(s))
	if len(words) == 0 {
		return nil // as before: no words is nil
	}
	return words
}

// appendCJK appends the words of the run of Chinese or Japanese
// characters at s[i:]: its overlapping pairs, or a lone character. It
// returns the words and the offset past the run.
func appendCJK(words []string, s string, i int) ([]string, int) {
	j, from, runes := i, i, 0 // from: the offset of the run's previous character
	for j < len(s) {
		c, size := utf8.DecodeRuneInString(s[j:])
		if !isCJK(c) {
			break
		}
		if runes > 0 {
			words = append(words, s[from:j+size])
		}
		from, j, runes = j, j+size, runes+1
	}
	if runes == 1 {
		words = append(words, s[i:j])
	}
	return words, j
}

// shortNext reports whether the letters at the start of s are at most
// two, then a rune that is not a letter.
func shortNext(s string) bool {
	n := 0
	for _, r := range s {
		if !unicode.IsLetter(r) {
			break
		}
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
	if base, ok := irregularPast[w]; ok {
		w = base
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
	// w may be a slice of a long text (see splitWords): the cache, which
	// lives as long as the process, keeps a copy of the word alone.
	stemCache.Store(strings.Clone(w), s)
	return s
}

// Tokens splits s into words, drops stop words and stems the rest. A word
// split at case changes, or at a hyphen next to a short part, is also
// given whole ("GitHub" -> git, hub, github; "e-mail" -> mail, email), so
// that the same word written otherwise matches it.
func Tokens(s string) []Token {
	return tokens(s, nil)
}

// CountTokens returns len(Tokens(s)) without stemming the words: how many
// words of s would be matched (a task's step needs a few to stand alone;
// see package policy).
func CountTokens(s string) int {
	n := 0
	for _, w := range splitWords(s, true) {
		if !stopWords[w] && utf8.ValidString(w) {
			n++
		}
	}
	return n
}

// tokens is [Tokens] with an optional private cache of tokens by word,
// which New uses to avoid the shared stem cache's synchronisation on
// every word. Its tokens are copies of the words, one per distinct word,
// not slices of s: an index keeps them (see splitWords).
func tokens(s string, cache wordTokens) []Token {
	words := splitWords(s, true)
	toks := make([]Token, 0, len(words))
	for _, w := range words {
		if stopWords[w] || !utf8.ValidString(w) {
			continue
		}
		if cache == nil {
			toks = append(toks, Token{Stem: Stem(w), Word: w})
			continue
		}
		tok, ok := cache[w]
		if !ok {
			w = strings.Clone(w)
			tok = Token{Stem: Stem(w), Word: w}
			cache[w] = tok
		}
		toks = append(toks, tok)
	}
	return toks
}

// wordTokens caches the token of each word while indexing.
type wordTokens map[string]Token

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
