package route_test

import (
	"fmt"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/route"
)

func Example() {
	cards := []card.Card{
		{Name: "python-development:python-pro", Kind: card.KindAgent, Meta: map[string]string{"plugin": "python-development"},
			Description: "Master Python 3.12+ with modern features. Use PROACTIVELY for Python development and refactoring."},
		{Name: "review:code-reviewer", Kind: card.KindAgent, Meta: map[string]string{"plugin": "review"},
			Description: "Expert code review for quality and security."},
	}
	m := route.New(nil, nil).Scan(cards)
	d, err := m.Route(route.Request{Phase: "EXECUTE", Project: route.NewProject("python")})
	if err != nil {
		panic(err)
	}
	fmt.Print(d.Announcement)
	for _, s := range d.Secondary {
		fmt.Println(s.Line)
	}
	// Output:
	// **Delegating code-implementation** → python-development:python-pro
	// - matched keywords: develop (partial), development (exact), feature (partial, first sentence), features (exact, first sentence), refactor (partial, shared by 2 categories), refactoring (exact, shared by 2 categories)
	// - score: 53 (High confidence)
	// - project type: python (matched: python)
	// - why: exact keyword match; agent (preferred over commands); ranked first of 1 candidate
	// → tdd-implementation: defaults/executor (no plugin match)
	// → infrastructure: defaults/executor (no plugin match)
}
