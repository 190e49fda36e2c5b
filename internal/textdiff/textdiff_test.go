package textdiff

import (
	"encoding/json"
	"fmt"
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

// TestLinesLong: a changed middle whose table would pass MaxCells is shown
// whole (removed, then added), while a common head and tail are kept.
func TestLinesLong(t *testing.T) {
	var a, b []string
	for i := range 2100 {
		a = append(a, fmt.Sprint("a", i))
		b = append(b, fmt.Sprint("b", i))
	}
	old := "head\n" + strings.Join(a, "\n") + "\ntail"
	new := "head\n" + strings.Join(b, "\n") + "\ntail"
	got := Lines(old, new)
	if len(got) != 2+2*2100 || got[0] != "  head" || got[1] != "- a0" || got[2101] != "+ b0" || got[len(got)-1] != "  tail" {
		t.Errorf("long diff: %d lines, %q %q %q %q", len(got), got[0], got[1], got[2101], got[len(got)-1])
	}
	// A long text with one line changed is one removal and one addition.
	long := strings.Repeat("x\n", 5000)
	got = Lines(long+"y\n"+long, long+"z\n"+long)
	changed := 0
	for _, l := range got {
		if l[0] != ' ' {
			changed++
		}
	}
	if changed != 2 {
		t.Errorf("one changed line in 10001: %d lines marked", changed)
	}
}

func TestUnified(t *testing.T) {
	ten := "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n"
	for _, tc := range []struct {
		name, old, new, want string
	}{
		{"same", ten, ten, ""},
		{"new file", "", "a\nb\n", "@@ -0,0 +1,2 @@\n+a\n+b\n"},
		{"deleted file", "a\n", "", "@@ -1 +0,0 @@\n-a\n"},
		{"one line in the middle", ten, strings.Replace(ten, "5\n", "five\n", 1),
			"@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n"},
		{"two hunks", ten + ten, "1\ntwo\n" + strings.TrimPrefix(ten, "1\n2\n") + strings.TrimSuffix(ten, "10\n") + "ten\n",
			"@@ -1,5 +1,5 @@\n 1\n-2\n+two\n 3\n 4\n 5\n@@ -17,4 +17,4 @@\n 7\n 8\n 9\n-10\n+ten\n"},
		{"no newline at end", "a\nb", "a\nc",
			"@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, Unified(tc.old, tc.new, 3)); d != "" {
				t.Errorf("Unified (-want +got):\n%s", d)
			}
		})
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
