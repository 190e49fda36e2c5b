package card

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
)

// Kind says what sort of capability a card describes.
type Kind string

// The kinds of card.
const (
	KindTool    Kind = "tool"    // a callable tool with an input schema (MCP, OpenAI, Anthropic)
	KindAgent   Kind = "agent"   // a plugin subagent (agents/*.md)
	KindCommand Kind = "command" // a slash command (commands/*.md)
	KindSkill   Kind = "skill"   // an Agent Skill (SKILL.md)
)

// Valid reports whether k is one of the known kinds.
func (k Kind) Valid() bool {
	switch k {
	case KindTool, KindAgent, KindCommand, KindSkill:
		return true
	}
	return false
}

// Risk says how much harm a call can do. It informs selection (riskier
// capabilities need stronger evidence) but never grants approval.
type Risk string

// The risk levels, from least to most harmful.
const (
	RiskReadOnly     Risk = "read-only"    // observes, changes nothing
	RiskWrite        Risk = "write"        // changes state that can be changed back
	RiskIrreversible Risk = "irreversible" // deletes, sends, pays: cannot be undone
)

// ParseRisk reads a risk level, accepting common spellings
// ("readonly", "read_only", "destructive"). The empty string is not a risk.
func ParseRisk(s string) (Risk, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "read-only", "readonly", "read_only", "read":
		return RiskReadOnly, nil
	case "write", "mutating", "write-only":
		return RiskWrite, nil
	case "irreversible", "destructive", "dangerous":
		return RiskIrreversible, nil
	}
	return "", fmt.Errorf("unknown risk %q (want read-only, write or irreversible)", s)
}

// Level orders risks: 0 read-only, 1 write, 2 irreversible. An unknown risk
// counts as write.
func (r Risk) Level() int {
	switch r {
	case RiskReadOnly:
		return 0
	case RiskIrreversible:
		return 2
	}
	return 1
}

// Card is one capability.
type Card struct {
	// Name is the unique name in the catalog, the name a model calls.
	Name string `json:"name"`
	// Kind is tool, agent, command or skill.
	Kind Kind `json:"kind"`
	// Source names where the card came from: an MCP server, a plugin, a
	// tool file's stem. It is the prefix used when names collide.
	Source string `json:"source"`
	// Description is the text a model reads to decide whether to use it.
	Description string `json:"description"`
	// InputSchema is the JSON Schema of the arguments, kept byte for byte
	// as the source gave it. Nil when the capability takes no structured input.
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
	// Annotations are MCP tool annotations, kept raw.
	Annotations json.RawMessage `json:"annotations,omitempty"`
	// Risk is read-only, write or irreversible.
	Risk Risk `json:"risk,omitempty"`
	// RiskFrom says how Risk was decided: "explicit", "annotations" or "inferred".
	RiskFrom string `json:"risk_from,omitempty"`
	// Preconditions must hold before the capability is used.
	Preconditions []string `json:"preconditions,omitempty"`
	// SideEffects lists what a call changes in the world.
	SideEffects []string `json:"side_effects,omitempty"`
	// Tags are free-form labels (plugin keywords, categories).
	Tags []string `json:"tags,omitempty"`
	// OriginalName is the name the source used, when the catalog renamed
	// the card to resolve a collision or to namespace it.
	OriginalName string `json:"original_name,omitempty"`
	// Path is the file the card was read from, if any.
	Path string `json:"path,omitempty"`
	// Meta holds source-specific metadata (plugin name, model, allowed
	// tools, argument hint, server name, MetaTitle...). Values are strings
	// so the card stays easy to store and diff.
	Meta map[string]string `json:"meta,omitempty"`
	// Digest is the hex SHA-256 of the canonical name, description and
	// schema; see [Card.ComputeDigest].
	Digest string `json:"digest,omitempty"`
}

// CallName is the name the source knows the capability by: OriginalName
// when the catalog renamed the card, else Name.
func (c *Card) CallName() string {
	if c.OriginalName != "" {
		return c.OriginalName
	}
	return c.Name
}

// ComputeDigest returns the hex SHA-256 of the canonical JSON of the card's
// name, description and input schema. The schema is canonicalized (object
// keys sorted, insignificant space removed), so two schemas that differ only
// in formatting have the same digest. An unparsable schema is hashed as is.
func (c *Card) ComputeDigest() string {
	h := sha256.New()
	schema := canonicalJSON(c.InputSchema)
	// A length-prefixed encoding: no field can bleed into the next.
	fmt.Fprintf(h, "name:%d:%s\n", len(c.Name), c.Name)
	fmt.Fprintf(h, "description:%d:%s\n", len(c.Description), c.Description)
	fmt.Fprintf(h, "schema:%d:%s\n", len(schema), schema)
	return hex.EncodeToString(h.Sum(nil))
}

// canonicalJSON re-encodes raw with sorted keys and no insignificant
// space. It returns raw unchanged when it is not valid JSON, and nil for
// empty input or JSON null.
func canonicalJSON(raw json.RawMessage) []byte {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return raw
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return raw
	}
	return bytes.TrimSpace(buf.Bytes())
}

// Validate reports the first problem that makes c unusable: an empty name,
// an unknown kind, or an input schema that is not a JSON object.
func (c *Card) Validate() error {
	if strings.TrimSpace(c.Name) == "" {
		return fmt.Errorf("card has no name")
	}
	if !c.Kind.Valid() {
		return fmt.Errorf("card %q: unknown kind %q", c.Name, c.Kind)
	}
	if s := bytes.TrimSpace(c.InputSchema); len(s) > 0 && !bytes.Equal(s, []byte("null")) {
		if s[0] != '{' || !json.Valid(s) {
			return fmt.Errorf("card %q: input schema is not a JSON object", c.Name)
		}
	}
	return nil
}

// Param is one top-level parameter of a card's input schema.
type Param struct {
	Name        string
	Description string
	Type        string
	Required    bool
}

// Params returns the top-level properties of the input schema in name
// order. It returns nil when the schema is absent or not an object schema.
func (c *Card) Params() []Param {
	if len(c.InputSchema) == 0 {
		return nil
	}
	var s struct {
		Properties map[string]struct {
			Description string `json:"description"`
			Type        any    `json:"type"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(c.InputSchema, &s); err != nil {
		return nil
	}
	req := make(map[string]bool, len(s.Required))
	for _, r := range s.Required {
		req[r] = true
	}
	ps := make([]Param, 0, len(s.Properties))
	for name, p := range s.Properties {
		t, _ := p.Type.(string)
		ps = append(ps, Param{Name: name, Description: p.Description, Type: t, Required: req[name]})
	}
	sortParams(ps)
	return ps
}

// MetaTitle is the [Card.Meta] key of a capability's display title, such
// as an MCP tool's title ("Create Issue" for create_issue); ranking reads
// it as part of the name.
const MetaTitle = "title"
