package toolfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// Limits that keep hostile YAML (alias bombs, deep nesting) from
// exhausting memory or the stack while it is turned into JSON.
const (
	maxYAMLDepth = 1000
	maxYAMLNodes = 1 << 20
	maxYAMLBytes = 32 << 20
)

// yamlItems reads every document of a YAML stream and finds the tools in
// each, as jsonItems does for JSON.
func (p *parser) yamlItems() (items []item, err error) {
	defer func() {
		// The YAML library has panicked on malformed input before; a
		// panic must not take the caller down.
		if r := recover(); r != nil {
			items, err = nil, &Error{File: p.file, Err: fmt.Errorf("invalid YAML: %v", r)}
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(p.data))
	docs := 0
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, p.yamlError(err)
		}
		docs++
		if len(doc.Content) == 0 {
			continue
		}
		its, err := p.yamlList(doc.Content[0], 0)
		if err != nil {
			return nil, err
		}
		items = append(items, its...)
	}
	if docs == 0 {
		return nil, &Error{File: p.file, Err: ErrEmpty}
	}
	return items, nil
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// yamlError turns a YAML library error into an *Error with its line.
func (p *parser) yamlError(err error) error {
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		line, _ := strconv.Atoi(m[1])
		return &Error{File: p.file, Line: line, Err: fmt.Errorf("invalid YAML: %s", m[2])}
	}
	return &Error{File: p.file, Err: fmt.Errorf("invalid YAML: %w", err)}
}

// yamlList finds the tools in the YAML node n: a list, a wrapper or one tool.
func (p *parser) yamlList(n *yaml.Node, depth int) ([]item, error) {
	n = resolveAlias(n)
	switch n.Kind {
	case yaml.SequenceNode:
		items := make([]item, len(n.Content))
		for i, e := range n.Content {
			items[i] = p.yamlItem(e, i+1)
		}
		return items, nil
	case yaml.MappingNode:
		if w := yamlWrapped(n, depth); w != nil {
			return p.yamlList(w, depth+1)
		}
		return []item{p.yamlItem(n, 0)}, nil
	}
	return nil, &Error{File: p.file, Line: n.Line, Col: n.Column,
		Err: fmt.Errorf("the file holds a %s; want a tool mapping, a list of tools or tools: [...]", yamlKind(n))}
}

// yamlWrapped is wrapped for YAML: it returns the node to read instead of
// n when n wraps a list of tools, else nil.
func yamlWrapped(n *yaml.Node, depth int) *yaml.Node {
	if depth >= maxWrapDepth {
		return nil
	}
	get := func(key string) *yaml.Node {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Kind == yaml.ScalarNode && n.Content[i].Value == key {
				return resolveAlias(n.Content[i+1])
			}
		}
		return nil
	}
	if get("name") != nil || get("function") != nil {
		return nil
	}
	for _, k := range wrapperKeys {
		if v := get(k); v != nil && v.Kind == yaml.SequenceNode {
			return v
		}
	}
	if v := get("result"); v != nil && v.Kind == yaml.MappingNode && yamlWrapped(v, depth+1) != nil {
		return v
	}
	return nil
}

// resolveAlias follows aliases (a bounded number of times).
func resolveAlias(n *yaml.Node) *yaml.Node {
	for i := 0; n.Kind == yaml.AliasNode && n.Alias != nil && i < 100; i++ {
		n = n.Alias
	}
	return n
}

// yamlItem converts one tool node to JSON.
func (p *parser) yamlItem(n *yaml.Node, index int) item {
	it := item{line: n.Line, col: n.Column, index: index}
	c := &yamlConv{active: map[*yaml.Node]bool{}}
	var buf bytes.Buffer
	if err := c.write(&buf, n, 0); err != nil {
		it.err = &Error{File: p.file, Line: n.Line, Col: n.Column, Item: index, Err: err}
		return it
	}
	it.raw = buf.Bytes()
	return it
}

func yamlKind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "list"
	case yaml.MappingNode:
		return "mapping"
	case yaml.ScalarNode:
		if n.ShortTag() == "!!null" {
			return "null"
		}
		return "scalar (" + n.ShortTag() + ")"
	}
	return "value"
}

// yamlConv writes YAML nodes as JSON, keeping mapping order.
type yamlConv struct {
	nodes  int
	active map[*yaml.Node]bool // aliases being expanded, to catch cycles
}

// errTooBig stops conversions that aliases or merge keys blow up.
var errTooBig = errors.New("YAML expands to too many values (alias bomb?)")

// spend counts n more values visited and fails past the budget.
func (c *yamlConv) spend(n int) error {
	c.nodes += n
	if c.nodes > maxYAMLNodes {
		return errTooBig
	}
	return nil
}

