package override

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/rank"
)

// MetaKey is the card.Meta key an applied override sets: what it says in
// reasons, "description overridden locally (digest 1a2b3c4d)".
const MetaKey = rank.MetaOverride

// Override is one entry of `overrides:` in capbroker.yaml.
type Override struct {
	// Tool is the tool's name in the catalog.
	Tool string `yaml:"tool" json:"tool"`
	// Digest pins the override to the tool as its source gives it: the
	// card's digest (capbroker cards --json shows it).
	Digest string `yaml:"digest" json:"digest"`
	// Description, when set, replaces the tool's description.
	Description string `yaml:"description,omitempty" json:"description,omitempty"`
	// Params gives descriptions of parameters, by name: each replaces
	// (or adds) the description of that top-level property of the input
	// schema.
	Params map[string]string `yaml:"params,omitempty" json:"params,omitempty"`
	// Why says what the override fixes (doctor writes it).
	Why string `yaml:"why,omitempty" json:"why,omitempty"`
}

// Validate reports what makes o unusable, naming its position (i, from 0).
func (o *Override) Validate(i int) error {
	switch {
	case strings.TrimSpace(o.Tool) == "":
		return fmt.Errorf("overrides: entry %d has no tool", i+1)
	case len(o.Digest) < 8:
		return fmt.Errorf("overrides: %s: digest %q: want the tool's digest (capbroker cards --json), at least 8 hex digits", o.Tool, o.Digest)
	case strings.TrimSpace(o.Description) == "" && len(o.Params) == 0:
		return fmt.Errorf("overrides: %s: neither a description nor params to override", o.Tool)
	}
	for _, c := range o.Digest {
		if !strings.ContainsRune("0123456789abcdef", c) {
			return fmt.Errorf("overrides: %s: digest %q is not lower-case hex", o.Tool, o.Digest)
		}
	}
	return nil
}

// matches reports whether the override is pinned to digest d: equal, or
// a prefix of it (at least 8 digits).
func (o *Override) matches(d string) bool {
	return len(o.Digest) >= 8 && strings.HasPrefix(d, o.Digest)
}

// Apply returns cards with the overrides that match applied (the input is
// not changed), and a warning for each override whose tool is missing or
// whose digest no longer matches the tool's.
func Apply(cards []card.Card, overrides []Override) ([]card.Card, []string) {
	if len(overrides) == 0 {
		return cards, nil
	}
	out := slices.Clone(cards)
	var warns []string
	for _, o := range overrides {
		i := slices.IndexFunc(out, func(c card.Card) bool { return c.Name == o.Tool })
		if i < 0 {
			warns = append(warns, fmt.Sprintf("override for %s: no such tool in the catalog; not applied", o.Tool))
			continue
		}
		c := &out[i]
		d := c.Digest
		if d == "" {
			d = c.ComputeDigest()
		}
		if !o.matches(d) {
			warns = append(warns, fmt.Sprintf("override for %s: pinned to digest %s, but the tool is now %s: not applied (run capbroker doctor to review it)", o.Tool, short(o.Digest), short(d)))
			continue
		}
		next := *c
		if strings.TrimSpace(o.Description) != "" {
			next.Description = o.Description
		}
		if len(o.Params) > 0 {
			schema, err := setParamDescriptions(c.InputSchema, o.Params)
			if err != nil {
				warns = append(warns, fmt.Sprintf("override for %s: %v; parameters not overridden", o.Tool, err))
			} else {
				next.InputSchema = schema
			}
		}
		next.Digest = d
		next.Meta = make(map[string]string, len(c.Meta)+1)
		for k, v := range c.Meta {
			next.Meta[k] = v
		}
		next.Meta[MetaKey] = "description overridden locally (digest " + short(d) + ")"
		*c = next
	}
	return out, warns
}

func short(d string) string {
	if len(d) > 8 {
		return d[:8]
	}
	return d
}

// setParamDescriptions returns schema with the description of each named
// top-level property set; a property the schema lacks is an error.
func setParamDescriptions(schema json.RawMessage, params map[string]string) (json.RawMessage, error) {
	var s map[string]json.RawMessage
	if err := json.Unmarshal(schema, &s); err != nil || s == nil {
		return nil, fmt.Errorf("input schema is not a JSON object")
	}
	var props map[string]map[string]json.RawMessage
	if err := json.Unmarshal(s["properties"], &props); err != nil {
		return nil, fmt.Errorf("input schema's properties are not an object of objects")
	}
	names := make([]string, 0, len(params))
	for n := range params {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		p, ok := props[n]
		if !ok {
			return nil, fmt.Errorf("no parameter %q", n)
		}
		if p == nil {
			p = make(map[string]json.RawMessage)
			props[n] = p
		}
		b, _ := json.Marshal(params[n])
		p["description"] = b
	}
	pb, err := json.Marshal(props)
	if err != nil {
		return nil, err
	}
	s["properties"] = pb
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return nil, err
	}
	return bytes.TrimSpace(buf.Bytes()), nil
}
