package termsafe

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Unsafe reports whether r is shown escaped: a control character, a
// format character (bidi controls, zero-width characters), or a line or
// paragraph separator. Newline and tab are unsafe in [String], kept by
// [Text].
func Unsafe(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || unicode.In(r, unicode.Zl, unicode.Zp)
}

// String returns s with every unsafe character escaped, newlines and tabs
// included: for a field that must print as one line (a name, a command
// line, a path).
func String(s string) string { return escape(s, false) }

// Text returns s with every unsafe character escaped except newline and
// tab: for multi-line text (a description, a diff).
func Text(s string) string { return escape(s, true) }

// Strings applies [String] to each element, in a new slice.
func Strings(list []string) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = String(s)
	}
	return out
}

func clean(s string, keepLines bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf || c < 0x20 && !(keepLines && (c == '\n' || c == '\t')) || c == 0x7f {
			return false
		}
	}
	return true
}

func escape(s string, keepLines bool) string {
	if clean(s, keepLines) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	appendEscaped(&b, s, keepLines)
	return b.String()
}

func appendEscaped(b *strings.Builder, s string, keepLines bool) {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(b, `\x%02x`, s[i])
		case keepLines && (r == '\n' || r == '\t'):
			b.WriteRune(r)
		case r < 0x20:
			fmt.Fprintf(b, `\x%02x`, r)
		case Unsafe(r):
			if r > 0xffff {
				fmt.Fprintf(b, `\U%08x`, r)
			} else {
				fmt.Fprintf(b, `\u%04x`, r)
			}
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
}

// Writer escapes everything written through it as [Text] does. A UTF-8
// sequence split across writes is held until it is complete; Flush writes
// a held incomplete one, escaped.
type Writer struct {
	mu      sync.Mutex
	w       io.Writer
	pending []byte
}

// NewWriter returns a Writer over w. A w that is already a *Writer is
// returned as is.
func NewWriter(w io.Writer) *Writer {
	if tw, ok := w.(*Writer); ok {
		return tw
	}
	return &Writer{w: w}
}

// Unwrap returns the writer below, for output that must pass unchanged
// (a progress line's own cursor controls).
func (t *Writer) Unwrap() io.Writer { return t.w }

// Write escapes p and writes it; it reports len(p) on success.
func (t *Writer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	data := p
	if len(t.pending) > 0 {
		data = append(t.pending, p...)
		t.pending = nil
	}
	// Hold an incomplete UTF-8 sequence at the end for the next write.
	cut := len(data)
	for k := 1; k <= utf8.UTFMax-1 && k <= len(data); k++ {
		c := data[len(data)-k]
		if c < utf8.RuneSelf {
			break
		}
		if utf8.RuneStart(c) {
			if !utf8.FullRune(data[len(data)-k:]) {
				cut = len(data) - k
			}
			break
		}
	}
	if cut < len(data) {
		t.pending = append([]byte(nil), data[cut:]...)
		data = data[:cut]
	}
	s := string(data)
	if !clean(s, true) {
		s = Text(s)
	}
	if _, err := io.WriteString(t.w, s); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes a held incomplete UTF-8 sequence, escaped.
func (t *Writer) Flush() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.pending) == 0 {
		return nil
	}
	s := Text(string(t.pending))
	t.pending = nil
	_, err := io.WriteString(t.w, s)
	return err
}
