package toolfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/capbroker/capbroker/card"
)

// The shapes a tool definition may take, recorded in Meta["format"].
const (
	ShapeOpenAI    = "openai"
	ShapeAnthropic = "anthropic"
	ShapeMCP       = "mcp"
	ShapeBench     = "bench"
)

// fields is a JSON object split into its members, raw.
type fields map[string]json.RawMessage

func (f fields) has(key string) bool {
	_, ok := f[key]
	return ok
}

// str reads a string member; absent or null is "".
func (f fields) str(key string) (string, error) {
	raw, ok := f[key]
	if !ok || isNull(raw) {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("%q is %s, want a string", key, kindOf(raw))
	}
	return s, nil
}

// object reads a member that must be a JSON object (or absent or null,
// which give nil), keeping its bytes.
func (f fields) object(key string) (json.RawMessage, error) {
	raw, ok := f[key]
	if !ok || isNull(raw) {
		return nil, nil
	}
	if t := bytes.TrimSpace(raw); t[0] != '{' {
		return nil, fmt.Errorf("%q is %s, want a JSON object", key, kindOf(raw))
	}
	return raw, nil
}

// strings reads a member holding a string or a list of strings. With
// split, a single string is split at commas ("a, b").
func (f fields) strings(key string, split bool) ([]string, error) {
	raw, ok := f[key]
	if !ok || isNull(raw) {
		return nil, nil
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		if !split {
			if one = strings.TrimSpace(one); one == "" {
				return nil, nil
			}
			return []string{one}, nil
		}
		var out []string
		for _, s := range strings.Split(one, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
		return out, nil
	}
	var many []string
	if err := json.Unmarshal(raw, &many); err != nil {
		return nil, fmt.Errorf("%q is %s, want a string or a list of strings", key, kindOf(raw))
	}
	out := many[:0]
	for _, s := range many {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

func isNull(raw json.RawMessage) bool {
	return bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
}

func splitFields(raw []byte) (fields, error) {
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' {
		return nil, fmt.Errorf("a tool must be an object, not %s", kindOf(raw))
	}
	var f fields
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	return f, nil
}

// card turns one item into a card, or an *Error saying why it cannot.
func (p *parser) card(it item) (card.Card, error) {
	c, err := p.convert(it.raw)
	if err != nil {
		return card.Card{}, &Error{File: p.file, Line: it.line, Col: it.col, Item: it.index, Name: c.Name, Err: err}
	}
	return c, nil
}

// convert reads a tool definition of any shape. On error, the returned
// card carries the name when it was read.
func (p *parser) convert(raw []byte) (card.Card, error) {
	outer, err := splitFields(raw)
	if err != nil {
		return card.Card{}, err
	}
	c := card.Card{Kind: card.KindTool, Source: p.source, Path: p.file, Meta: map[string]string{}}
	typ, err := outer.str("type")
	if err != nil {
		return c, err
	}

	// Decide the shape and where its fields sit.
	tool := outer   // the object holding name, description and schema
	schemaKey := "" // the member holding the input schema
	extras := []fields{outer}
	switch {
	case outer.has("function") && !isNull(outer["function"]):
		fn, err := outer.object("function")
		if err != nil {
			return c, err
		}
		if tool, err = splitFields(fn); err != nil {
			return c, fmt.Errorf("\"function\": %w", err)
		}
		if typ != "" && typ != "function" {
			return c, fmt.Errorf("\"type\" is %q but the tool has a \"function\" object", typ)
		}
		c.Meta["format"], schemaKey = ShapeOpenAI, "parameters"
		extras = []fields{tool, outer}
	case typ == "function":
		c.Meta["format"], schemaKey = ShapeOpenAI, "parameters"
	case outer.has("input_schema"):
		c.Meta["format"], schemaKey = ShapeAnthropic, "input_schema"
	case outer.has("inputSchema"),
		!outer.has("parameters") && (outer.has("annotations") || outer.has("title") || outer.has("outputSchema")):
		c.Meta["format"], schemaKey = ShapeMCP, "inputSchema"
	case typ != "" && !outer.has("parameters"):
		// An Anthropic server or client tool named by type
		// (web_search_20250305, bash_20250124, ...), which has no schema.
		c.Meta["format"] = ShapeAnthropic
	default:
		c.Meta["format"], schemaKey = ShapeBench, "parameters"
	}
	if typ != "" && typ != "function" {
		c.Meta["type"] = typ
	}

	name, err := tool.str("name")
	if err != nil {
		return c, err
	}
	c.Name = strings.TrimSpace(name)
	if c.Name == "" {
		what := "tool"
		switch {
		case len(extras) == 2: // the chat shape's "function" object
			what = "function"
		case typ != "" && typ != "function":
			what = fmt.Sprintf("tool of type %q", typ)
		}
		return c, fmt.Errorf("%s has no name (keys: %s)", what, keyList(tool))
	}
	if tool.has("input_schema") && tool.has("inputSchema") {
		return c, errors.New("the tool has both \"input_schema\" (Anthropic) and \"inputSchema\" (MCP); keep one")
	}
	if c.Description, err = tool.str("description"); err != nil {
		return c, err
	}
	if schemaKey != "" {
		if c.InputSchema, err = tool.object(schemaKey); err != nil {
			return c, err
		}
	}
	// MCP's extra fields, read in any shape that has them.
	if c.Annotations, err = tool.object("annotations"); err != nil {
		return c, err
	}
	title, err := tool.str("title")
	if err != nil {
		return c, err
	}
	setMeta(c.Meta, card.MetaTitle, title)
	out, err := tool.object("outputSchema")
	if err != nil {
		return c, err
	}
	setMeta(c.Meta, "output_schema", compact(out))
	if raw, ok := tool["strict"]; ok && !isNull(raw) {
		setMeta(c.Meta, "strict", compact(raw))
	}
	if c.Meta["format"] == ShapeBench {
		if err := benchMeta(&c, outer); err != nil {
			return c, err
		}
	}
	if err := readPolicy(&c, extras); err != nil {
		return c, err
	}
	c.ResolveRisk()
	c.Digest = c.ComputeDigest()
	if err := c.Validate(); err != nil {
		return c, err
	}
	return c, nil
}

// readPolicy reads the broker's own fields — risk, preconditions, side
// effects, tags — from the first of objs that has each.
func readPolicy(c *card.Card, objs []fields) error {
	for _, f := range objs {
		for _, key := range []string{"risk", "x-risk"} {
			s, err := f.str(key)
			if err != nil {
				return err
			}
			if s == "" {
				continue
			}
			r, err := card.ParseRisk(s)
			if err != nil {
				return fmt.Errorf("%q: %w", key, err)
			}
			if c.Risk != "" && c.Risk != r {
				return fmt.Errorf("the tool states two risks, %s and %s", c.Risk, r)
			}
			c.Risk, c.RiskFrom = r, "explicit"
		}
	}
	lists := []struct {
		dst   *[]string
		keys  []string
		split bool
	}{
		{&c.Preconditions, []string{"preconditions"}, false},
		{&c.SideEffects, []string{"side_effects", "sideEffects"}, false},
		{&c.Tags, []string{"tags"}, true},
	}
	for _, l := range lists {
		for _, f := range objs {
			for _, key := range l.keys {
				if *l.dst != nil {
					break
				}
				v, err := f.strings(key, l.split)
				if err != nil {
					return err
				}
				*l.dst = v
			}
		}
	}
	return nil
}

// benchMeta reads the bench shape's "source" (as Meta["origin"]) and the
// scalar entries of its "meta" object.
func benchMeta(c *card.Card, f fields) error {
	origin, err := f.str("source")
	if err != nil {
		return err
	}
	setMeta(c.Meta, "origin", origin)
	raw, err := f.object("meta")
	if err != nil || raw == nil {
		return err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return fmt.Errorf("\"meta\": %w", err)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := m[k]
		var s string
		if json.Unmarshal(v, &s) != nil {
			s = compact(v)
		}
		key := k
		if _, taken := c.Meta[key]; taken {
			key = "meta." + k
		}
		setMeta(c.Meta, key, s)
	}
	return nil
}

func setMeta(m map[string]string, key, value string) {
	if value != "" {
		m[key] = value
	}
}

// compact renders raw JSON without insignificant space; "" for nothing.
func compact(raw json.RawMessage) string {
	if len(raw) == 0 || isNull(raw) {
		return ""
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

func keyList(f fields) string {
	if len(f) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(f))
	for k := range f {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if len(keys) > 8 {
		keys = append(keys[:8], "...")
	}
	return strings.Join(keys, ", ")
}
