package frontmatter

import (
	"fmt"
	"strconv"
	"strings"
)

// entry is one top-level key as the line reader sees it.
type entry struct {
	key    string
	line   int      // 1-based line in the file
	inline string   // text after "key:" on the key's line
	cont   []string // following lines that belong to the key, as written
}

// readLines is the lenient reader. It returns the fields and their lines,
// and always records each key's raw inline text in d.raw and the key order
// in d.Keys (the YAML reader, when it succeeds, replaces Fields, Keys and
// Lines but keeps raw).
func (d *Document) readLines(block []string) (map[string]any, map[string]int) {
	entries, unplaced := scan(block, 2)
	fields := make(map[string]any, len(entries))
	lines := make(map[string]int, len(entries))
	d.Keys = d.Keys[:0]
	for _, e := range entries {
		if _, dup := fields[e.key]; dup {
			d.Notes = append(d.Notes, fmt.Sprintf("key %q is set twice; line %d wins", e.key, e.line))
		} else {
			d.Keys = append(d.Keys, e.key)
		}
		fields[e.key] = e.value(0)
		lines[e.key] = e.line
		d.raw[e.key] = strings.TrimSpace(e.inline)
	}
	if len(unplaced) > 0 {
		d.unplaced = unplaced
	}
	return fields, lines
}

// scan groups lines into entries. first is the file line of block[0].
// It returns the lines that belong to no key.
func scan(block []string, first int) (entries []*entry, unplaced []int) {
	var cur *entry
	for i, l := range block {
		switch {
		case strings.TrimSpace(l) == "":
			if cur != nil {
				cur.cont = append(cur.cont, "")
			}
			continue
		case l[0] == ' ' || l[0] == '\t':
			if cur != nil {
				cur.cont = append(cur.cont, l)
			} else {
				unplaced = append(unplaced, first+i)
			}
			continue
		case l[0] == '#':
			continue
		case (l == "-" || strings.HasPrefix(l, "- ")) && cur != nil && strings.TrimSpace(cur.inline) == "":
			// A list at the key's own indent: "tools:\n- Read".
			cur.cont = append(cur.cont, l)
			continue
		}
		key, val, ok := splitKey(l)
		if !ok {
			unplaced = append(unplaced, first+i)
			continue
		}
		cur = &entry{key: key, line: first + i, inline: val}
		entries = append(entries, cur)
	}
	return entries, unplaced
}

// splitKey splits "key: value" at the first colon followed by a space or
// the end of the line. Keys hold no spaces; quoted keys are unquoted.
func splitKey(l string) (key, val string, ok bool) {
	for i := 0; i < len(l); i++ {
		c := l[i]
		if c == ':' && (i+1 == len(l) || l[i+1] == ' ' || l[i+1] == '\t') {
			key = unquote(strings.TrimSpace(l[:i]))
			if key == "" || strings.ContainsAny(key, " \t") && !strings.HasPrefix(l, "\"") && !strings.HasPrefix(l, "'") {
				return "", "", false
			}
			return key, l[i+1:], true
		}
		if c == ' ' || c == '\t' {
			// A key holds no spaces: "Note that: x" is prose, not a key.
			if l[0] != '"' && l[0] != '\'' {
				return "", "", false
			}
		}
	}
	return "", "", false
}

// value interprets the entry's text.
func (e *entry) value(depth int) any {
	inline := strings.TrimSpace(e.inline)
	if ind, ok := blockIndicator(inline); ok {
		return blockScalar(ind, e.cont)
	}
	cont := trimBlank(e.cont)
	if inline != "" {
		if strings.HasPrefix(inline, "[") {
			text := inline
			if !strings.HasSuffix(text, "]") && len(cont) > 0 {
				text = joinTrimmed(append([]string{inline}, cont...), " ")
			}
			if strings.HasSuffix(text, "]") {
				return toAny(SplitList(text))
			}
		}
		if len(cont) == 0 {
			return unquote(inline)
		}
		// A plain scalar continued on indented lines folds into one.
		return fold(append([]string{inline}, dedent(cont)...))
	}
	if len(cont) == 0 {
		return ""
	}
	firstLine := strings.TrimSpace(cont[0])
	switch {
	case firstLine == "-" || strings.HasPrefix(firstLine, "- "):
		return listItems(cont)
	case strings.HasPrefix(firstLine, "["):
		return toAny(SplitList(joinTrimmed(cont, " ")))
	}
	if depth < maxAliasDepth {
		if _, _, ok := splitKey(strings.TrimSpace(cont[0])); ok {
			sub, _ := scan(dedent(cont), e.line+1)
			m := make(map[string]any, len(sub))
			for _, s := range sub {
				m[s.key] = s.value(depth + 1)
			}
			return m
		}
	}
	return fold(dedent(cont))
}

