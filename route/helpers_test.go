package route

import (
	"strings"
	"testing"

	"github.com/capbroker/capbroker/card"
)

// agentSpec describes a hand-made card.
type agentSpec struct {
	name string // "plugin:agent"
	desc string
	kind card.Kind // agent when empty
}

func agentCards(specs ...agentSpec) []card.Card {
	var out []card.Card
	for _, s := range specs {
		kind := s.kind
		if kind == "" {
			kind = card.KindAgent
		}
		plugin, _, _ := strings.Cut(s.name, ":")
		out = append(out, card.Card{Name: s.name, Kind: kind, Source: plugin, Description: s.desc, Meta: map[string]string{"plugin": plugin}})
	}
	return out
}

func mustParse(tb testing.TB, yaml string) *Taxonomy {
	tb.Helper()
	tax, err := ParseTaxonomy("test.yaml", []byte(yaml), nil)
	if err != nil {
		tb.Fatal(err)
	}
	return tax
}