func (c *yamlConv) write(buf *bytes.Buffer, n *yaml.Node, depth int) error {
	if err := c.spend(1); err != nil {
		return err
	}
	if buf.Len() > maxYAMLBytes {
		return errTooBig
	}
	if depth > maxYAMLDepth {
		return fmt.Errorf("line %d: YAML nested more than %d deep", n.Line, maxYAMLDepth)
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			buf.WriteString("null")
			return nil
		}
		return c.write(buf, n.Content[0], depth+1)
	case yaml.AliasNode:
		if n.Alias == nil {
			return fmt.Errorf("line %d: alias *%s has no anchor", n.Line, n.Value)
		}
		if c.active[n.Alias] {
			return fmt.Errorf("line %d: alias *%s refers to itself", n.Line, n.Value)
		}
		c.active[n.Alias] = true
		defer delete(c.active, n.Alias)
		return c.write(buf, n.Alias, depth+1)
	case yaml.SequenceNode:
		buf.WriteByte('[')
		for i, e := range n.Content {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := c.write(buf, e, depth+1); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
		return nil
	case yaml.MappingNode:
		pairs, err := c.pairs(n, depth)
		if err != nil {
			return err
		}
		buf.WriteByte('{')
		for i, kv := range pairs {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := writeJSON(buf, kv.key); err != nil {
				return err
			}
			buf.WriteByte(':')
			if err := c.write(buf, kv.val, depth+1); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
		return nil
	case yaml.ScalarNode:
		return scalarJSON(buf, n)
	}
	return fmt.Errorf("line %d: unexpected YAML node", n.Line)
}

type yamlPair struct {
	key string
	val *yaml.Node
}

// pairs lists a mapping's entries in order, applying merge keys ("<<"):
// merged entries come first and explicit entries override them. A key
// written twice is an error, as YAML requires.
func (c *yamlConv) pairs(n *yaml.Node, depth int) ([]yamlPair, error) {
	if err := c.spend(len(n.Content)/2 + 1); err != nil {
		return nil, err
	}
	var explicit, merged []yamlPair
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			m, err := c.merge(v, depth)
			if err != nil {
				return nil, err
			}
			merged = append(merged, m...)
			continue
		}
		k = resolveAlias(k)
		if k.Kind != yaml.ScalarNode {
			return nil, fmt.Errorf("line %d: a mapping key must be a plain value, not a %s", k.Line, yamlKind(k))
		}
		if at, dup := seen[k.Value]; dup {
			return nil, fmt.Errorf("line %d: key %q already defined at line %d", k.Line, k.Value, at)
		}
		seen[k.Value] = k.Line
		explicit = append(explicit, yamlPair{k.Value, v})
	}
	out := make([]yamlPair, 0, len(merged)+len(explicit))
	have := map[string]bool{}
	for _, kv := range merged {
		if _, over := seen[kv.key]; over || have[kv.key] {
			continue
		}
		have[kv.key] = true
		out = append(out, kv)
	}
	return append(out, explicit...), nil
}

// merge returns the entries a merge key brings in: those of a mapping, or
// of each mapping of a list (earlier ones win).
func (c *yamlConv) merge(v *yaml.Node, depth int) ([]yamlPair, error) {
	if depth > maxYAMLDepth {
		return nil, fmt.Errorf("line %d: merge keys nested more than %d deep", v.Line, maxYAMLDepth)
	}
	v = resolveAlias(v)
	switch v.Kind {
	case yaml.MappingNode:
		return c.pairs(v, depth+1)
	case yaml.SequenceNode:
		var out []yamlPair
		for _, e := range v.Content {
			e = resolveAlias(e)
			if e.Kind != yaml.MappingNode {
				return nil, fmt.Errorf("line %d: a merge list may hold only mappings", e.Line)
			}
			ps, err := c.pairs(e, depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, ps...)
		}
		return out, nil
	}
	return nil, fmt.Errorf("line %d: a merge key needs a mapping or a list of mappings", v.Line)
}

// scalarJSON writes a YAML scalar as the JSON value YAML resolves it to:
// null, a boolean, a number or a string.
func scalarJSON(buf *bytes.Buffer, n *yaml.Node) error {
	var v any
	switch n.ShortTag() {
	case "!!null":
		buf.WriteString("null")
		return nil
	case "!!bool", "!!int", "!!float":
		if err := n.Decode(&v); err != nil {
			v = n.Value
		}
		if f, ok := v.(float64); ok && (math.IsNaN(f) || math.IsInf(f, 0)) {
			return fmt.Errorf("line %d: %s has no JSON form", n.Line, n.Value)
		}
	default: // strings, timestamps, binary and custom tags keep their text
		v = n.Value
	}
	if err := writeJSON(buf, v); err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	return nil
}

// writeJSON appends v as JSON without escaping <, > and &.
func writeJSON(buf *bytes.Buffer, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	buf.Write(bytes.TrimSuffix(b.Bytes(), []byte{'\n'}))
	return nil
}