// blockIndicator recognizes |, >, with optional chomping (+/-), an
// indentation digit and a trailing comment: "|-", ">2", "> # note".
func blockIndicator(s string) (string, bool) {
	if s == "" || (s[0] != '|' && s[0] != '>') {
		return "", false
	}
	rest := s[1:]
	if i := strings.Index(rest, " #"); i >= 0 {
		rest = rest[:i]
	}
	rest = strings.TrimSpace(rest)
	for _, c := range rest {
		if c != '+' && c != '-' && (c < '1' || c > '9') {
			return "", false
		}
	}
	return s[:1] + rest, true
}

// blockScalar builds a literal (|) or folded (>) block scalar.
func blockScalar(ind string, cont []string) string {
	// Trailing blank lines only matter for "keep" chomping.
	n := len(cont)
	for n > 0 && strings.TrimSpace(cont[n-1]) == "" {
		n--
	}
	trailing := len(cont) - n
	lines := dedent(cont[:n])
	var text string
	if ind[0] == '|' {
		text = strings.Join(lines, "\n")
	} else {
		text = fold(lines)
	}
	switch {
	case strings.Contains(ind, "-"):
	case strings.Contains(ind, "+"):
		text += strings.Repeat("\n", trailing+1)
	default:
		if text != "" {
			text += "\n"
		}
	}
	return text
}

// fold joins lines the way YAML folds: neighbours join with a space, a
// blank line becomes a newline, more-indented lines keep their breaks.
func fold(lines []string) string {
	var b strings.Builder
	prev := "" // "", "text", "blank", "indented"
	for _, l := range lines {
		switch {
		case strings.TrimSpace(l) == "":
			b.WriteByte('\n')
			prev = "blank"
		case l[0] == ' ' || l[0] == '\t':
			if prev != "" && prev != "blank" {
				b.WriteByte('\n')
			}
			b.WriteString(l)
			prev = "indented"
		default:
			switch prev {
			case "text":
				b.WriteByte(' ')
			case "indented":
				b.WriteByte('\n')
			}
			b.WriteString(strings.TrimSpace(l))
			prev = "text"
		}
	}
	return b.String()
}

// listItems reads "- item" lines at the first item's indent; deeper lines
// continue the item before them.
func listItems(cont []string) []any {
	indent := indentOf(cont[0])
	var items []string
	for _, l := range cont {
		t := strings.TrimSpace(l)
		if t == "" {
			continue
		}
		if indentOf(l) == indent && (t == "-" || strings.HasPrefix(t, "- ")) {
			items = append(items, strings.TrimSpace(strings.TrimPrefix(t, "-")))
			continue
		}
		if len(items) > 0 {
			items[len(items)-1] += " " + t
		}
	}
	out := make([]any, len(items))
	for i, s := range items {
		out[i] = unquote(s)
	}
	return out
}

func indentOf(l string) int { return len(l) - len(strings.TrimLeft(l, " \t")) }

// dedent removes the smallest indent shared by the non-blank lines.
func dedent(lines []string) []string {
	min := -1
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		if n := indentOf(l); min < 0 || n < min {
			min = n
		}
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		if len(l) >= min && min > 0 {
			out[i] = l[min:]
		} else {
			out[i] = strings.TrimLeft(l, " \t")
		}
	}
	return out
}

func trimBlank(lines []string) []string {
	for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

func joinTrimmed(lines []string, sep string) string {
	parts := make([]string, 0, len(lines))
	for _, l := range lines {
		if t := strings.TrimSpace(l); t != "" {
			parts = append(parts, t)
		}
	}
	return strings.Join(parts, sep)
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// unquote removes one pair of matching YAML quotes.
func unquote(s string) string {
	if len(s) < 2 {
		return s
	}
	switch {
	case s[0] == '"' && s[len(s)-1] == '"':
		if u, err := strconv.Unquote(s); err == nil {
			return u
		}
		return s[1 : len(s)-1]
	case s[0] == '\'' && s[len(s)-1] == '\'':
		return strings.ReplaceAll(s[1:len(s)-1], "''", "'")
	}
	return s
}
