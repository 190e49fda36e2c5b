package session_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/capbroker/capbroker/session"
)

// TestLongToolNameIsCheap calls tools with names far longer than any tool
// has: they get no close-name suggestions (comparing them with every name
// took seconds at 16 KB and minutes at 900 KB) and the refusal quotes
// only the name's head. Names of a usual length still get suggestions.
func TestLongToolNameIsCheap(t *testing.T) {
	ctx := context.Background()
	s, err := session.NewManager(newSelector(t), newSQLite(t), quiet).Start(ctx, codingTask, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name        string
		tool        string
		suggestions bool
	}{
		{"typo", "reed_file", true},
		{"257 runes", "read_file" + strings.Repeat("x", 248), false},
		{"16 KB", strings.Repeat("readFile", 2<<10), false},
		{"900 KB of words", strings.Repeat("read file ", 90<<10), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := s.CheckCall(tc.tool)
			var ne *session.NotExposedError
			if !errors.As(err, &ne) {
				t.Fatalf("CheckCall = %v, want a NotExposedError", err)
			}
			if got := len(ne.Suggestions) > 0; got != tc.suggestions {
				t.Errorf("suggestions %v, want some: %v", ne.Suggestions, tc.suggestions)
			}
			if msg := err.Error(); len(msg) > 2000 {
				t.Errorf("refusal is %d bytes long; want the name shortened", len(msg))
			} else if !tc.suggestions && !strings.Contains(msg, "bytes)") {
				t.Errorf("refusal %q does not say the name was shortened", msg)
			}
		})
	}
}
