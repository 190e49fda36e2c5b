package route

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/internal/testenv"
)

// corpusCards loads the agents and commands of the real plugins in
// shared/corpus and checks their number against expected_counts.json.
func corpusCards(tb testing.TB) []card.Card {
	tb.Helper()
	root := testenv.NeedShared(tb, "corpus")
	data, err := os.ReadFile(filepath.Join(root, "expected_counts.json"))
	if err != nil {
		tb.Fatal(err)
	}
	var counts map[string]struct{ Agents, Commands int }
	if err := json.Unmarshal(data, &counts); err != nil {
		tb.Fatal(err)
	}
	want := 0
	for _, c := range counts {
		want += c.Agents + c.Commands
	}
	cards := loadPlugins(tb, root)
	if len(cards) != want {
		tb.Fatalf("loaded %d agents and commands, expected_counts.json says %d", len(cards), want)
	}
	return cards
}

// TestCorpusMap scores every agent and command of the corpus: each gets a
// category and a tier consistent with its score (or is listed as
// unassigned with tier None), and the map matches the golden file.
func TestCorpusMap(t *testing.T) {
	cards := corpusCards(t)
	m := New(nil, nil).Scan(cards)
	if m.Len() != len(cards) {
		t.Fatalf("map has %d entries, want %d", m.Len(), len(cards))
	}
	assigned := 0
	for _, e := range m.Entries() {
		switch {
		case e.Capability == "":
			if e.Score != 0 || e.Confidence != None {
				t.Errorf("%s: unassigned with score %d %s", e.Name, e.Score, e.Confidence)
			}
		case e.Confidence != Tier(e.Score) || e.Score <= 0 || len(e.Matched) == 0:
			t.Errorf("%s: %s score %d tier %s matched %v", e.Name, e.Capability, e.Score, e.Confidence, e.Matched)
		default:
			assigned++
		}
	}
	// Most of the corpus is software work; what is left is chat, PDF and
	// brand tooling that no workflow capability covers.
	if assigned*100 < m.Len()*95 {
		t.Errorf("only %d of %d cards assigned", assigned, m.Len())
	}
	var buf bytes.Buffer
	if err := m.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	golden(t, filepath.Join("testdata", "corpus-map.golden"), buf.String())
}

// TestCorpusRoute routes each phase for a dotnet, a node and a python
// project against the real plugins and checks the answers against a
// golden file; EXECUTE must pick an agent of the project's technology.
func TestCorpusRoute(t *testing.T) {
	m := New(nil, nil).Scan(corpusCards(t))
	var out strings.Builder
	for _, name := range []string{"dotnet", "node", "python"} {
		project, err := DetectProject(context.Background(), filepath.Join("testdata", "projects", name), nil)
		if err != nil {
			t.Fatal(err)
		}
		project.Dir = "testdata/projects/" + name
		fmt.Fprintf(&out, "=== project %s (types %v, evidence %v)\n", name, project.Types, project.Evidence)
		requests := []Request{
			{Phase: "DISCUSS"}, {Phase: "PLAN"}, {Phase: "EXECUTE"}, {Phase: "VERIFY"},
			{Phase: "EXECUTE", Task: "write failing unit tests first, then make them pass"},
			{Task: "set up the CI/CD pipeline and deploy to Kubernetes"},
		}
		for _, req := range requests {
			req.Project = project
			d, err := m.Route(req)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&out, "\n--- phase %q task %q\n%s%s\n", req.Phase, req.Task, d.Announcement, d.Line)
			for _, s := range d.Secondary {
				fmt.Fprintf(&out, "  also %s\n", s.Line)
			}
			if req.Phase == "EXECUTE" && req.Task == "" {
				if d.Default || !d.Project.Matched {
					t.Errorf("%s EXECUTE: %s (project matched %v)", name, d.Agent, d.Project.Matched)
				}
			}
			if req.Phase == "PLAN" && !d.Internal {
				t.Errorf("%s PLAN should use the internal coordinator, got %s", name, d.Agent)
			}
			if d.Announcement == "" || d.Line == "" || len(d.Reasons) == 0 {
				t.Errorf("%s %s: decision without announcement or reasons", name, req.Phase)
			}
		}
		out.WriteString("\n")
	}
	golden(t, filepath.Join("testdata", "corpus-route.golden"), out.String())
}
