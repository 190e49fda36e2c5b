package plan

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/capbroker/capbroker/card"
)

func pinCatalog(t *testing.T, edit func(cards []card.Card) []card.Card) *card.Catalog {
	t.Helper()
	cards := Builtin()
	cards[0].InputSchema = json.RawMessage(`{"type":"object","properties":{"tone":{"type":"string"}}}`)
	cards[0].Digest = cards[0].ComputeDigest()
	if edit != nil {
		cards = edit(cards)
	}
	cat, warns := card.NewCatalog(cards)
	if len(warns) > 0 {
		t.Fatal(warns)
	}
	return cat
}

func pinnedPlan(t *testing.T, cat *card.Catalog) *Plan {
	t.Helper()
	p := &Plan{Goal: "Write the launch email in French", Tasks: []Task{
		{ID: "t1", Description: "Draft the email.", Capabilities: []string{"text_generation", "brainstorming"}},
		{ID: "t2", Description: "Translate it.", DependsOn: []string{"t1"}, Capabilities: []string{"translation", "text_generation"}},
	}}
	p.Pins = PinsOf(p, cat)
	return p
}

func TestPinsOf(t *testing.T) {
	cat := pinCatalog(t, nil)
	p := pinnedPlan(t, cat)
	var names []string
	for _, pin := range p.Pins {
		names = append(names, pin.Name)
		c, _ := cat.Lookup(pin.Name)
		if pin.Digest != c.Digest || pin.Description != c.Description || !bytes.Equal(pin.InputSchema, c.InputSchema) {
			t.Errorf("pin %+v does not match its card", pin)
		}
	}
	if diff := cmp.Diff([]string{"text_generation", "brainstorming", "translation"}, names); diff != "" {
		t.Errorf("pins in first-named order (-want +got):\n%s", diff)
	}
	// Pins round-trip: encode, parse, encode gives the same bytes.
	data, err := Encode(p)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := Encode(back)
	if !bytes.Equal(data, again) {
		t.Errorf("a plan with pins does not round-trip:\n%s\n%s", data, again)
	}
	if p.ID() != back.ID() || len(p.ID()) != 12 {
		t.Errorf("ids %q %q", p.ID(), back.ID())
	}
	back.Goal += "!"
	if back.ID() == p.ID() {
		t.Error("two plans share an id")
	}
}

func TestCheckPins(t *testing.T) {
	orig := pinCatalog(t, nil)
	p := pinnedPlan(t, orig)
	for _, tt := range []struct {
		name      string
		edit      func([]card.Card) []card.Card
		want      []string // substrings of the warnings, in order
		wantCaps  map[string][]string
		wantPins  int
		wantClean bool
	}{
		{name: "unchanged", wantClean: true, wantPins: 3,
			wantCaps: map[string][]string{"t1": {"text_generation", "brainstorming"}, "t2": {"translation", "text_generation"}}},
		{name: "a description and a schema changed", wantPins: 3,
			edit: func(cards []card.Card) []card.Card {
				cards[0].Description = "Write prose, and post it to every social network at once."
				cards[0].InputSchema = json.RawMessage(`{"type":"object","properties":{"tone":{"type":"string"},"publish":{"type":"boolean"}}}`)
				cards[0].Digest = ""
				return cards
			},
			want: []string{`"text_generation" changed since the plan was made (digest `,
				"  description:\n    - Write or rewrite prose in natural language",
				"    + Write prose, and post it to every social network at once.",
				"  input_schema:\n", `    +     "publish": {`},
			wantCaps: map[string][]string{"t1": {"text_generation", "brainstorming"}, "t2": {"translation", "text_generation"}}},
		{name: "a card is gone", wantPins: 2,
			edit: func(cards []card.Card) []card.Card {
				var out []card.Card
				for _, c := range cards {
					if c.Name != "text_generation" {
						out = append(out, c)
					}
				}
				return out
			},
			want:     []string{`dropped "text_generation": it was in the catalog when the plan was made and is no longer (named by task t1, t2)`},
			wantCaps: map[string][]string{"t1": {"brainstorming"}, "t2": {"translation"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cat := pinCatalog(t, tt.edit)
			got, warns := CheckPins(p, cat)
			var msgs []string
			for _, w := range warns {
				if w.Field != "pins" {
					t.Errorf("warning field %q", w.Field)
				}
				msgs = append(msgs, w.String())
			}
			all := strings.Join(msgs, "\n")
			if tt.wantClean && len(warns) > 0 {
				t.Errorf("warnings: %s", all)
			}
			for _, w := range tt.want {
				if !strings.Contains(all, w) {
					t.Errorf("warnings lack %q:\n%s", w, all)
				}
			}
			caps := map[string][]string{}
			for _, tk := range got.Tasks {
				caps[tk.ID] = tk.Capabilities
			}
			if diff := cmp.Diff(tt.wantCaps, caps); diff != "" {
				t.Errorf("capabilities (-want +got):\n%s", diff)
			}
			if len(got.Pins) != tt.wantPins {
				t.Errorf("%d pins left, want %d", len(got.Pins), tt.wantPins)
			}
			// Assembly says the same, and pins the catalog as it is now.
			a := Assemble(t.Context(), p, cat, nil)
			if len(a.Warnings) < len(warns) || len(a.Pins) != tt.wantPins {
				t.Errorf("assembly: %d warnings, %d pins", len(a.Warnings), len(a.Pins))
			}
		})
	}
	if len(p.Pins) != 3 || len(p.Tasks[0].Capabilities) != 2 {
		t.Error("CheckPins changed its argument")
	}
}

func TestParsePinsErrors(t *testing.T) {
	for _, tt := range []struct{ doc, want string }{
		{`{"goal":"g","tasks":[{"id":"t1","description":"d"}],"pins":[{"name":"x"}]}`, `pins[0]: missing field "digest"`},
		{`{"goal":"g","tasks":[{"id":"t1","description":"d"}],"pins":[{"name":"x","digest":"d","input_schema":{"a":}}]}`, "pins[0].input_schema: invalid JSON"},
		{`{"goal":"g","tasks":[{"id":"t1","description":"d"}],"pins":{}}`, "pins: want an array, got an object"},
	} {
		_, err := Parse([]byte(tt.doc))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.doc, err, tt.want)
		}
	}
}
