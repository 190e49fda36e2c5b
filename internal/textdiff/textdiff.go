package textdiff

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// MaxCells bounds the longest-common-subsequence table, which is the
// product of the line counts of the two sides once their common head and
// tail are set aside: a larger middle is shown whole (every old line
// removed, then every new line added) rather than cost quadratic memory.
const MaxCells = 4_000_000

// Op is what an [Edit] does to a line.
type Op byte

// Operations, as diffs print them.
const (
	Keep   Op = ' '
	Remove Op = '-'
	Add    Op = '+'
)

// Edit is one line of a diff.
type Edit struct {
	Op   Op
	Text string
}

// Edits diffs a and b: the common head and tail are kept, the lines
// between them are matched by longest common subsequence (see
// [MaxCells]).
func Edits(a, b []string) []Edit {
	out := make([]Edit, 0, max(len(a), len(b)))
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		out = append(out, Edit{Keep, a[i]})
		i++
	}
	ja, jb := len(a), len(b)
	for ja > i && jb > i && a[ja-1] == b[jb-1] {
		ja--
		jb--
	}
	out = middle(out, a[i:ja], b[i:jb])
	for _, l := range a[ja:] {
		out = append(out, Edit{Keep, l})
	}
	return out
}

// middle appends the edits of a into b, which share no head or tail.
func middle(out []Edit, a, b []string) []Edit {
	n, m := len(a), len(b)
	if n*m > MaxCells {
		for _, l := range a {
			out = append(out, Edit{Remove, l})
		}
		for _, l := range b {
			out = append(out, Edit{Add, l})
		}
		return out
	}
	// lcs[x][y] is the longest common subsequence of a[x:] and b[y:].
	lcs := make([][]int32, n+1)
	for x := range lcs {
		lcs[x] = make([]int32, m+1)
	}
	for x := n - 1; x >= 0; x-- {
		for y := m - 1; y >= 0; y-- {
			if a[x] == b[y] {
				lcs[x][y] = lcs[x+1][y+1] + 1
			} else {
				lcs[x][y] = max(lcs[x+1][y], lcs[x][y+1])
			}
		}
	}
	x, y := 0, 0
	for x < n || y < m {
		switch {
		case x < n && y < m && a[x] == b[y]:
			out = append(out, Edit{Keep, a[x]})
			x++
			y++
		case x < n && (y == m || lcs[x+1][y] >= lcs[x][y+1]):
			out = append(out, Edit{Remove, a[x]})
			x++
		default:
			out = append(out, Edit{Add, b[y]})
			y++
		}
	}
	return out
}

// Lines diffs two texts line by line: unchanged lines start with "  ",
// removed ones with "- ", added ones with "+ ".
func Lines(old, new string) []string {
	edits := Edits(split(old), split(new))
	out := make([]string, len(edits))
	for i, e := range edits {
		out[i] = string(e.Op) + " " + e.Text
	}
	return out
}

// JSON is raw as indented JSON, one member a line, so that a schema diffs
// by property; raw that is not JSON comes back as it is, and empty raw as "".
func JSON(raw json.RawMessage) string {
	if len(bytes.TrimSpace(raw)) == 0 {
		return ""
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	out, _ := json.MarshalIndent(v, "", "  ")
	return string(out)
}

func split(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// Unified is the change of old into new as the hunks of a unified diff
// ("@@ -l,n +l,n @@" and the lines, context lines of context around each
// change), without the "---"/"+++" header; a text that does not end in a
// newline is marked "\ No newline at end of file". Equal texts give "".
func Unified(old, new string, context int) string {
	edits := Edits(splitAfter(old), splitAfter(new))
	var sb strings.Builder
	for start := 0; start < len(edits); {
		c := start // the next change
		for c < len(edits) && edits[c].Op == Keep {
			c++
		}
		if c == len(edits) {
			break
		}
		lo := max(c-context, start)
		// Extend the hunk while changes are within 2*context of each other.
		hi, last := c, c
		for hi < len(edits) {
			if edits[hi].Op != Keep {
				last = hi
			} else if hi-last > 2*context {
				break
			}
			hi++
		}
		hi = min(last+context+1, len(edits))
		na, nb := count(edits[:lo]) // line numbers at lo, less one
		ca, cb := count(edits[lo:hi])
		fmt.Fprintf(&sb, "@@ -%s +%s @@\n", span(na+1, ca), span(nb+1, cb))
		for _, e := range edits[lo:hi] {
			sb.WriteByte(byte(e.Op))
			sb.WriteString(e.Text)
			if !strings.HasSuffix(e.Text, "\n") {
				sb.WriteString("\n\\ No newline at end of file\n")
			}
		}
		start = hi
	}
	return sb.String()
}

// count returns how many lines of the old and of the new text edits span.
func count(edits []Edit) (old, new int) {
	for _, e := range edits {
		if e.Op != Add {
			old++
		}
		if e.Op != Remove {
			new++
		}
	}
	return old, new
}

// splitAfter splits s into lines that keep their "\n".
func splitAfter(s string) []string {
	if s == "" {
		return nil
	}
	l := strings.SplitAfter(s, "\n")
	if l[len(l)-1] == "" {
		l = l[:len(l)-1]
	}
	return l
}

func span(start, n int) string {
	switch n {
	case 0:
		return fmt.Sprintf("%d,0", start-1)
	case 1:
		return fmt.Sprint(start)
	}
	return fmt.Sprintf("%d,%d", start, n)
}
