package payload

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/capbroker/capbroker/card"
)

// Format names a provider's tool-definition shape.
type Format string

// The formats.
const (
	JSON      Format = "json"
	OpenAI    Format = "openai"
	Anthropic Format = "anthropic"
	MCP       Format = "mcp"
)

// Formats lists every format, for help texts and validation.
var Formats = []Format{JSON, OpenAI, Anthropic, MCP}

// ParseFormat reads a format name.
func ParseFormat(s string) (Format, error) {
	for _, f := range Formats {
		if string(f) == strings.ToLower(strings.TrimSpace(s)) {
			return f, nil
		}
	}
	return "", fmt.Errorf("unknown format %q (want json, openai, anthropic or mcp)", s)
}

// emptySchema is the input schema of a capability that takes no arguments.
var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

func schemaOf(c *card.Card) json.RawMessage {
	s := bytes.TrimSpace(c.InputSchema)
	if len(s) == 0 || bytes.Equal(s, []byte("null")) {
		return emptySchema
	}
	return s
}

type openAITool struct {
	Type     string         `json:"type"`
	Function openAIFunction `json:"function"`
}

type openAIFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

type anthropicTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

type mcpTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"inputSchema"`
	Annotations json.RawMessage `json:"annotations,omitempty"`
}

type mcpList struct {
	Tools []mcpTool `json:"tools"`
}

// Summary is one card in the [JSON] format.
type Summary struct {
	Name        string          `json:"name"`
	Kind        card.Kind       `json:"kind"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
	Risk        card.Risk       `json:"risk,omitempty"`
}

// Rendered is a payload ready to send, with the names it used.
type Rendered struct {
	// Body is the JSON a provider receives.
	Body json.RawMessage
	// Renamed maps a name used in Body back to the card name, for the names
	// the format's rules forced to change.
	Renamed map[string]string
}

// Render encodes cards in format f. The result is compact JSON and is
// deterministic for the same cards in the same order.
func Render(f Format, cards []*card.Card) (*Rendered, error) {
	r := &Rendered{}
	var v any
	switch f {
	case OpenAI, Anthropic:
		names := apiNames(cards)
		for i, c := range cards {
			if names[i] != c.Name {
				if r.Renamed == nil {
					r.Renamed = map[string]string{}
				}
				r.Renamed[names[i]] = c.Name
			}
		}
		if f == OpenAI {
			tools := make([]openAITool, len(cards))
			for i, c := range cards {
				tools[i] = openAITool{Type: "function", Function: openAIFunction{Name: names[i], Description: c.Description, Parameters: schemaOf(c)}}
			}
			v = tools
		} else {
			tools := make([]anthropicTool, len(cards))
			for i, c := range cards {
				tools[i] = anthropicTool{Name: names[i], Description: c.Description, InputSchema: schemaOf(c)}
			}
			v = tools
		}
	case MCP:
		l := mcpList{Tools: make([]mcpTool, len(cards))}
		for i, c := range cards {
			l.Tools[i] = mcpTool{Name: c.Name, Description: c.Description, InputSchema: schemaOf(c), Annotations: c.Annotations}
		}
		v = l
	case JSON:
		s := make([]Summary, len(cards))
		for i, c := range cards {
			s[i] = Summary{Name: c.Name, Kind: c.Kind, Description: c.Description, InputSchema: c.InputSchema, Risk: c.Risk}
		}
		v = s
	default:
		return nil, fmt.Errorf("rendering tools: unknown format %q", f)
	}
	body, err := marshal(v)
	if err != nil {
		return nil, fmt.Errorf("rendering %s tools: %w", f, err)
	}
	r.Body = body
	return r, nil
}

// marshal encodes v without HTML escaping, the way APIs print JSON.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// MaxAPINameLen is the longest tool name OpenAI and Anthropic accept.
const MaxAPINameLen = 64

// APIName maps a card name to the characters and length OpenAI and
// Anthropic accept: runes outside [A-Za-z0-9_-] become '_', and a name
// longer than 64 bytes is cut and suffixed with 8 hex digits of its hash so
// distinct long names stay distinct.
func APIName(name string) string {
	s := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			return r
		}
		return '_'
	}, name)
	if s == "" {
		s = "_"
	}
	if len(s) > MaxAPINameLen {
		sum := sha256.Sum256([]byte(name))
		s = s[:MaxAPINameLen-9] + "_" + hex.EncodeToString(sum[:4])
	}
	return s
}

// apiNames maps each card's name with [APIName], numbering any two that
// map to the same name ("a.b" and "a_b") in card order.
func apiNames(cards []*card.Card) []string {
	out := make([]string, len(cards))
	used := make(map[string]bool, len(cards))
	for _, c := range cards {
		if APIName(c.Name) == c.Name {
			used[c.Name] = true
		}
	}
	for i, c := range cards {
		n := APIName(c.Name)
		if n == c.Name {
			out[i] = n
			continue
		}
		base := n
		for k := 2; used[n]; k++ {
			suffix := fmt.Sprintf("_%d", k)
			if len(base)+len(suffix) > MaxAPINameLen {
				base = base[:MaxAPINameLen-len(suffix)]
			}
			n = base + suffix
		}
		used[n] = true
		out[i] = n
	}
	return out
}
