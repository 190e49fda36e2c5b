package bert

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Special token ids of the uncased BERT vocabulary.
const (
	idPad = 0
	idUnk = 100
	idCLS = 101
	idSEP = 102
)

// maxWordRunes is the longest word WordPiece splits; a longer one is
// unknown as a whole.
const maxWordRunes = 100

// Tokenizer splits text into ids of an uncased BERT WordPiece vocabulary
// as Hugging Face's tokenizers library does for all-MiniLM-L6-v2's
// tokenizer.json (BertNormalizer with clean_text, handle_chinese_chars
// and lowercase; BertPreTokenizer; WordPiece with "##" continuations):
//
//  1. drop NUL, U+FFFD and control characters other than tab, newline
//     and carriage return; turn white space into spaces;
//  2. put spaces around CJK ideographs;
//  3. strip accents (NFD, then drop nonspacing marks) and lowercase;
//  4. split at white space, and make each punctuation character (ASCII
//     punctuation or a Unicode P category) a word of its own;
//  5. split each word greedily into the longest pieces the vocabulary
//     has, continuations written "##piece"; a word with a part no piece
//     matches, or of more than 100 characters, is one unknown id.
type Tokenizer struct {
	vocab []string
	// first maps a word-initial piece to its id, next a continuation
	// (without its "##") to its id.
	first, next map[string]int32
}

// NewTokenizer builds the tokenizer of a vocabulary listed in id order.
func NewTokenizer(vocab []string) *Tokenizer {
	t := &Tokenizer{vocab: vocab, first: make(map[string]int32, len(vocab)), next: make(map[string]int32, len(vocab)/4)}
	for i, p := range vocab {
		if rest, ok := strings.CutPrefix(p, "##"); ok && rest != "" {
			t.next[rest] = int32(i)
		} else {
			t.first[p] = int32(i)
		}
	}
	return t
}

// Len returns the vocabulary's size.
func (t *Tokenizer) Len() int { return len(t.vocab) }

// Piece returns the text of id.
func (t *Tokenizer) Piece(id int32) string { return t.vocab[id] }

// Encode returns the ids of text's pieces, without [CLS] and [SEP].
func (t *Tokenizer) Encode(text string) []int32 {
	var ids []int32
	for _, w := range words(normalize(text)) {
		ids = t.appendWord(ids, w)
	}
	return ids
}

// EncodeSkipping is Encode without the words skip holds: words as step 4
// above splits them, lowercase and without accents, so a punctuation
// character is a word of its own. A word is skipped whole, never a piece
// of one ("the" goes, "theme" stays). When every word would be skipped it
// returns Encode(text): a text keeps at least what it has.
func (t *Tokenizer) EncodeSkipping(text string, skip map[string]bool) []int32 {
	var ids []int32
	for _, w := range words(normalize(text)) {
		if !skip[w] {
			ids = t.appendWord(ids, w)
		}
	}
	if len(ids) == 0 {
		return t.Encode(text)
	}
	return ids
}

// appendWord appends the pieces of one word.
func (t *Tokenizer) appendWord(ids []int32, w string) []int32 {
	if utf8.RuneCountInString(w) > maxWordRunes {
		return append(ids, idUnk)
	}
	n := len(ids)
	for start := 0; start < len(w); {
		end := len(w)
		found := int32(-1)
		for end > start {
			var id int32
			var ok bool
			if start == 0 {
				id, ok = t.first[w[start:end]]
			} else {
				id, ok = t.next[w[start:end]]
			}
			if ok {
				found = id
				break
			}
			// Step back one whole character.
			_, size := utf8.DecodeLastRuneInString(w[start:end])
			end -= size
		}
		if found < 0 {
			return append(ids[:n], idUnk)
		}
		ids = append(ids, found)
		start = end
	}
	return ids
}

// normalize applies BertNormalizer: clean the text, space out CJK
// ideographs, strip accents and lowercase.
func normalize(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r == 0 || r == utf8.RuneError || isControl(r):
			continue
		case isSpace(r):
			b.WriteByte(' ')
		case isCJK(r):
			b.WriteByte(' ')
			b.WriteRune(r)
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	s = b.String()
	if !isASCII(s) {
		d := norm.NFD.String(s)
		b.Reset()
		for _, r := range d {
			if !unicode.Is(unicode.Mn, r) {
				b.WriteRune(r)
			}
		}
		s = b.String()
	}
	return strings.ToLower(s)
}

// words applies BertPreTokenizer: split at white space, each punctuation
// character a word of its own.
func words(s string) []string {
	var out []string
	start := -1
	for i, r := range s {
		switch {
		case isSpace(r):
			if start >= 0 {
				out = append(out, s[start:i])
				start = -1
			}
		case isPunct(r):
			if start >= 0 {
				out = append(out, s[start:i])
				start = -1
			}
			out = append(out, s[i:i+utf8.RuneLen(r)])
		default:
			if start < 0 {
				start = i
			}
		}
	}
	if start >= 0 {
		out = append(out, s[start:])
	}
	return out
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// isSpace is Unicode's White_Space (tab, newline and carriage return
// included).
func isSpace(r rune) bool { return unicode.IsSpace(r) }

// isControl is a character of a C category other than tab, newline and
// carriage return, which count as white space.
func isControl(r rune) bool {
	if r == '\t' || r == '\n' || r == '\r' {
		return false
	}
	return unicode.In(r, unicode.Cc, unicode.Cf, unicode.Co, unicode.Cs)
}

// isPunct is ASCII punctuation (symbols such as $ + < = > ^ ` | ~
// included) or a Unicode P category.
func isPunct(r rune) bool {
	if r < utf8.RuneSelf {
		return r >= '!' && r <= '/' || r >= ':' && r <= '@' || r >= '[' && r <= '`' || r >= '{' && r <= '~'
	}
	return unicode.IsPunct(r)
}

// isCJK is a CJK ideograph of the ranges BERT spaces out.
func isCJK(r rune) bool {
	return r >= 0x4E00 && r <= 0x9FFF ||
		r >= 0x3400 && r <= 0x4DBF ||
		r >= 0x20000 && r <= 0x2A6DF ||
		r >= 0x2A700 && r <= 0x2B73F ||
		r >= 0x2B740 && r <= 0x2B81F ||
		r >= 0x2B820 && r <= 0x2CEAF ||
		r >= 0xF900 && r <= 0xFAFF ||
		r >= 0x2F800 && r <= 0x2FA1F
}
