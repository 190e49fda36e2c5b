package apischema

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Schema is one schema of a document, with the name reports give it: a
// component's name, then .prop and [] down to inline schemas.
type Schema struct {
	node map[string]any
	name string
	ref  string // for a component, its reference
}

// Name is the schema's name in reports.
func (s Schema) Name() string { return s.name }

// ArrayOf is the schema of a JSON array of s (the CLI prints some lists
// bare where the HTTP API wraps them).
func ArrayOf(s Schema) Schema {
	items := s.node
	if s.ref != "" {
		items = map[string]any{"$ref": s.ref}
	}
	return Schema{node: map[string]any{"type": "array", "items": items}, name: s.name + " list"}
}

// Checker checks values against one document's schemas. It is not safe
// for concurrent use.
type Checker struct {
	doc         map[string]any
	seen, empty map[string]int
}

// New parses an OpenAPI document.
func New(doc []byte) (*Checker, error) {
	c := &Checker{seen: map[string]int{}, empty: map[string]int{}}
	if err := json.Unmarshal(doc, &c.doc); err != nil {
		return nil, fmt.Errorf("reading the OpenAPI document: %w", err)
	}
	return c, nil
}

// Component returns the schema components.schemas.name.
func (c *Checker) Component(name string) (Schema, error) {
	s := obj(obj(obj(c.doc["components"])["schemas"])[name])
	if s == nil {
		return Schema{}, fmt.Errorf("the OpenAPI document has no schema %s", name)
	}
	return Schema{node: s, name: name, ref: "#/components/schemas/" + name}, nil
}

// Response returns the schema of the JSON answer with status to method on
// pattern, the path as the document names it ("/v1/sessions/{id}"): the
// status's own response, else the default one.
func (c *Checker) Response(method, pattern string, status int) (Schema, error) {
	op := obj(obj(obj(c.doc["paths"])[pattern])[strings.ToLower(method)])
	if op == nil {
		return Schema{}, fmt.Errorf("the OpenAPI document has no %s %s", method, pattern)
	}
	rs := obj(op["responses"])
	r := obj(rs[strconv.Itoa(status)])
	if r == nil {
		r = obj(rs["default"])
	}
	r, _, err := c.resolve(r, "")
	if err != nil {
		return Schema{}, fmt.Errorf("%s %s answering %d: %w", method, pattern, status, err)
	}
	s := obj(obj(obj(r["content"])["application/json"])["schema"])
	if s == nil {
		return Schema{}, fmt.Errorf("the OpenAPI document has no JSON schema for %s %s answering %d", method, pattern, status)
	}
	return Schema{node: s, name: method + " " + pattern + " " + strconv.Itoa(status)}, nil
}

// Check checks the JSON text body against s and returns the problems
// found, each naming where in the value and which schema: a value of
// another type than the schema's (null is never an array), a required
// property missing, a property the schema does not name, a value not in
// the enum. It counts the required arrays it meets (see [Checker.Seen]).
func (c *Checker) Check(s Schema, body []byte) []string {
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return []string{fmt.Sprintf("not JSON: %v", err)}
	}
	var problems []string
	c.walk(s.node, s.name, "$", v, &problems)
	return problems
}

