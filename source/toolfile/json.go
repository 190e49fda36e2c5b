package toolfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// wrapperKeys name the fields under which a wrapping object lists tools:
// "tools" in MCP tools/list results and in OpenAI and Anthropic request
// bodies, "functions" in the legacy OpenAI function-calling body.
var wrapperKeys = []string{"tools", "functions"}

// maxWrapDepth bounds how deep wrappers may nest ({"result":{"tools":[…]}}).
const maxWrapDepth = 3

// jsonItems reads a JSON document: one tool, a list, or a wrapper. When
// the document holds several top-level objects, it is read as JSONL.
func (p *parser) jsonItems() ([]item, error) {
	dec := json.NewDecoder(bytes.NewReader(p.data))
	var top json.RawMessage
	if err := dec.Decode(&top); err != nil {
		return nil, p.syntaxError(p.data, 0, err)
	}
	end := int(dec.InputOffset())
	if len(bytes.TrimSpace(p.data[end:])) > 0 {
		if top[0] == '{' {
			return p.concatenatedItems(), nil
		}
		off := end + (len(p.data[end:]) - len(bytes.TrimLeft(p.data[end:], " \t\r\n")))
		return nil, p.errAt(off, errors.New("unexpected data after the top-level JSON value"))
	}
	start := skipSpace(p.data, 0)
	return p.listItems(top, start, 0)
}

// listItems finds the tools in the JSON value raw, found at offset base
// of the file.
func (p *parser) listItems(raw []byte, base, depth int) ([]item, error) {
	switch raw[0] {
	case '[':
		elems, err := elements(raw, base)
		if err != nil {
			return nil, p.errAt(base, err)
		}
		items := make([]item, len(elems))
		for i, e := range elems {
			line, col := p.position(e.off)
			items[i] = item{raw: e.raw, line: line, col: col, index: i + 1}
		}
		return items, nil
	case '{':
		ms, err := members(raw, base)
		if err != nil {
			return nil, p.errAt(base, err)
		}
		if m, ok := wrapped(ms, depth); ok {
			return p.listItems(m.raw, m.off, depth+1)
		}
		line, col := p.position(base)
		return []item{{raw: raw, line: line, col: col}}, nil
	}
	return nil, p.errAt(base, fmt.Errorf("the file holds %s; want a tool object, a list of tools or {\"tools\": [...]}", kindOf(raw)))
}

// wrapped reports whether an object with these members wraps a list of
// tools rather than being a tool: it has no "name" and no "function" but
// a wrapper key holding a list, or a "result" holding such an object.
func wrapped(ms []span, depth int) (span, bool) {
	if depth >= maxWrapDepth {
		return span{}, false
	}
	for _, m := range ms {
		if m.key == "name" || m.key == "function" {
			return span{}, false
		}
	}
	for _, k := range wrapperKeys {
		for _, m := range ms {
			if m.key == k && m.raw[0] == '[' {
				return m, true
			}
		}
	}
	for _, m := range ms {
		if m.key == "result" && m.raw[0] == '{' {
			inner, err := members(m.raw, m.off)
			if err != nil {
				return span{}, false
			}
			if _, ok := wrapped(inner, depth+1); ok {
				return m, true
			}
		}
	}
	return span{}, false
}

// concatenatedItems reads a document of several top-level objects: JSONL,
// or pretty-printed objects one after another. Lines are tried first, so
// that one bad line of a JSONL file spoils only itself; when the lines do
// not each hold a value but the objects decode as a stream, the stream
// is used.
func (p *parser) concatenatedItems() []item {
	lines := p.jsonlItems()
	bad := false
	for _, it := range lines {
		bad = bad || it.err != nil
	}
	if !bad {
		return lines
	}
	dec := json.NewDecoder(bytes.NewReader(p.data))
	var items []item
	for {
		start := skipSpace(p.data, int(dec.InputOffset()))
		var v json.RawMessage
		err := dec.Decode(&v)
		if err == io.EOF {
			return items
		}
		if err != nil {
			return lines
		}
		line, col := p.position(start)
		items = append(items, item{raw: v, line: line, col: col, index: len(items) + 1})
	}
}

// jsonlItems reads one tool a line; blank lines are skipped. A line that
// is not a JSON object becomes an item carrying its error.
func (p *parser) jsonlItems() []item {
	var items []item
	off := 0
	for lineNo := 1; off < len(p.data); lineNo++ {
		end := bytes.IndexByte(p.data[off:], '\n')
		if end < 0 {
			end = len(p.data)
		} else {
			end += off
		}
		line := p.data[off:end]
		lineStart := off
		off = end + 1
		trimmed := bytes.TrimSpace(line)
		if len(trimmed) == 0 {
			continue
		}
		start := lineStart + (len(line) - len(bytes.TrimLeft(line, " \t\r")))
		if !json.Valid(trimmed) {
			err := json.Unmarshal(trimmed, new(json.RawMessage))
			items = append(items, item{line: lineNo, err: p.syntaxError(trimmed, start, err)})
			continue
		}
		col := 1 + utf8.RuneCount(p.data[lineStart:start])
		items = append(items, item{raw: trimmed, line: lineNo, col: col})
	}
	return items
}

// syntaxError locates a JSON decoding error of data, which starts at
// offset base of the file.
func (p *parser) syntaxError(data []byte, base int, err error) error {
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se) && strings.HasPrefix(se.Error(), "unexpected end of JSON"):
		return p.errAt(base+len(data), errors.New("invalid JSON: unexpected end of data"))
	case errors.As(err, &se):
		return p.errAt(base+int(se.Offset)-1, fmt.Errorf("invalid JSON: %w", err))
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return p.errAt(base+len(data), errors.New("invalid JSON: unexpected end of data"))
	}
	return p.errAt(base, fmt.Errorf("invalid JSON: %w", err))
}

// span is a JSON value found inside another, with its offset in the file
// and, for an object member, its key.
type span struct {
	key string
	raw json.RawMessage
	off int
}

// elements splits the JSON array raw, found at offset base, into its
// elements.
func elements(raw []byte, base int) ([]span, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	var out []span
	for dec.More() {
		start := skipSpace(raw, int(dec.InputOffset()))
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, span{raw: v, off: base + start})
	}
	return out, nil
}

// members splits the JSON object raw, found at offset base, into its
// members.
func members(raw []byte, base int) ([]span, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	var out []span
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		start := skipSpace(raw, int(dec.InputOffset()))
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, span{key: key, raw: v, off: base + start})
	}
	return out, nil
}

// skipSpace returns the offset of the first byte at or after off that is
// neither white space nor a separator, i.e. the start of the next value.
func skipSpace(data []byte, off int) int {
	for off < len(data) {
		switch data[off] {
		case ' ', '\t', '\r', '\n', ',', ':':
			off++
		default:
			return off
		}
	}
	return off
}

// kindOf names the kind of the JSON value raw, for error messages.
func kindOf(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "a list"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}
