package main

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestEveryCommandHasExample walks the command tree: every runnable
// command shows at least one example of its use in its help (hidden ones,
// which other commands start, excepted).
func TestEveryCommandHasExample(t *testing.T) {
	m := &Main{}
	var walk func(prefix string, cmds []*cobra.Command)
	n := 0
	walk = func(prefix string, cmds []*cobra.Command) {
		for _, c := range cmds {
			path := prefix + " " + c.Name()
			if c.Runnable() && !c.Hidden {
				n++
				if !strings.Contains(c.Example, "capbroker ") {
					t.Errorf("%s: no Example in its help (want at least one \"capbroker …\" line)", path)
				}
			}
			walk(path, c.Commands())
		}
	}
	walk("capbroker", m.commands())
	if n < 20 {
		t.Errorf("walked %d runnable commands; the tree seems not built", n)
	}
}