// RequiredArrays lists every required property of type array in the
// document, named as reports name them (Schema.prop), sorted.
func (c *Checker) RequiredArrays() []string {
	var out []string
	var visit func(s map[string]any, where string)
	visit = func(s map[string]any, where string) {
		if _, ref := s["$ref"]; ref {
			return // listed under the component's own name
		}
		if items := obj(s["items"]); items != nil {
			visit(items, where+"[]")
		}
		required := stringsOf(s["required"])
		for name, ps := range obj(s["properties"]) {
			ps := obj(ps)
			if ps["type"] == "array" && slices.Contains(required, name) {
				out = append(out, where+"."+name)
			}
			visit(ps, where+"."+name)
		}
	}
	for name, s := range obj(obj(c.doc["components"])["schemas"]) {
		visit(obj(s), name)
	}
	for path, ops := range obj(c.doc["paths"]) {
		for method, op := range obj(ops) {
			for status, r := range obj(obj(op)["responses"]) {
				r, _, _ := c.resolve(obj(r), "")
				for _, media := range obj(r["content"]) {
					visit(obj(obj(media)["schema"]), strings.ToUpper(method)+" "+path+" "+status)
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

// Seen reports how many checked values held the required array key (as
// [Checker.RequiredArrays] names it), and how many of those were empty.
func (c *Checker) Seen(key string) (held, empty int) { return c.seen[key], c.empty[key] }

// resolve follows a $ref, returning the schema and its name: the
// component's name for a reference, else where. A reference that does
// not resolve is an error.
func (c *Checker) resolve(s map[string]any, where string) (map[string]any, string, error) {
	for range 32 {
		ref, ok := s["$ref"].(string)
		if !ok {
			return s, where, nil
		}
		parts := strings.Split(strings.TrimPrefix(ref, "#/"), "/")
		var cur any = c.doc
		for _, p := range parts {
			cur = obj(cur)[p]
		}
		if s, where = obj(cur), parts[len(parts)-1]; s == nil {
			return nil, ref, fmt.Errorf("the reference %s does not resolve", ref)
		}
	}
	return nil, where, fmt.Errorf("the references from %s go round in a cycle", where)
}

// walk checks v against s, known as where, at the JSON path at.
func (c *Checker) walk(s map[string]any, where, at string, v any, problems *[]string) {
	s, where, err := c.resolve(s, where)
	bad := func(format string, args ...any) {
		*problems = append(*problems, fmt.Sprintf("%s (schema %s): ", at, where)+fmt.Sprintf(format, args...))
	}
	if err != nil {
		bad("%v", err)
		return
	}
	if enum := anys(s["enum"]); enum != nil && !slices.Contains(enum, v) {
		bad("%v is not one of %v", v, enum)
	}
	switch typ := s["type"]; typ {
	case nil:
		return // any value
	case "object":
		m, ok := v.(map[string]any)
		if !ok {
			bad("%s, want an object", kind(v))
			return
		}
		props := obj(s["properties"])
		required := stringsOf(s["required"])
		for _, name := range required {
			if _, ok := m[name]; !ok {
				bad("required %q is missing", name)
			}
		}
		names := make([]string, 0, len(m))
		for name := range m {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			pv := m[name]
			ps := obj(props[name])
			if ps == nil {
				if props != nil {
					bad("%q is not in the schema", name)
				}
				continue
			}
			if ps["type"] == "array" && slices.Contains(required, name) {
				key := where + "." + name
				c.seen[key]++
				if a, ok := pv.([]any); ok && len(a) == 0 {
					c.empty[key]++
				}
			}
			c.walk(ps, where+"."+name, at+"."+name, pv, problems)
		}
	case "array":
		a, ok := v.([]any)
		if !ok {
			bad("%s, want an array", kind(v))
			return
		}
		if items := obj(s["items"]); items != nil {
			for i, e := range a {
				c.walk(items, where+"[]", fmt.Sprintf("%s[%d]", at, i), e, problems)
			}
		}
	case "string":
		if _, ok := v.(string); !ok {
			bad("%s, want a string", kind(v))
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			bad("%s, want a boolean", kind(v))
		}
	case "number", "integer":
		f, ok := v.(float64)
		if !ok || typ == "integer" && f != math.Trunc(f) {
			bad("%s, want %s", kind(v), typ)
		}
	default:
		bad("type %v is not one the checker knows", typ)
	}
}

func obj(v any) map[string]any { m, _ := v.(map[string]any); return m }

func anys(v any) []any { a, _ := v.([]any); return a }

func stringsOf(v any) []string {
	var out []string
	for _, s := range anys(v) {
		if s, ok := s.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func kind(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case string:
		return fmt.Sprintf("the string %q", v)
	case bool:
		return fmt.Sprintf("the boolean %v", v)
	default:
		return fmt.Sprintf("the number %v", v)
	}
}
