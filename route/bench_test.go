package route

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/capbroker/capbroker/card"
)

// syntheticCards returns n plugin agents and commands whose descriptions
// mix the default taxonomy's keywords, technology words and filler, in
// the shape of real ones (two or three sentences). It is deterministic.
func syntheticCards(n int) []card.Card {
	rng := rand.New(rand.NewPCG(1, 2))
	tax := Default()
	var vocab []string
	for _, c := range tax.Categories {
		vocab = append(vocab, c.Keywords...)
	}
	for _, p := range tax.Projects {
		vocab = append(vocab, p.Keywords...)
	}
	filler := strings.Fields("expert specialist modern production ready teams systems patterns scalable secure fast clean use proactively for when with and the of")
	cards := make([]card.Card, n)
	for i := range cards {
		var b strings.Builder
		for s := 0; s < 2+rng.IntN(2); s++ {
			for w := 0; w < 8+rng.IntN(10); w++ {
				if rng.IntN(4) == 0 {
					b.WriteString(vocab[rng.IntN(len(vocab))])
				} else {
					b.WriteString(filler[rng.IntN(len(filler))])
				}
				b.WriteByte(' ')
			}
			b.WriteString(". ")
		}
		kind := card.KindAgent
		if i%4 == 3 {
			kind = card.KindCommand
		}
		plugin := fmt.Sprintf("plugin%03d", i/5)
		cards[i] = card.Card{Name: fmt.Sprintf("%s:agent%04d", plugin, i), Kind: kind, Source: plugin,
			Description: b.String(), Meta: map[string]string{"plugin": plugin}}
	}
	return cards
}

// BenchmarkRoute measures one routing call against a map of 1,000 plugin
// agents and commands: the capability from the phase and task, then
// delegation among its candidates with the project type.
func BenchmarkRoute(b *testing.B) {
	m := New(nil, nil).Scan(syntheticCards(1000))
	reqs := []Request{
		{Phase: "EXECUTE", Task: "implement the stock parser with tests", Project: NewProject("python")},
		{Task: "review the pull request for security issues", Project: NewProject("dotnet")},
		{Phase: "DISCUSS"},
	}
	for _, r := range reqs {
		if d, err := m.Route(r); err != nil || d.Default {
			b.Fatalf("%+v: %v default=%v", r, err, d.Default)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, err := m.Route(reqs[i%len(reqs)]); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkScan measures building the capability map of 1,000 cards.
func BenchmarkScan(b *testing.B) {
	cards := syntheticCards(1000)
	r := New(nil, nil)
	b.ReportAllocs()
	for b.Loop() {
		r.Scan(cards)
	}
}

// BenchmarkClassify measures the capability choice of a task text alone
// (keywords and the ranker over the taxonomy), with no agents.
func BenchmarkClassify(b *testing.B) {
	m := New(nil, nil).Scan(nil)
	tasks := []string{
		"Figure out which services call the billing API and draw the dependency graph",
		"review the pull request for security issues",
		"Come up with a few ways we could speed up the build",
	}
	for _, t := range tasks {
		if _, err := m.Route(Request{Task: t}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, err := m.Route(Request{Task: tasks[i%len(tasks)]}); err != nil {
			b.Fatal(err)
		}
	}
}
