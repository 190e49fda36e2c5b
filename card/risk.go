package card

import (
	"encoding/json"
	"strings"
)

// RiskFromAnnotations reads MCP tool annotations. destructiveHint true is
// irreversible; readOnlyHint true is read-only; readOnlyHint false without
// destructiveHint is write. It returns "" when the annotations say nothing
// about risk.
func RiskFromAnnotations(raw json.RawMessage) Risk {
	if len(raw) == 0 {
		return ""
	}
	var a struct {
		ReadOnly    *bool `json:"readOnlyHint"`
		Destructive *bool `json:"destructiveHint"`
	}
	if json.Unmarshal(raw, &a) != nil {
		return ""
	}
	switch {
	case a.ReadOnly != nil && *a.ReadOnly:
		return RiskReadOnly
	case a.Destructive != nil && *a.Destructive:
		return RiskIrreversible
	case a.Destructive != nil && !*a.Destructive:
		return RiskWrite
	case a.ReadOnly != nil:
		return RiskWrite
	}
	return ""
}

// verbs by the risk they usually carry, matched against the first word of
// the name's parts.
var (
	irreversibleVerbs = set("delete", "remove", "rm", "drop", "destroy", "purge", "erase", "wipe",
		"kill", "terminate", "truncate", "revoke", "send", "pay", "transfer", "publish", "deploy",
		"force", "reset", "uninstall", "unlink", "shutdown", "merge", "post", "email", "charge", "refund")
	readVerbs = set("get", "list", "read", "search", "find", "fetch", "query", "show", "describe",
		"view", "lookup", "look", "check", "count", "inspect", "browse", "retrieve", "stat", "info",
		"explain", "preview", "download", "grep", "glob", "ls", "cat", "diff", "status", "validate", "calculate", "compute", "convert", "estimate")
)

func set(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// InferRisk guesses a risk from a capability's name when no source states
// one: a leading destructive verb (delete_, send, drop...) is irreversible,
// a leading reading verb (get, list, search...) is read-only, anything else
// is write. Agents, commands and skills are write: they act with the
// agent's own tools.
func InferRisk(kind Kind, name string) Risk {
	if kind != KindTool && kind != "" {
		return RiskWrite
	}
	for _, w := range strings.FieldsFunc(strings.ToLower(splitCamel(name)), func(r rune) bool {
		return r == '_' || r == '-' || r == '.' || r == ' ' || r == '/' || r == ':'
	}) {
		switch {
		case irreversibleVerbs[w]:
			return RiskIrreversible
		case readVerbs[w]:
			return RiskReadOnly
		}
		// Only the first verb-looking word decides; a namespace prefix such
		// as "github" is skipped because it matches neither list.
	}
	return RiskWrite
}

// splitCamel puts a space before each upper-case letter that follows a
// lower-case one: "deleteFile" -> "delete File".
func splitCamel(s string) string {
	var b strings.Builder
	prevLower := false
	for _, r := range s {
		isUpper := r >= 'A' && r <= 'Z'
		if isUpper && prevLower {
			b.WriteByte(' ')
		}
		b.WriteRune(r)
		prevLower = r >= 'a' && r <= 'z'
	}
	return b.String()
}

// ResolveRisk fills c.Risk and c.RiskFrom when the source did not set
// them: from MCP annotations first, else inferred from the name.
func (c *Card) ResolveRisk() {
	if c.Risk != "" {
		if c.RiskFrom == "" {
			c.RiskFrom = "explicit"
		}
		return
	}
	if r := RiskFromAnnotations(c.Annotations); r != "" {
		c.Risk, c.RiskFrom = r, "annotations"
		return
	}
	c.Risk, c.RiskFrom = InferRisk(c.Kind, c.Name), "inferred"
}
