package jsonc

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestUnmarshal(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    map[string]any
		relaxed bool
		err     string
	}{
		{name: "strict", in: `{"a": 1}`, want: map[string]any{"a": 1.0}},
		{name: "bom", in: "\ufeff{\"a\": \"b\"}", want: map[string]any{"a": "b"}},
		{name: "comments and trailing commas", in: "{\n // servers\n \"a\": [1, 2,], /* x */\n \"b\": \"// not a comment\",\n}", want: map[string]any{"a": []any{1.0, 2.0}, "b": "// not a comment"}, relaxed: true},
		{name: "escaped quote", in: `{"a": "x\"//y",}`, want: map[string]any{"a": `x"//y`}, relaxed: true},
		{name: "syntax error has a line", in: "{\n  \"a\": 1\n  \"b\": 2\n}", err: "line 3, column 3"},
		{name: "truncated", in: "{\"a\": [1,", err: "line 1, column 10"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got map[string]any
			relaxed, err := Unmarshal([]byte(tt.in), &got)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if relaxed != tt.relaxed {
				t.Errorf("relaxed = %v, want %v", relaxed, tt.relaxed)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func FuzzStrip(f *testing.F) {
	for _, s := range []string{`{"a": [1, 2,], /* c */ "b": "//"}`, "// only\n", `"unterminated`, `/* open`, `{"\\": 1,}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		out := Strip(data)
		if len(out) != len(data) || strings.Count(string(out), "\n") != strings.Count(string(data), "\n") {
			t.Errorf("Strip moved offsets: %d bytes and %d lines from %d and %d",
				len(out), strings.Count(string(out), "\n"), len(data), strings.Count(string(data), "\n"))
		}
		var v any
		_, _ = Unmarshal(data, &v)
	})
}
