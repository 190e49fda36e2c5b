package policy

import (
	"strings"
	"testing"
)

// TestQuoteAspectPlain: the short cut for plain aspects quotes them as
// splitting, joining and shortening does.
func TestQuoteAspectPlain(t *testing.T) {
	slow := func(t string) string {
		t = strings.Join(strings.Fields(t), " ")
		if r := []rune(t); len(r) > 60 {
			t = string(r[:57]) + "..."
		}
		return "'" + t + "'"
	}
	for _, in := range []string{"", " ", "a", "tell the team on slack", " lead", "trail ", "two  spaces", "tab\there",
		"new\nline", "nbsp\u00a0here", "café au lait", strings.Repeat("x", 60), strings.Repeat("x", 61),
		strings.Repeat("ab ", 20), strings.Repeat("é", 30), strings.Repeat("é", 31)} {
		if got, want := quoteAspect(in), slow(in); got != want {
			t.Errorf("quoteAspect(%q) = %q, want %q", in, got, want)
		}
	}
}
