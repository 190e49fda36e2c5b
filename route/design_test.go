package route

import (
	"strings"
	"testing"
)

// TestDesignExample is the worked example of the routing design: in a
// .NET project, tdd-implementation goes to the .NET TDD agent, not the
// Node.js one, and not to the built-in executor. Its description says
// "implementation" and "code", words that code-implementation shares
// with other categories; "TDD" defines tdd-implementation.
func TestDesignExample(t *testing.T) {
	cards := agentCards(
		agentSpec{name: "dotnet-kit:tdd-implementer", desc: "TDD implementation specialist for .NET. Use to write minimal code that makes tests pass."},
		agentSpec{name: "node-kit:tdd-node", desc: "TDD for Node.js"},
	)
	m := New(nil, nil).Scan(cards)
	for _, e := range m.Entries() {
		if e.Capability != "tdd-implementation" {
			t.Errorf("%s filed under %s (%d), want tdd-implementation; others %+v", e.Name, e.Capability, e.Score, e.Others)
		}
	}
	d, err := m.Route(Request{Capability: "tdd-implementation", Project: NewProject("dotnet")})
	if err != nil {
		t.Fatal(err)
	}
	if d.Default || d.Agent != "dotnet-kit:tdd-implementer" || !d.Project.Matched {
		t.Fatalf("routed to %s (default %v, project matched %v):\n%s", d.Agent, d.Default, d.Project.Matched, d.Announcement)
	}
	for _, want := range []string{
		"**Delegating tdd-implementation** → dotnet-kit:tdd-implementer\n",
		"- matched keywords: tdd (exact, first sentence), ",
		"- project type: dotnet (matched: .net)\n",
	} {
		if !strings.Contains(d.Announcement, want) {
			t.Errorf("announcement lacks %q:\n%s", want, d.Announcement)
		}
	}
	if d.Line != "→ tdd-implementation: dotnet-kit:tdd-implementer (keyword match)" {
		t.Errorf("line %q", d.Line)
	}
	t.Logf("\n%s%s", d.Announcement, d.Line)
}
