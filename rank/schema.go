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
// property's name, title and description, and the string values of enum
// and const, following nested properties, array items and
// anyOf/oneOf/allOf alternatives, in a deterministic order (properties by
// name). A schema that does not parse gives no text.
func schemaText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return ""
	}
	var b strings.Builder
	walkSchema(&b, v, 0)
	return b.String()
}

func walkSchema(b *strings.Builder, v any, depth int) {
	s, ok := v.(map[string]any)
	if !ok || depth > maxSchemaDepth {
		return
	}
	if depth > 0 {
		writeString(b, s["title"])
		writeString(b, s["description"])
	}
	for _, k := range []string{"enum", "examples"} {
		if list, ok := s[k].([]any); ok {
			for _, e := range list {
				writeString(b, e)
			}
		}
	}
	writeString(b, s["const"])
	if props, ok := s["properties"].(map[string]any); ok {
		names := make([]string, 0, len(props))
		for n := range props {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			b.WriteString(n)
			b.WriteByte(' ')
			walkSchema(b, props[n], depth+1)
		}
	}
	walkSchema(b, s["items"], depth+1)
	for _, k := range []string{"anyOf", "oneOf", "allOf"} {
		if list, ok := s[k].([]any); ok {
			for _, e := range list {
				walkSchema(b, e, depth+1)
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
