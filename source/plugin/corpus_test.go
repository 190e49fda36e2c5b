package plugin

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/internal/testenv"
	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files")

type counts struct {
	Plugins  int `json:"plugins"`
	Agents   int `json:"agents"`
	Commands int `json:"commands"`
	Skills   int `json:"skills"`
}

// loadAll scans root and loads every plugin and loose file the way
// discovery does, returning the cards, the problems and the counts.
func loadAll(t *testing.T, root, scope string) ([]card.Card, []Problem, counts) {
	t.Helper()
	l, err := Scan(root, nil)
	if err != nil {
		t.Fatal(err)
	}
	var cards []card.Card
	probs := append([]Problem{}, l.Problems...)
	n := counts{Plugins: len(l.Plugins)}
	for _, p := range l.Plugins {
		cs, ps := p.Load()
		cards = append(cards, cs...)
		probs = append(probs, ps...)
	}
	for _, group := range []struct {
		files []Loose
		kind  card.Kind
	}{{l.Agents, card.KindAgent}, {l.Commands, card.KindCommand}, {l.Skills, card.KindSkill}} {
		for _, f := range group.files {
			c, ps, ok := LoadLoose(f, group.kind, scope)
			probs = append(probs, ps...)
			if ok {
				cards = append(cards, c)
			}
		}
	}
	for _, c := range cards {
		switch c.Kind {
		case card.KindAgent:
			n.Agents++
		case card.KindCommand:
			n.Commands++
		case card.KindSkill:
			n.Skills++
		}
	}
	return cards, probs, n
}

// TestCorpus discovers every folder of the shared corpus: the counts must
// match expected_counts.json exactly, and the cards and problems must match
// the golden file testdata/<folder>.golden (go test -update rewrites it).
func TestCorpus(t *testing.T) {
	dir := testenv.NeedShared(t, "corpus")
	data, err := os.ReadFile(filepath.Join(dir, "expected_counts.json"))
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]counts
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	if len(want) == 0 {
		t.Fatal("expected_counts.json lists no folders")
	}
	names := make([]string, 0, len(want))
	for k := range want {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			root := filepath.Join(dir, name)
			cards, probs, got := loadAll(t, root, name)
			if diff := cmp.Diff(want[name], got); diff != "" {
				t.Errorf("counts (-want +got):\n%s", diff)
			}
			for _, c := range cards {
				if err := c.Validate(); err != nil {
					t.Errorf("%s: %v", c.Path, err)
				}
				if c.Description == "" {
					t.Errorf("%s: card %s has no description", c.Path, c.Name)
				}
			}
			if _, warns := card.NewCatalog(cards); len(warns) > 0 {
				for _, w := range warns {
					t.Logf("catalog: %s", w)
				}
			}
			golden(t, filepath.Join("testdata", name+".golden"), render(root, cards, probs))
		})
	}
}

// render writes one line per card (kind, name, source, first characters
// of the description) and one per problem, paths relative to root.
func render(root string, cards []card.Card, probs []Problem) string {
	sort.Slice(cards, func(i, j int) bool {
		if cards[i].Name != cards[j].Name {
			return cards[i].Name < cards[j].Name
		}
		return cards[i].Path < cards[j].Path
	})
	var b strings.Builder
	fmt.Fprintf(&b, "# %d cards\n", len(cards))
	for _, c := range cards {
		d := strings.Join(strings.Fields(c.Description), " ")
		if r := []rune(d); len(r) > 60 {
			d = string(r[:60]) + "…"
		}
		extra := ""
		if t := c.Meta[MetaTools]; t != "" {
			extra += " tools=[" + t + "]"
		}
		if t := c.Meta[MetaAllowedTools]; t != "" {
			extra += " allowed-tools=[" + t + "]"
		}
		fmt.Fprintf(&b, "%-7s %s (%s) %q%s\n", c.Kind, c.Name, c.Source, d, extra)
	}
	lines := make([]string, 0, len(probs))
	for _, p := range probs {
		rel, err := filepath.Rel(root, p.Path)
		if err != nil {
			rel = p.Path
		}
		p.Path = filepath.ToSlash(rel)
		kind := "warn"
		if p.Skipped {
			kind = "skip"
		}
		lines = append(lines, kind+" "+p.String())
	}
	sort.Strings(lines)
	fmt.Fprintf(&b, "# %d problems\n", len(lines))
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
	return b.String()
}

func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s differs (-want +got; go test -update rewrites it):\n%s", path, diff)
	}
}
