package route

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capbroker/capbroker/source"
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
	// The figures worked through in doc.go: at full points 37 against 32.
	e := m.Entries()[0]
	if e.Name != "dotnet-kit:tdd-implementer" || e.Score != 32 || len(e.Others) == 0 ||
		e.Others[0].Capability != "code-implementation" || e.Others[0].Score != 21 {
		t.Errorf("%s: %d, others %+v", e.Name, e.Score, e.Others)
	}
	if s, ms := scoreText(newText(cards[0].Description), compileKeywords(Default().Category("code-implementation").Keywords)); s != 37 || fullScore(ms) != 37 {
		t.Errorf("code-implementation at full points: %d, want 37", s)
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

// TestDesignExampleFromFolders runs the design's example end to end: the
// two agents live in plugin folders without .claude-plugin/plugin.json
// (read as plugins named after their folders), the project is found to be
// .NET from its files, and tdd-implementation goes to the .NET agent.
func TestDesignExampleFromFolders(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	write := func(rel, text string) {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("plugins/dotnet-tdd/agents/tdd-implementer.md", "---\nname: tdd-implementer\ndescription: TDD implementation specialist for .NET. Use to write minimal code that makes tests pass.\n---\nBody.\n")
	write("plugins/dotnet-tdd/commands/red.md", "---\ndescription: Write one failing test\n---\nBody.\n")
	write("plugins/node-tdd/agents/tdd-node.md", "---\nname: tdd-node\ndescription: TDD for Node.js\n---\nBody.\n")
	write("project/Inventory.csproj", "<Project Sdk=\"Microsoft.NET.Sdk\"></Project>\n")

	res, err := source.Discover(ctx, &source.Options{Roots: []source.Root{{Path: filepath.Join(root, "plugins")}}})
	if err != nil {
		t.Fatal(err)
	}
	project, err := DetectProject(ctx, filepath.Join(root, "project"), nil)
	if err != nil {
		t.Fatal(err)
	}
	d, err := New(nil, nil).Scan(res.Cards).Route(Request{Capability: "tdd-implementation", Project: project})
	if err != nil {
		t.Fatal(err)
	}
	if d.Agent != "dotnet-tdd:tdd-implementer" || d.Plugin != "dotnet-tdd" || !d.Project.Matched ||
		!strings.HasPrefix(d.Announcement, "**Delegating tdd-implementation** → dotnet-tdd:tdd-implementer\n") {
		t.Fatalf("cards %d, decision %s:\n%s", len(res.Cards), d.Agent, d.Announcement)
	}
	if !strings.Contains(d.Announcement, "(1 left out: it names only other project types)") {
		t.Errorf("the Node.js agent is not said to be left out:\n%s", d.Announcement)
	}
}
