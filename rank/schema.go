package rank

import (
	"encoding/json"
	"sort"
	"strings"
)

// maxSchemaDepth bounds how deep schemaText follows nested objects and
// arrays; real tool schemas rarely nest past three levels.
const maxSchemaDepth = 4

// schemaText returns the searchable text of a JSON Schema: every
// property's name, title and description, then the string values of enum,
// examples and const (see [schemaTexts]).
func schemaText(raw json.RawMessage) string {
	text, values := schemaTexts(raw)
	return text + values
}

// schemaTexts returns the searchable text of a JSON Schema in two parts:
// text, every property's name, title and description; and values, the
// string values its properties may take (enum, examples, const). Both
// follow nested properties, array items and anyOf/oneOf/allOf
// alternatives in a deterministic order (properties by name). A schema
// that does not parse gives no text.
func schemaTexts(raw json.RawMessage) (text, values string) {
	if len(raw) == 0 {
		return "", ""
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", ""
	}
	var w schemaWriter
	w.walk(v, 0)
	return w.text.String(), w.values.String()
}

// schemaWriter collects a schema's text and values.
type schemaWriter struct {
	text, values strings.Builder
}

func (w *schemaWriter) walk(v any, depth int) {
	s, ok := v.(map[string]any)
	if !ok || depth > maxSchemaDepth {
		return
	}
	if depth > 0 {
		writeString(&w.text, s["title"])
		writeString(&w.text, s["description"])
	}
	for _, k := range []string{"enum", "examples"} {
		if list, ok := s[k].([]any); ok {
			for _, e := range list {
				writeString(&w.values, e)
			}
		}
	}
	writeString(&w.values, s["const"])
	if props, ok := s["properties"].(map[string]any); ok {
		names := make([]string, 0, len(props))
		for n := range props {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			w.text.WriteString(n)
			w.text.WriteByte(' ')
			w.walk(props[n], depth+1)
		}
	}
	w.walk(s["items"], depth+1)
	for _, k := range []string{"anyOf", "oneOf", "allOf"} {
		if list, ok := s[k].([]any); ok {
			for _, e := range list {
				w.walk(e, depth+1)
			}
		}
	}
}

func writeString(b *strings.Builder, v any) {
	if s, ok := v.(string); ok && s != "" {
		b.WriteString(s)
		b.WriteByte(' ')
	}
}
