package plan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"
)

// ParseError says why some text is not a plan, and where. It keeps the
// text as received, so a bad planner reply can be inspected.
type ParseError struct {
	// Raw is the text that was parsed, unchanged.
	Raw []byte
	// Line and Column locate the problem (1-based); zero when unknown.
	Line, Column int
	// Path is the JSON path of the offending value ("tasks[1].depends_on"),
	// empty for the whole document.
	Path string
	// Msg says what is wrong.
	Msg string
}

func (e *ParseError) Error() string {
	var b strings.Builder
	if e.Line > 0 {
		fmt.Fprintf(&b, "line %d, column %d: ", e.Line, e.Column)
	}
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// kind is the JSON type a schema node wants.
type kind int

const (
	kString kind = iota
	kArray
	kObject
	kAny // any JSON value (a pin's input schema)
)

func (k kind) String() string {
	return [...]string{"a string", "an array", "an object", "any JSON value"}[k]
}

// node is the shape of a plan, for checking a document against it.
type node struct {
	kind   kind
	elem   *node   // kArray
	fields []field // kObject, in schema order
}

type field struct {
	name     string
	node     *node
	required bool
}

var (
	stringNode = &node{kind: kString}
	planShape  = &node{kind: kObject, fields: []field{
		{name: "goal", node: stringNode, required: true},
		{name: "tasks", required: true, node: &node{kind: kArray, elem: &node{kind: kObject, fields: []field{
			{name: "id", node: stringNode, required: true},
			{name: "description", node: stringNode, required: true},
			{name: "agent_spec", node: &node{kind: kObject, fields: []field{
				{name: "name", node: stringNode},
				{name: "description", node: stringNode},
				{name: "instructions", node: stringNode},
			}}},
			{name: "instructions", node: stringNode},
			{name: "depends_on", node: &node{kind: kArray, elem: stringNode}},
			{name: "needs", node: &node{kind: kArray, elem: &node{kind: kObject, fields: []field{
				{name: "task", node: stringNode, required: true},
				{name: "output", node: stringNode},
			}}}},
			{name: "capabilities", node: &node{kind: kArray, elem: stringNode}},
		}}}},
		{name: "pins", node: &node{kind: kArray, elem: &node{kind: kObject, fields: []field{
			{name: "name", node: stringNode, required: true},
			{name: "digest", node: stringNode, required: true},
			{name: "description", node: stringNode},
			{name: "input_schema", node: &node{kind: kAny}},
		}}}},
	}}
)

var bom = []byte("\xef\xbb\xbf")

// Parse reads a plan from JSON, a plan file or a planner's reply, and
// checks it against the plan's shape: every field has its type, no field
// is unknown or repeated, goal and tasks are present, every task has a
// non-empty, unique id and a description. Fields a person may leave out
// of a hand-written plan (agent_spec, instructions, depends_on, needs,
// capabilities) default to empty; null counts as absent.
//
// Parse checks shape only; [Validate] checks the edges and capability
// names. An error is a [*ParseError] that keeps the input.
func Parse(data []byte) (*Plan, error) {
	p := &parser{raw: data, data: data}
	if bytes.HasPrefix(data, bom) {
		p.data, p.base = data[len(bom):], len(bom)
	}
	return p.parse()
}

// ParseReply is [Parse] for a model's reply: it also accepts the JSON
// wrapped in a Markdown code fence, which some models add even when
// asked for bare JSON.
func ParseReply(reply string) (*Plan, error) {
	data := []byte(reply)
	text := strings.TrimSpace(reply)
	if after, ok := strings.CutPrefix(text, "```"); ok {
		if i := strings.IndexByte(after, '\n'); i >= 0 {
			if body, ok := strings.CutSuffix(strings.TrimSpace(after[i+1:]), "```"); ok {
				pl, err := Parse([]byte(body))
				var pe *ParseError
				if errors.As(err, &pe) {
					// Report the problem against the reply as received.
					return nil, &ParseError{Raw: data, Path: pe.Path, Msg: pe.Msg}
				}
				return pl, err
			}
		}
	}
	return Parse(data)
}

type parser struct {
	raw   []byte // as given
	data  []byte // without a byte-order mark
	base  int    // len(raw) - len(data)
	dec   *json.Decoder
	tasks []int // offset of each task object, for errors found after decoding
}

func (p *parser) parse() (*Plan, error) {
	if len(bytes.TrimSpace(p.data)) == 0 {
		return nil, &ParseError{Raw: p.raw, Msg: "empty input: want a JSON plan object"}
	}
	p.dec = json.NewDecoder(bytes.NewReader(p.data))
	p.dec.UseNumber()
	if err := p.walk(planShape, ""); err != nil {
		return nil, err
	}
	if _, err := p.dec.Token(); err != io.EOF {
		return nil, p.errAt(p.start(p.dec.InputOffset()), "", "unexpected text after the plan object")
	}
	var pl Plan
	if err := json.Unmarshal(p.data, &pl); err != nil {
		// The walk accepts only what decodes; this is a bug if reached.
		return nil, &ParseError{Raw: p.raw, Msg: err.Error()}
	}
	if len(pl.Tasks) == 0 {
		return nil, &ParseError{Raw: p.raw, Path: "tasks", Msg: "the plan has no tasks"}
	}
	seen := make(map[string]int, len(pl.Tasks))
	for i, t := range pl.Tasks {
		path := fmt.Sprintf("tasks[%d]", i)
		switch {
		case strings.TrimSpace(t.ID) == "":
			return nil, p.errAt(p.tasks[i], path+".id", "empty task id")
		case strings.TrimSpace(t.Description) == "":
			return nil, p.errAt(p.tasks[i], path+".description", fmt.Sprintf("task %q has no description", t.ID))
		}
		if j, dup := seen[t.ID]; dup {
			return nil, p.errAt(p.tasks[i], path+".id", fmt.Sprintf("id %q is already the id of tasks[%d]", t.ID, j))
		}
		seen[t.ID] = i
	}
	return &pl, nil
}

// walk reads one value and checks it against n.
func (p *parser) walk(n *node, path string) error {
	off := p.start(p.dec.InputOffset())
	if n.kind == kAny {
		var v json.RawMessage
		if err := p.dec.Decode(&v); err != nil {
			return p.tokenErr(err, off, path)
		}
		return nil
	}
	tok, err := p.dec.Token()
	if err != nil {
		return p.tokenErr(err, off, path)
	}
	got := describe(tok)
	switch n.kind {
	case kString:
		if _, ok := tok.(string); !ok {
			return p.errAt(off, path, "want a string, got "+got)
		}
	case kArray:
		if tok != json.Delim('[') {
			return p.errAt(off, path, "want an array, got "+got)
		}
		for i := 0; p.dec.More(); i++ {
			elemPath := fmt.Sprintf("%s[%d]", path, i)
			if path == "tasks" {
				p.tasks = append(p.tasks, p.start(p.dec.InputOffset()))
			}
			if err := p.walkNullable(n.elem, elemPath, false); err != nil {
				return err
			}
		}
		if _, err := p.dec.Token(); err != nil {
			return p.tokenErr(err, p.start(p.dec.InputOffset()), path)
		}
	case kObject:
		if tok != json.Delim('{') {
			return p.errAt(off, path, "want an object, got "+got)
		}
		seen := map[string]bool{}
		for p.dec.More() {
			keyOff := p.start(p.dec.InputOffset())
			kt, err := p.dec.Token()
			if err != nil {
				return p.tokenErr(err, keyOff, path)
			}
			key := kt.(string) // object keys are always strings
			fpath := join(path, key)
			i := slices.IndexFunc(n.fields, func(f field) bool { return f.name == key })
			if i < 0 {
				return p.errAt(keyOff, fpath, fmt.Sprintf("unknown field %q (want %s)", key, fieldList(n)))
			}
			if seen[key] {
				return p.errAt(keyOff, fpath, fmt.Sprintf("field %q appears twice", key))
			}
			seen[key] = true
			if err := p.walkNullable(n.fields[i].node, fpath, n.fields[i].required); err != nil {
				return err
			}
		}
		if _, err := p.dec.Token(); err != nil {
			return p.tokenErr(err, p.start(p.dec.InputOffset()), path)
		}
		for _, f := range n.fields {
			if f.required && !seen[f.name] {
				return p.errAt(off, path, fmt.Sprintf("missing field %q", f.name))
			}
		}
	}
	return nil
}

// walkNullable is walk, accepting null for a value that is not required.
func (p *parser) walkNullable(n *node, path string, required bool) error {
	if !required && p.peekNull() {
		_, err := p.dec.Token()
		return err
	}
	return p.walk(n, path)
}

// peekNull reports whether the next value is the literal null.
func (p *parser) peekNull() bool {
	off := p.start(p.dec.InputOffset()) - p.base
	return bytes.HasPrefix(p.data[off:], []byte("null"))
}

// start returns the offset in raw of the first byte of the next value or
// key after decoder offset off: past spaces, ':' and ','.
func (p *parser) start(off int64) int {
	i := int(off)
	for i < len(p.data) {
		switch p.data[i] {
		case ' ', '\t', '\r', '\n', ':', ',':
			i++
			continue
		}
		break
	}
	return i + p.base
}

func (p *parser) tokenErr(err error, off int, path string) error {
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		// Offset counts the bytes read, the bad one included; a bad first
		// byte of a value is reported at the value.
		return p.errAt(max(int(se.Offset)+p.base-1, off), path, "invalid JSON: "+strings.TrimPrefix(se.Error(), "json: "))
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return p.errAt(len(p.raw), path, "unexpected end of input (is the reply truncated?)")
	}
	return p.errAt(off, path, err.Error())
}

// errAt returns a ParseError at byte offset off of raw.
func (p *parser) errAt(off int, path, msg string) *ParseError {
	line, col := position(p.raw, off)
	return &ParseError{Raw: p.raw, Line: line, Column: col, Path: path, Msg: msg}
}

// position turns a byte offset into a 1-based line and column (in runes).
func position(data []byte, off int) (line, col int) {
	off = max(0, min(off, len(data)))
	before := data[:off]
	line = bytes.Count(before, []byte("\n")) + 1
	if i := bytes.LastIndexByte(before, '\n'); i >= 0 {
		before = before[i+1:]
	}
	return line, utf8.RuneCount(before) + 1
}

func describe(tok json.Token) string {
	switch v := tok.(type) {
	case json.Delim:
		if v == '{' {
			return "an object"
		}
		return "an array"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", tok)
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func fieldList(n *node) string {
	names := make([]string, len(n.fields))
	for i, f := range n.fields {
		names[i] = f.name
	}
	return strings.Join(names, ", ")
}
