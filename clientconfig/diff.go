package clientconfig

import (
	"fmt"
	"strings"

	"github.com/capbroker/capbroker/internal/textdiff"
)

// Diff shows what the plan writes, as a unified diff per file (a file to
// delete shows every line removed).
func (p *Plan) Diff() string {
	var b strings.Builder
	for _, c := range p.Changes {
		from, to := c.Path, c.Path
		if c.Before == nil {
			from = "/dev/null"
		}
		if c.After == nil {
			to = "/dev/null"
		}
		fmt.Fprintf(&b, "--- %s\n+++ %s\n", from, to)
		b.WriteString(textdiff.Unified(string(c.Before), string(c.After), 3))
	}
	return b.String()
}
