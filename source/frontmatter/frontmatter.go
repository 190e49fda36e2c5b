package frontmatter

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// Document is a parsed Markdown file.
type Document struct {
	// HasFrontmatter reports whether the file opens with a "---" line.
	HasFrontmatter bool
	// Closed reports whether the frontmatter block has its closing line.
	// An unclosed block is read up to the first line that cannot belong
	// to it.
	Closed bool
	// Fields holds the top-level keys. Values are string, []any (of
	// strings, lists and maps) or map[string]any.
	Fields map[string]any
	// Keys lists the top-level keys in file order.
	Keys []string
	// Lines gives the 1-based line of each top-level key.
	Lines map[string]int
	// Body is the text after the frontmatter (all of it when there is none),
	// normalized (LF line ends, valid UTF-8).
	Body string
	// BodyLine is the 1-based line where Body starts.
	BodyLine int
	// Lenient reports that strict YAML failed and Fields come from the line reader.
	Lenient bool
	// YAMLError is why strict YAML failed, when Lenient is set.
	YAMLError error
	// YAMLLine is the 1-based file line YAMLError points at, or 0.
	YAMLLine int
	// Notes lists what was repaired on the way: a byte order mark, CRLF
	// line ends, invalid UTF-8, an unclosed block, lines the reader could
	// not place. Each is a short lowercase sentence.
	Notes []string

	raw      map[string]string // text after "key:" on the key's own line
	unplaced []int             // lines the line reader could not place
}

// maxAliasDepth bounds alias resolution while converting YAML nodes, so a
// hostile file cannot make conversion explode.
const maxAliasDepth = 16

// yamlLine finds the line number in a YAML error message.
var yamlLine = regexp.MustCompile(`^yaml: line (\d+):`)

// Parse reads data as a Markdown file with optional frontmatter. It does
// not fail: whatever cannot be read is described in Notes.
func Parse(data []byte) *Document {
	d := &Document{Fields: map[string]any{}, Lines: map[string]int{}, raw: map[string]string{}, BodyLine: 1}
	text := d.normalize(data)

	first, rest, found := strings.Cut(text, "\n")
	if strings.TrimRight(first, " \t") != "---" {
		d.Body = text
		return d
	}
	if !found {
		rest = ""
	}
	d.HasFrontmatter = true
	lines := strings.Split(rest, "\n")
	end := -1
	for i, l := range lines {
		t := strings.TrimRight(l, " \t")
		if t == "---" || t == "..." {
			end = i
			break
		}
	}
	var block []string
	if end >= 0 {
		d.Closed = true
		block = lines[:end]
		d.Body = strings.Join(lines[end+1:], "\n")
		d.BodyLine = end + 3
	} else {
		// No closing line: the block runs while lines look like YAML
		// (keys at column 0, indented or blank lines, comments).
		n := 0
		for n < len(lines) && looksLikeFrontmatter(lines[n]) {
			n++
		}
		block = lines[:n]
		d.Body = strings.Join(lines[n:], "\n")
		d.BodyLine = n + 2
		d.Notes = append(d.Notes, "frontmatter is never closed with ---; read up to line "+fmt.Sprint(n+1))
	}
	d.parseBlock(block)
	return d
}

// normalize returns data as valid UTF-8 text with LF line ends.
func (d *Document) normalize(data []byte) string {
	switch {
	case bytes.HasPrefix(data, []byte{0xEF, 0xBB, 0xBF}):
		data = data[3:]
		d.Notes = append(d.Notes, "removed a UTF-8 byte order mark")
	case bytes.HasPrefix(data, []byte{0xFF, 0xFE}), bytes.HasPrefix(data, []byte{0xFE, 0xFF}):
		data = decodeUTF16(data)
		d.Notes = append(d.Notes, "decoded UTF-16 text")
	}
	if bytes.IndexByte(data, '\r') >= 0 {
		data = bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))
		data = bytes.ReplaceAll(data, []byte("\r"), []byte("\n"))
		d.Notes = append(d.Notes, "converted CRLF line ends")
	}
	if bytes.IndexByte(data, 0) >= 0 {
		data = bytes.ReplaceAll(data, []byte{0}, nil)
		d.Notes = append(d.Notes, "removed NUL bytes")
	}
	if utf8.Valid(data) {
		return string(data)
	}
	if !hasMultibyte(data) {
		d.Notes = append(d.Notes, "text is not UTF-8; read it as Latin-1")
		var b strings.Builder
		b.Grow(len(data) * 2)
		for _, c := range data {
			b.WriteRune(rune(c))
		}
		return b.String()
	}
	d.Notes = append(d.Notes, "replaced invalid UTF-8 bytes with U+FFFD")
	return strings.ToValidUTF8(string(data), "\uFFFD")
}

// hasMultibyte reports whether data holds at least one valid multi-byte
// UTF-8 sequence, a sign that the file is UTF-8 with a few bad bytes
// rather than a single-byte encoding.
func hasMultibyte(data []byte) bool {
	for len(data) > 0 {
		r, n := utf8.DecodeRune(data)
		if r != utf8.RuneError && n > 1 {
			return true
		}
		data = data[n:]
	}
	return false
}

func decodeUTF16(data []byte) []byte {
	big := data[0] == 0xFE
	data = data[2:]
	u := make([]uint16, 0, len(data)/2)
	for i := 0; i+1 < len(data); i += 2 {
		if big {
			u = append(u, uint16(data[i])<<8|uint16(data[i+1]))
		} else {
			u = append(u, uint16(data[i+1])<<8|uint16(data[i]))
		}
	}
	return []byte(string(utf16.Decode(u)))
}

