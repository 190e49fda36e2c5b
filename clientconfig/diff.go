package clientconfig

import (
	"fmt"
	"strings"
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
		b.WriteString(unified(lines(string(c.Before)), lines(string(c.After)), 3))
	}
	return b.String()
}

func lines(s string) []string {
	if s == "" {
		return nil
	}
	l := strings.SplitAfter(s, "\n")
	if l[len(l)-1] == "" {
		l = l[:len(l)-1]
	}
	return l
}

// edit is one line of a diff: ' ', '-' or '+'.
type edit struct {
	kind byte
	text string
}

// lineEdits diffs a and b: the common head and tail are kept, the middle
// by longest common subsequence (all removed, then all added, when it is
// too large for that).
func lineEdits(a, b []string) []edit {
	var out []edit
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		out = append(out, edit{' ', a[i]})
		i++
	}
	ja, jb := len(a), len(b)
	for ja > i && jb > i && a[ja-1] == b[jb-1] {
		ja--
		jb--
	}
	ma, mb := a[i:ja], b[i:jb]
	if len(ma)*len(mb) > 4_000_000 {
		for _, l := range ma {
			out = append(out, edit{'-', l})
		}
		for _, l := range mb {
			out = append(out, edit{'+', l})
		}
	} else {
		// lcs[x][y]: the longest common subsequence of ma[x:] and mb[y:].
		lcs := make([][]int32, len(ma)+1)
		for x := range lcs {
			lcs[x] = make([]int32, len(mb)+1)
		}
		for x := len(ma) - 1; x >= 0; x-- {
			for y := len(mb) - 1; y >= 0; y-- {
				if ma[x] == mb[y] {
					lcs[x][y] = lcs[x+1][y+1] + 1
				} else {
					lcs[x][y] = max(lcs[x+1][y], lcs[x][y+1])
				}
			}
		}
		x, y := 0, 0
		for x < len(ma) || y < len(mb) {
			switch {
			case x < len(ma) && y < len(mb) && ma[x] == mb[y]:
				out = append(out, edit{' ', ma[x]})
				x++
				y++
			case x < len(ma) && (y == len(mb) || lcs[x+1][y] >= lcs[x][y+1]):
				out = append(out, edit{'-', ma[x]})
				x++
			default:
				out = append(out, edit{'+', mb[y]})
				y++
			}
		}
	}
	for k := ja; k < len(a); k++ {
		out = append(out, edit{' ', a[k]})
	}
	return out
}

// unified formats the edits of a into b as hunks with ctx lines of
// context.
func unified(a, b []string, ctx int) string {
	edits := lineEdits(a, b)
	var sb strings.Builder
	for start := 0; start < len(edits); {
		// The next change.
		c := start
		for c < len(edits) && edits[c].kind == ' ' {
			c++
		}
		if c == len(edits) {
			break
		}
		lo := max(c-ctx, start)
		// Extend the hunk while changes are within 2*ctx of each other.
		hi, last := c, c
		for hi < len(edits) {
			if edits[hi].kind != ' ' {
				last = hi
			} else if hi-last > 2*ctx {
				break
			}
			hi++
		}
		hi = min(last+ctx+1, len(edits))
		// Line numbers at lo.
		na, nb := 1, 1
		for _, e := range edits[:lo] {
			if e.kind != '+' {
				na++
			}
			if e.kind != '-' {
				nb++
			}
		}
		ca, cb := 0, 0
		for _, e := range edits[lo:hi] {
			if e.kind != '+' {
				ca++
			}
			if e.kind != '-' {
				cb++
			}
		}
		fmt.Fprintf(&sb, "@@ -%s +%s @@\n", span(na, ca), span(nb, cb))
		for _, e := range edits[lo:hi] {
			sb.WriteByte(e.kind)
			sb.WriteString(e.text)
			if !strings.HasSuffix(e.text, "\n") {
				sb.WriteString("\n\\ No newline at end of file\n")
			}
		}
		start = hi
	}
	return sb.String()
}

func span(start, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", start-1)
	}
	if n == 1 {
		return fmt.Sprint(start)
	}
	return fmt.Sprintf("%d,%d", start, n)
}
