package policy

import (
	"testing"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/rank"
)

// TestFloorPrefersCurrent: a floor name whose tool says it is DEPRECATED
// and names its successor gets the successor, of the same source.
func TestFloorPrefersCurrent(t *testing.T) {
	cat, _ := card.NewCatalog([]card.Card{
		{Name: "fs__read_file", OriginalName: "read_file", Source: "fs", Kind: card.KindTool, Description: "Read the complete contents of a file as text. DEPRECATED: Use read_text_file instead."},
		{Name: "fs__read_text_file", OriginalName: "read_text_file", Source: "fs", Kind: card.KindTool, Description: "Read the complete contents of a file as text."},
		{Name: "fs__write_file", OriginalName: "write_file", Source: "fs", Kind: card.KindTool, Description: "Write a file."},
	})
	s, err := NewSelector(cat, rank.New(cat.Cards(), nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"read_file": "fs__read_text_file", "write_file": "fs__write_file"} {
		if i := s.findFloor(name); i < 0 || cat.At(i).Name != want {
			t.Errorf("floor %s resolved to %d, want %s", name, i, want)
		}
	}
}
