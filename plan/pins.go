package plan

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/internal/textdiff"
)

// Pin is a named capability's card as it was when the plan was made: its
// digest, and its description and input schema to show what changed.
type Pin struct {
	Name        string          `json:"name"`
	Digest      string          `json:"digest"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
}

// PinsOf returns the pins of the capabilities p's tasks name, in the
// order they are first named, as cat has them now. Names cat lacks are
// left out.
func PinsOf(p *Plan, cat *card.Catalog) []Pin {
	var pins []Pin
	seen := map[string]bool{}
	for _, t := range p.Tasks {
		for _, n := range t.Capabilities {
			if seen[n] {
				continue
			}
			seen[n] = true
			c, ok := cat.Lookup(n)
			if !ok {
				continue
			}
			pins = append(pins, Pin{Name: c.Name, Digest: c.Digest, Description: c.Description, InputSchema: c.InputSchema})
		}
	}
	return pins
}

// CheckPins compares p's pins with cat. It returns a copy of p and a
// warning (field "pins") for each pinned capability that changed:
//
//   - a card whose digest differs is kept, and the warning shows what
//     changed in its description and input schema, line by line ("- "
//     removed, "+ " added);
//   - a name the catalog no longer has is dropped from every task, with
//     its pin.
//
// A plan without pins is returned unchanged, with no warning. With a nil
// catalog nothing is checked.
func CheckPins(p *Plan, cat *card.Catalog) (*Plan, []Warning) {
	out := p.Clone()
	if cat == nil || len(p.Pins) == 0 {
		return out, nil
	}
	var warns []Warning
	gone := map[string]bool{}
	kept := out.Pins[:0]
	for _, pin := range out.Pins {
		c, ok := cat.Lookup(pin.Name)
		if !ok {
			gone[pin.Name] = true
			var tasks []string
			for _, t := range out.Tasks {
				if slices.Contains(t.Capabilities, pin.Name) {
					tasks = append(tasks, t.ID)
				}
			}
			warns = append(warns, Warning{Field: "pins", Message: fmt.Sprintf(
				"dropped %q: it was in the catalog when the plan was made and is no longer (named by %s)", pin.Name, listOrNone(tasks))})
			continue
		}
		kept = append(kept, pin)
		if c.Digest == pin.Digest {
			continue
		}
		warns = append(warns, Warning{Field: "pins", Message: fmt.Sprintf(
			"%q changed since the plan was made (digest %s, now %s):\n%s", pin.Name, short(pin.Digest), short(c.Digest), PinDiff(pin, c))})
	}
	out.Pins = kept
	if len(gone) > 0 {
		for i := range out.Tasks {
			t := &out.Tasks[i]
			t.Capabilities = slices.DeleteFunc(t.Capabilities, func(n string) bool { return gone[n] })
		}
	}
	return out, warns
}

func listOrNone(ids []string) string {
	if len(ids) == 0 {
		return "no task"
	}
	return "task " + strings.Join(ids, ", ")
}

func short(d string) string {
	if len(d) > 12 {
		return d[:12]
	}
	return d
}

// PinDiff shows how card c differs from pin: its description and input
// schema line by line, unchanged lines indented by two spaces, removed
// ones marked "- " and added ones "+ ". Sections that did not change are
// left out.
func PinDiff(pin Pin, c *card.Card) string {
	var b strings.Builder
	section := func(title, was, now string) {
		if was == now {
			return
		}
		fmt.Fprintf(&b, "  %s:\n", title)
		for _, l := range textdiff.Lines(was, now) {
			b.WriteString("    ")
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	section("description", pin.Description, c.Description)
	section("input_schema", textdiff.JSON(pin.InputSchema), textdiff.JSON(c.InputSchema))
	if b.Len() == 0 {
		b.WriteString("  name, kind or formatting changed\n")
	}
	return strings.TrimSuffix(b.String(), "\n")
}
