package route

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDefaultTaxonomy checks the default categories, defaults and phases
// the routing design asks for.
func TestDefaultTaxonomy(t *testing.T) {
	tax := Default()
	var got []string
	for _, c := range tax.Categories {
		got = append(got, c.Name+" "+strings.Join(c.Phases, ",")+" "+c.Default)
	}
	want := []string{
		"requirements-gathering DISCUSS defaults/interviewer",
		"brainstorming DISCUSS defaults/interviewer",
		"codebase-analysis DISCUSS,PLAN defaults/researcher",
		"coordination PLAN defaults/coordinator",
		"tdd-implementation EXECUTE defaults/executor",
		"code-implementation EXECUTE defaults/executor",
		"infrastructure EXECUTE defaults/executor",
		"code-review VERIFY defaults/validator",
		"requirements-validation VERIFY defaults/validator",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("categories (-want +got):\n%s", diff)
	}
	wantPhases := []Phase{
		{Name: "DISCUSS", Primary: "requirements-gathering", Secondary: []string{"brainstorming", "codebase-analysis"}},
		{Name: "PLAN", Primary: "coordination", Secondary: []string{"codebase-analysis"}},
		{Name: "EXECUTE", Primary: "code-implementation", Secondary: []string{"tdd-implementation", "infrastructure"}},
		{Name: "VERIFY", Primary: "code-review", Secondary: []string{"requirements-validation"}},
	}
	if diff := cmp.Diff(wantPhases, tax.Phases); diff != "" {
		t.Errorf("phases (-want +got):\n%s", diff)
	}
	if !tax.Category("coordination").Internal {
		t.Error("coordination should be internal")
	}
	var projects []string
	for _, p := range tax.Projects {
		projects = append(projects, p.Name)
	}
	if diff := cmp.Diff([]string{"dotnet", "node", "python", "go", "rust", "java"}, projects); diff != "" {
		t.Errorf("projects (-want +got):\n%s", diff)
	}
	for _, k := range []string{".net", "dotnet", "c#", "csharp"} {
		if !contains(tax.Project("dotnet").Keywords, k) {
			t.Errorf("dotnet lacks keyword %q", k)
		}
	}
	// Default returns independent copies.
	tax.Categories[0].Keywords[0] = "changed"
	if Default().Categories[0].Keywords[0] == "changed" {
		t.Error("Default shares state between calls")
	}
}

func TestTaxonomyExtend(t *testing.T) {
	tax := mustParse(t, `
# no mode: extends the default
fallback: infrastructure
categories:
  - name: code-review
    keywords: [nitpick, code review]
    default: my/reviewer
  - name: documentation
    purpose: write docs
    phases: [verify]
    default: defaults/writer
    keywords: [docs, documentation]
phases:
  - name: VERIFY
    primary: code-review
    secondary: [requirements-validation, documentation]
  - name: ship
    primary: infrastructure
projects:
  - name: python
    keywords: [poetry]
  - name: elixir
    markers: [mix.exs]
    keywords: [elixir, phoenix]
`)
	cr := tax.Category("code-review")
	if cr.Default != "my/reviewer" || cr.Keywords[len(cr.Keywords)-1] != "nitpick" || !contains(cr.Keywords, "review") {
		t.Errorf("code-review not merged: %+v", cr)
	}
	if n := strings.Count(strings.Join(cr.Keywords, "|"), "code review"); n != 1 {
		t.Errorf("keyword added twice: %v", cr.Keywords)
	}
	doc := tax.Category("documentation")
	if doc == nil || doc.Phases[0] != "VERIFY" {
		t.Fatalf("documentation: %+v", doc)
	}
	if p := tax.Phase("verify"); len(p.Secondary) != 2 || p.Secondary[1] != "documentation" {
		t.Errorf("VERIFY: %+v", p)
	}
	if tax.Phase("SHIP") == nil || len(tax.Phases) != 5 {
		t.Errorf("phases: %+v", tax.Phases)
	}
	if !contains(tax.Project("python").Keywords, "poetry") || !contains(tax.Project("python").Keywords, "django") {
		t.Errorf("python keywords: %v", tax.Project("python").Keywords)
	}
	if tax.Project("elixir") == nil || tax.Fallback != "infrastructure" {
		t.Errorf("elixir or fallback missing")
	}
	if len(Default().Categories) != 9 {
		t.Error("extending changed the default")
	}
}

func TestTaxonomyReplaceAndFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tax.yaml")
	if err := os.WriteFile(path, []byte(smallTaxonomy), 0o644); err != nil {
		t.Fatal(err)
	}
	tax, err := LoadTaxonomy(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tax.Categories) != 4 || tax.Category("code-review") != nil || len(tax.Projects) != 2 {
		t.Errorf("replace kept default parts: %d categories, %d projects", len(tax.Categories), len(tax.Projects))
	}
	// Extending a given base.
	ext, err := ParseTaxonomy("x.yaml", []byte("categories:\n  - name: impl\n    keywords: [program]\n"), tax)
	if err != nil {
		t.Fatal(err)
	}
	if !contains(ext.Category("impl").Keywords, "program") || contains(tax.Category("impl").Keywords, "program") {
		t.Error("extend of a base must copy the base")
	}
	if _, err := LoadTaxonomy(filepath.Join(t.TempDir(), "missing.yaml"), nil); err == nil || !strings.Contains(err.Error(), "reading taxonomy") {
		t.Errorf("missing file: %v", err)
	}
	// The default file round-trips through the public text.
	if _, err := ParseTaxonomy("default.yaml", DefaultYAML(), &Taxonomy{}); err != nil {
		t.Error(err)
	}
}

func TestTaxonomyErrors(t *testing.T) {
	tests := []struct {
		name, yaml, want string
	}{
		{"empty", "", "t.yaml: empty taxonomy file"},
		{"not yaml", "categories: [", "t.yaml: yaml: line 1: did not find expected node content"},
		{"unknown field", "categories:\n  - name: x\n    keywrds: [a]\n", "t.yaml: yaml: unmarshal errors:\n  line 3: field keywrds not found in type route.categoryFile"},
		{"bad mode", "mode: merge\n", `t.yaml: unknown mode "merge" (want extend or replace)`},
		{"bad version", "version: 2\n", "t.yaml: unsupported taxonomy version 2 (want 1)"},
		{"no name", "categories:\n  - default: x\n    keywords: [a]\n", "t.yaml:2: category has no name"},
		{"duplicate", "categories:\n  - name: a\n    default: x\n    keywords: [a]\n  - name: a\n", `t.yaml:5: category "a" is defined twice`},
		{"no keywords", "categories:\n  - name: a\n    default: x\n", `t.yaml:2: category "a" has no keywords`},
		{"no default", "categories:\n  - name: a\n    keywords: [a]\n", `t.yaml:2: category "a" has no default agent`},
		{"punctuation keyword", "categories:\n  - name: a\n    default: x\n    keywords: [\"--\"]\n", `t.yaml:2: category "a": keyword "--" has no letters or digits`},
		{"same words", "categories:\n  - name: a\n    default: x\n    keywords: [test-driven, test driven]\n", `t.yaml:2: category "a": keywords "test-driven" and "test driven" are the same words`},
		{"phase unknown category", "phases:\n  - name: ship\n    primary: shipping\n", `t.yaml:2: phase SHIP names unknown category "shipping"`},
		{"phase no primary", "\nphases:\n  - name: ship\n", "t.yaml:3: phase SHIP has no primary capability"},
		{"phase twice", "phases:\n  - name: a\n    primary: brainstorming\n  - name: A\n    primary: brainstorming\n", `t.yaml:4: phase "A" is defined twice`},
		{"bad pattern", "projects:\n  - name: x\n    markers: [\"[\"]\n", `t.yaml:2: project type "x": bad file pattern "[" (want a file-name pattern such as *.csproj)`},
		{"pattern with a path", "projects:\n  - name: x\n    markers: [src/*.c]\n", `t.yaml:2: project type "x": bad file pattern "src/*.c" (want a file-name pattern such as *.csproj)`},
		{"project without files", "projects:\n  - name: x\n    keywords: [x]\n", `t.yaml:2: project type "x" has no markers or sources`},
		{"unknown fallback", "fallback: nope\n", `t.yaml: fallback names unknown category "nope"`},
		{"internal fallback", "fallback: coordination\n", `t.yaml: fallback category "coordination" is internal`},
		{"replace without fallback", "mode: replace\ncategories:\n  - name: a\n    default: x\n    keywords: [a]\n", "t.yaml: taxonomy has no fallback category"},
		{"replace with nothing", "mode: replace\n", "t.yaml: taxonomy has no categories"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseTaxonomy("t.yaml", []byte(tt.yaml), nil)
			if err == nil {
				t.Fatalf("no error, want %q", tt.want)
			}
			if err.Error() != tt.want {
				t.Errorf("error:\n got %q\nwant %q", err, tt.want)
			}
		})
	}
}
