package termsafe

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestString(t *testing.T) {
	for _, tt := range []struct{ in, str, text string }{
		{"plain npx -y server", "plain npx -y server", "plain npx -y server"},
		{"a\x1b[2K\rnpx", `a\x1b[2K\x0dnpx`, `a\x1b[2K\x0dnpx`},
		{"line\nnext\tcol", `line\x0anext\x09col`, "line\nnext\tcol"},
		{"evil\u202egnp.sh", `evil\u202egnp.sh`, `evil\u202egnp.sh`},
		{"iso\u2066x\u2069 \u200e\u200f\u061c", `iso\u2066x\u2069 \u200e\u200f\u061c`, `iso\u2066x\u2069 \u200e\u200f\u061c`},
		{"zero\u200bwidth\ufeff", `zero\u200bwidth\ufeff`, `zero\u200bwidth\ufeff`},
		{"c1\u009b31m del\x7f", `c1\u009b31m del\u007f`, `c1\u009b31m del\u007f`},
		{"sep\u2028par\u2029", `sep\u2028par\u2029`, `sep\u2028par\u2029`},
		{"tag\U000E0041", `tag\U000e0041`, `tag\U000e0041`},
		{"bad\xffutf8", `bad\xffutf8`, `bad\xffutf8`},
		{"kept: é 日本 🙂 \\x1b", "kept: é 日本 🙂 \\x1b", "kept: é 日本 🙂 \\x1b"},
	} {
		if got := String(tt.in); got != tt.str {
			t.Errorf("String(%q) = %q, want %q", tt.in, got, tt.str)
		}
		if got := Text(tt.in); got != tt.text {
			t.Errorf("Text(%q) = %q, want %q", tt.in, got, tt.text)
		}
	}
}

// safe reports whether s holds no character a terminal acts on, other
// than newline and tab.
func safe(s string) bool {
	for _, r := range s {
		if r != '\n' && r != '\t' && (Unsafe(r) || r == utf8.RuneError) {
			return false
		}
	}
	return utf8.ValidString(s)
}

func TestWriterSplitsAndJSON(t *testing.T) {
	in := "ok é\u202e\x1b]0;title\x07 日本\n\u009b"
	for split := 0; split <= len(in); split++ {
		var b bytes.Buffer
		w := NewWriter(&b)
		if n, err := w.Write([]byte(in[:split])); err != nil || n != split {
			t.Fatalf("Write = %d, %v", n, err)
		}
		w.Write([]byte(in[split:]))
		w.Flush()
		if got := b.String(); got != Text(in) {
			t.Errorf("split at %d: %q, want %q", split, got, Text(in))
		}
	}
	// JSON through the writer stays valid and decodes to the same value.
	v := map[string]string{"d": "a\u202eb\x1bc\u0085d\x7fe"}
	var b bytes.Buffer
	json.NewEncoder(NewWriter(&b)).Encode(v)
	if !safe(b.String()) {
		t.Errorf("unsafe JSON output %q", b.String())
	}
	var back map[string]string
	if err := json.Unmarshal(b.Bytes(), &back); err != nil || back["d"] != v["d"] {
		t.Errorf("JSON through the writer: %v, %q", err, b.String())
	}
}

func FuzzText(f *testing.F) {
	f.Add("a\x1b[31mb\u202ec\n")
	f.Add("\xe6\x97")
	f.Fuzz(func(t *testing.T, s string) {
		got := Text(s)
		if !safe(got) {
			t.Fatalf("Text(%q) = %q is not safe", s, got)
		}
		if one := String(s); strings.ContainsAny(one, "\n\t") || !safe(one) {
			t.Fatalf("String(%q) = %q", s, one)
		}
		var b bytes.Buffer
		w := NewWriter(&b)
		half := len(s) / 2
		w.Write([]byte(s[:half]))
		w.Write([]byte(s[half:]))
		w.Flush()
		if !safe(b.String()) {
			t.Fatalf("Writer(%q) = %q", s, b.String())
		}
	})
}
