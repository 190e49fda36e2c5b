package route

import (
	"fmt"
	"os"
	"testing"
)

func TestExplore(t *testing.T) {
	cards := loadPlugins(t, "/work/shared/corpus")
	m := New(nil, nil).Scan(cards)
	f, _ := os.Create("/tmp/route_map.txt")
	defer f.Close()
	counts := map[string]int{}
	tiers := map[Confidence]int{}
	for _, e := range m.Entries() {
		counts[e.Capability]++
		tiers[e.Confidence]++
		fmt.Fprintf(f, "%-24s %-6s %3d %-60s %v\n", e.Capability, e.Confidence, e.Score, e.Name, matchWords(e.Matched))
	}
	for _, c := range cards {
		if e := find(m, c.Name); e != nil && e.Capability == "" {
			d := c.Description
			if len(d) > 200 {
				d = d[:200]
			}
			fmt.Fprintf(f, "UN %s | %s\n", c.Name, d)
		}
	}
	t.Log(len(cards), m.Plugins(), counts, tiers)
}

func find(m *Map, n string) *Entry {
	for i := range m.Entries() {
		if m.Entries()[i].Name == n {
			return &m.Entries()[i]
		}
	}
	return nil
}
