package card

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Separator joins a source and a name when names must be namespaced:
// "github__create_issue".
const Separator = "__"

// Warning is something the catalog changed or refused while building, said
// so that nothing happens silently.
type Warning struct {
	// Name is the card name concerned (before any rename).
	Name string `json:"name"`
	// Source is the source of the card concerned.
	Source string `json:"source,omitempty"`
	// Message says what happened.
	Message string `json:"message"`
	// Renamed is the new name when the card was renamed, else empty.
	Renamed string `json:"renamed,omitempty"`
}

func (w Warning) String() string {
	if w.Source != "" {
		return fmt.Sprintf("%s (from %s): %s", w.Name, w.Source, w.Message)
	}
	return w.Name + ": " + w.Message
}

// Catalog is an immutable set of cards with unique names, in name order.
// It is safe for concurrent use.
type Catalog struct {
	cards  []Card
	byName map[string]int
}

// NewCatalog builds a catalog from cards of any number of sources.
//
// Names are made unique deterministically, whatever order cards come in:
//   - a name offered by two or more sources is namespaced as
//     source__name for every one of them, with a warning;
//   - a name offered twice by the same source keeps the card that sorts
//     first by (path, digest) and reports the others;
//   - an invalid card is reported and left out.
//
// Cards without a digest get one. The input slice is not modified.
func NewCatalog(cards []Card) (*Catalog, []Warning) {
	var warns []Warning
	valid := make([]Card, 0, len(cards))
	for _, c := range cards {
		if err := c.Validate(); err != nil {
			warns = append(warns, Warning{Name: c.Name, Source: c.Source, Message: "left out: " + err.Error()})
			continue
		}
		c.Tags = slices.Clone(c.Tags)
		if c.Digest == "" {
			c.Digest = c.ComputeDigest()
		}
		valid = append(valid, c)
	}
	// Stable order independent of input order.
	sort.SliceStable(valid, func(i, j int) bool {
		a, b := &valid[i], &valid[j]
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		if a.Source != b.Source {
			return a.Source < b.Source
		}
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		return a.Digest < b.Digest
	})

	// Drop duplicates within one source.
	dedup := valid[:0]
	for i, c := range valid {
		if i > 0 && c.Name == valid[i-1].Name && c.Source == valid[i-1].Source {
			warns = append(warns, Warning{Name: c.Name, Source: c.Source,
				Message: fmt.Sprintf("left out: the same source already has a card with this name (kept the one from %s)", orUnknown(dedup[len(dedup)-1].Path))})
			continue
		}
		dedup = append(dedup, c)
	}

	// Count sources per name.
	sources := map[string]int{}
	for _, c := range dedup {
		sources[c.Name]++
	}
	out := make([]Card, 0, len(dedup))
	for _, c := range dedup {
		if sources[c.Name] > 1 {
			renamed := Namespaced(c.Source, c.Name)
			warns = append(warns, Warning{Name: c.Name, Source: c.Source, Renamed: renamed,
				Message: fmt.Sprintf("name offered by %d sources; renamed to %s", sources[c.Name], renamed)})
			if c.OriginalName == "" {
				c.OriginalName = c.Name
			}
			c.Name = renamed
		}
		out = append(out, c)
	}
	// A rename can collide with an existing name (a source literally named
	// "a__b"); resolve by numbering, still deterministically.
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	cat := &Catalog{cards: out[:0], byName: make(map[string]int, len(out))}
	for _, c := range out {
		if _, taken := cat.byName[c.Name]; taken {
			base := c.Name
			for n := 2; ; n++ {
				c.Name = fmt.Sprintf("%s~%d", base, n)
				if _, taken := cat.byName[c.Name]; !taken {
					break
				}
			}
			warns = append(warns, Warning{Name: base, Source: c.Source, Renamed: c.Name, Message: "name still taken after namespacing; renamed to " + c.Name})
		}
		cat.byName[c.Name] = len(cat.cards)
		cat.cards = append(cat.cards, c)
	}
	if !sort.SliceIsSorted(cat.cards, func(i, j int) bool { return cat.cards[i].Name < cat.cards[j].Name }) {
		sort.SliceStable(cat.cards, func(i, j int) bool { return cat.cards[i].Name < cat.cards[j].Name })
		for i, c := range cat.cards {
			cat.byName[c.Name] = i
		}
	}
	return cat, warns
}

// Namespaced joins a source and a name with [Separator]. Characters that
// MCP clients reject in tool names are replaced by '_'.
func Namespaced(source, name string) string {
	if source == "" {
		return name
	}
	return SafeName(source) + Separator + name
}

// SafeName maps s to the characters that tool names may hold across
// providers ([A-Za-z0-9_.-]), replacing any other rune with '_'.
func SafeName(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-', r == '.':
			return r
		}
		return '_'
	}, s)
}

func orUnknown(s string) string {
	if s == "" {
		return "an unnamed file"
	}
	return s
}

// Len returns the number of cards.
func (c *Catalog) Len() int {
	if c == nil {
		return 0
	}
	return len(c.cards)
}

// Cards returns the cards in name order. The slice is shared: do not modify it.
func (c *Catalog) Cards() []Card {
	if c == nil {
		return nil
	}
	return c.cards
}

// At returns the i-th card in name order.
func (c *Catalog) At(i int) *Card { return &c.cards[i] }

// Index returns the position of the named card, or -1.
func (c *Catalog) Index(name string) int {
	if c == nil {
		return -1
	}
	if i, ok := c.byName[name]; ok {
		return i
	}
	return -1
}

// Lookup returns the named card.
func (c *Catalog) Lookup(name string) (*Card, bool) {
	i := c.Index(name)
	if i < 0 {
		return nil, false
	}
	return &c.cards[i], true
}

// Names returns every card name in order.
func (c *Catalog) Names() []string {
	names := make([]string, c.Len())
	for i := range names {
		names[i] = c.cards[i].Name
	}
	return names
}

func sortParams(ps []Param) {
	sort.Slice(ps, func(i, j int) bool { return ps[i].Name < ps[j].Name })
}
