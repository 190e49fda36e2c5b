package examples_test

import (
	"testing"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/examples"
)

func TestCards(t *testing.T) {
	cards, err := examples.Cards()
	if err != nil {
		t.Fatal(err)
	}
	if len(cards) != 112 {
		t.Errorf("example catalog has %d tools, want 112", len(cards))
	}
	cat, warns := card.NewCatalog(cards)
	// github and sentry both offer list_issues: the only collision.
	if len(warns) != 2 {
		t.Errorf("warnings = %v, want the two list_issues renames", warns)
	}
	for _, n := range []string{"github__list_issues", "sentry__list_issues", "read_file"} {
		if _, ok := cat.Lookup(n); !ok {
			t.Errorf("catalog lacks %s", n)
		}
	}
	for _, c := range cat.Cards() {
		if c.Description == "" || len(c.InputSchema) == 0 || len(c.Annotations) == 0 {
			t.Errorf("%s lacks a description, schema or annotations", c.Name)
		}
	}
}
