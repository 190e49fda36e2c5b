package textdiff

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLines(t *testing.T) {
	for _, tc := range []struct {
		name, old, new string
		want           []string
	}{
		{"same", "a\nb", "a\nb", []string{"  a", "  b"}},
		{"both empty", "", "", []string{}},
		{"added", "", "x", []string{"+ x"}},
		{"removed", "x", "", []string{"- x"}},
		{"changed middle", "a\nb\nc", "a\nB\nc", []string{"  a", "- b", "+ B", "  c"}},
		{"inserted", "a\nc", "a\nb\nc", []string{"  a", "+ b", "  c"}},
		{"reordered", "a\nb", "b\na", []string{"- a", "  b", "+ a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, Lines(tc.old, tc.new)); d != "" {
				t.Errorf("Lines(%q, %q) (-want +got):\n%s", tc.old, tc.new, d)
			}
		})
	}
}

// TestLinesLong: texts past MaxLines are compared as wholes, not through a
// table of MaxLines² cells.
func TestLinesLong(t *testing.T) {
	long := strings.Repeat("x\n", MaxLines) + "y"
	got := Lines(long, "x")
	if len(got) != MaxLines+2 || got[0] != "- x" || got[len(got)-1] != "+ x" {
		t.Errorf("long diff: %d lines, first %q, last %q", len(got), got[0], got[len(got)-1])
	}
}

func TestJSON(t *testing.T) {
	for _, tc := range []struct {
		raw, want string
	}{
		{"", ""},
		{"  ", ""},
		{`{"b":1,"a":[2]}`, "{\n  \"a\": [\n    2\n  ],\n  \"b\": 1\n}"},
		{`{not json`, `{not json`},
	} {
		if got := JSON(json.RawMessage(tc.raw)); got != tc.want {
			t.Errorf("JSON(%q) = %q, want %q", tc.raw, got, tc.want)
		}
	}
}