func looksLikeFrontmatter(l string) bool {
	if strings.TrimSpace(l) == "" || l[0] == ' ' || l[0] == '\t' {
		return true
	}
	if l[0] == '#' {
		return false // more likely a Markdown heading than a YAML comment
	}
	_, _, ok := splitKey(l)
	return ok
}

// parseBlock fills Fields from the lines between the fences.
func (d *Document) parseBlock(block []string) {
	src := strings.Join(block, "\n")
	keys, lines := d.readLines(block) // always: raw values and key lines
	if strings.TrimSpace(src) == "" {
		return
	}
	var root yaml.Node
	err := yaml.Unmarshal([]byte(src), &root)
	if err == nil {
		m, ok := mappingOf(&root)
		if ok {
			d.Fields = map[string]any{}
			d.Keys = d.Keys[:0]
			for i := 0; i+1 < len(m.Content); i += 2 {
				k, v := m.Content[i], m.Content[i+1]
				key := k.Value
				if _, dup := d.Fields[key]; !dup {
					d.Keys = append(d.Keys, key)
				}
				d.Fields[key] = convert(v, 0)
				d.Lines[key] = k.Line + 1
			}
			return
		}
		err = fmt.Errorf("frontmatter is not a key: value mapping")
	}
	d.Lenient = true
	d.YAMLError = err
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		n, _ := strconv.Atoi(m[1])
		d.YAMLLine = n + 1 // the block starts on the file's second line
	}
	d.Fields = keys
	d.Lines = lines
	for _, n := range d.unplaced {
		d.Notes = append(d.Notes, fmt.Sprintf("line %d is not key: value; ignored", n))
	}
}

// mappingOf returns the top-level mapping node of a document.
func mappingOf(n *yaml.Node) (*yaml.Node, bool) {
	if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = n.Content[0]
	}
	if n.Kind != yaml.MappingNode {
		return nil, false
	}
	return n, true
}

// convert turns a YAML node into string, []any or map[string]any,
// keeping scalars as the text the author wrote.
func convert(n *yaml.Node, depth int) any {
	if n == nil || depth > maxAliasDepth {
		return ""
	}
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return ""
		}
		return n.Value
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			out = append(out, convert(c, depth+1))
		}
		return out
	case yaml.MappingNode:
		out := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			out[n.Content[i].Value] = convert(n.Content[i+1], depth+1)
		}
		return out
	case yaml.AliasNode:
		return convert(n.Alias, depth+1)
	case yaml.DocumentNode:
		if len(n.Content) == 1 {
			return convert(n.Content[0], depth+1)
		}
	}
	return ""
}

// Has reports whether the frontmatter sets key.
func (d *Document) Has(key string) bool {
	_, ok := d.Fields[key]
	return ok
}

// Line returns the 1-based line of key in the file, or 0.
func (d *Document) Line(key string) int { return d.Lines[key] }

// String returns key's value as text: a scalar as written; a list or map
// as the text on the key's line when there is one (so an unquoted
// "argument-hint: [path]" stays "[path]"), else list items joined with
// ", ". It returns "" when the key is absent.
func (d *Document) String(key string) string {
	v, ok := d.Fields[key]
	if !ok {
		return ""
	}
	switch v := v.(type) {
	case string:
		return strings.TrimSpace(v)
	case []any:
		if r := strings.TrimSpace(d.raw[key]); r != "" {
			return r
		}
		return strings.Join(flatten(v), ", ")
	}
	return strings.TrimSpace(d.raw[key])
}

// List returns key's value as a list: a YAML list item by item, a string
// split on commas outside brackets ("Read, Bash(git add:*)"), a flow list
// written as text "[a, b]" unwrapped. Items are trimmed and unquoted;
// empty items are dropped. It returns nil when the key is absent or empty.
func (d *Document) List(key string) []string {
	v, ok := d.Fields[key]
	if !ok {
		return nil
	}
	var items []string
	switch v := v.(type) {
	case string:
		items = SplitList(v)
	case []any:
		items = flatten(v)
	}
	out := items[:0]
	for _, s := range items {
		if s = unquote(strings.TrimSpace(s)); s != "" {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// Map returns key's value when it is a mapping.
func (d *Document) Map(key string) map[string]any {
	m, _ := d.Fields[key].(map[string]any)
	return m
}

// flatten returns the scalar items of a list, nested lists inlined.
func flatten(v []any) []string {
	var out []string
	for _, x := range v {
		switch x := x.(type) {
		case string:
			out = append(out, x)
		case []any:
			out = append(out, flatten(x)...)
		}
	}
	return out
}

// SplitList splits a comma-separated list, ignoring commas inside
// brackets and quotes, and unwraps one enclosing [...].
func SplitList(s string) []string {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
		s = s[1 : len(s)-1]
	}
	var out []string
	depth := 0
	var quote rune
	start := 0
	for i, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '"' || r == '\'':
			// A quote opens a quoted item only at its start.
			if strings.TrimSpace(s[start:i]) == "" {
				quote = r
			}
		case r == '(' || r == '[' || r == '{':
			depth++
		case (r == ')' || r == ']' || r == '}') && depth > 0:
			depth--
		case r == ',' && depth == 0:
			out = append(out, strings.TrimSpace(s[start:i]))
			start = i + 1
		}
	}
	out = append(out, strings.TrimSpace(s[start:]))
	kept := out[:0]
	for _, x := range out {
		if x = unquote(x); x != "" {
			kept = append(kept, x)
		}
	}
	return kept
}
