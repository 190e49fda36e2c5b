// Package textdiff shows how a card's text changed, line by line: the
// description and the input schema a user approved (or a plan pinned)
// against what the card says now. It is meant for the short texts cards
// carry, not for files.
package textdiff

import (
	"bytes"
	"encoding/json"
	"strings"
)

// MaxLines bounds each side of a diff: the longest-common-subsequence table
// is len(a)×len(b), so longer texts are compared as wholes (every old line
// removed, every new line added) rather than cost quadratic memory.
const MaxLines = 2000

// Lines diffs two texts line by line: unchanged lines start with "  ",
// removed ones with "- ", added ones with "+ ".
func Lines(old, new string) []string {
	return diff(split(old), split(new))
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

// diff is a longest-common-subsequence diff of a and b.
func diff(a, b []string) []string {
	n, m := len(a), len(b)
	out := make([]string, 0, max(n, m))
	if n > MaxLines || m > MaxLines {
		for _, l := range a {
			out = append(out, "- "+l)
		}
		for _, l := range b {
			out = append(out, "+ "+l)
		}
		return out
	}
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	i, j := 0, 0
	for i < n && j < m {
		switch {
		case a[i] == b[j]:
			out = append(out, "  "+a[i])
			i++
			j++
		case lcs[i+1][j] >= lcs[i][j+1]:
			out = append(out, "- "+a[i])
			i++
		default:
			out = append(out, "+ "+b[j])
			j++
		}
	}
	for ; i < n; i++ {
		out = append(out, "- "+a[i])
	}
	for ; j < m; j++ {
		out = append(out, "+ "+b[j])
	}
	return out
}
