package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/capbroker/capbroker/card"
)

// withPlugins replaces the plugin loader for one test with one that
// returns cards for the roots it knows, and counts its calls.
func withPlugins(t *testing.T, byRoot map[string][]card.Card) *int {
	t.Helper()
	calls := new(int)
	old := loadRoutingCards
	loadRoutingCards = func(ctx context.Context, m *Main, roots []string) ([]card.Card, error) {
		*calls++
		var out []card.Card
		for _, r := range roots {
			cs, ok := byRoot[filepath.Base(r)]
			if !ok {
				return nil, errors.New("reading " + r + ": no such plugins directory")
			}
			out = append(out, cs...)
		}
		return out, nil
	}
	t.Cleanup(func() { loadRoutingCards = old })
	return calls
}

func pluginCard(name, desc string, kind card.Kind) card.Card {
	plugin, _, _ := strings.Cut(name, ":")
	return card.Card{Name: name, Kind: kind, Source: plugin, Description: desc, Meta: map[string]string{"plugin": plugin}}
}

var testPlugins = map[string][]card.Card{
	"plugins": {
		pluginCard("python-development:python-pro", "Master Python with modern features. Use PROACTIVELY for Python development, refactoring and code.", card.KindAgent),
		pluginCard("csharp:csharp-pro", "Write modern C# code for .NET applications. Implements features.", card.KindAgent),
		pluginCard("review:code-reviewer", "Expert code review for quality and security. Reviews pull requests.", card.KindAgent),
		pluginCard("review:review-cmd", "Run a code review.", card.KindCommand),
	},
	"more": {
		pluginCard("tdd:tdd-orchestrator", "Test-driven development with red-green-refactor. Writes unit tests first.", card.KindAgent),
	},
}

func pythonProject(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "requirements.txt"), []byte("flask\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "FLOW.md"), []byte("# Flow\n\n## Phase\nEXECUTE\n"), 0o644)
	return dir
}

func TestRouteJSON(t *testing.T) {
	withPlugins(t, testPlugins)
	proj := pythonProject(t)
	root := filepath.Join(t.TempDir(), "plugins")
	out, errOut, code := run(t, "route", "--root", root, "--project", proj, "--phase", "EXECUTE", "--json", "add the CSV export")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var raw map[string]any
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	for _, k := range []string{"capability", "agent", "score", "confidence", "default", "matched", "announcement", "line", "reasons", "project", "secondary"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("route --json lacks %q", k)
		}
	}
	if raw["capability"] != "code-implementation" || raw["agent"] != "python-development:python-pro" || raw["default"] != false || raw["confidence"] != "High" {
		t.Errorf("decision: %s", out)
	}
	if p := raw["project"].(map[string]any); p["matched"] != true {
		t.Errorf("project: %v", p)
	}
}

func TestRouteText(t *testing.T) {
	calls := withPlugins(t, testPlugins)
	proj := pythonProject(t)
	dir := t.TempDir()
	plugins, more := filepath.Join(dir, "plugins"), filepath.Join(dir, "more")
	cache := filepath.Join(dir, "cache.json")
	gapLog := filepath.Join(dir, "gaps.json")
	common := []string{"--root", plugins, "--project", proj, "--cache", cache, "--gap-log", gapLog}

	out, errOut, code := run(t, append([]string{"route", "--phase", "VERIFY"}, common...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want := "**Delegating code-review** → review:code-reviewer\n"
	if !strings.HasPrefix(out, want) || !strings.Contains(out, "→ code-review: review:code-reviewer (keyword match)\n") ||
		!strings.Contains(out, "also in VERIFY:\n  → requirements-validation: defaults/validator (no plugin match)\n") {
		t.Errorf("VERIFY output:\n%s", out)
	}
	if *calls != 1 {
		t.Errorf("%d scans, want 1", *calls)
	}

	// A gap: the cached map (fresh, from the file) misses, one re-scan,
	// then the default; the gap goes to the JSON log and to FLOW.md.
	out, errOut, code = run(t, append([]string{"route", "--capability", "requirements-gathering", "gather requirements"}, common...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.HasPrefix(out, "**Using built-in agent** for requirements-gathering → defaults/interviewer\n") ||
		!strings.Contains(out, "- suggestion: install a plugin with a requirements, product-discovery or business-analysis agent suited to python projects") {
		t.Errorf("gap output:\n%s", out)
	}
	if *calls != 2 {
		t.Errorf("%d scans, want 2 (cache file reused, then one re-scan on the miss)", *calls)
	}
	flow, _ := os.ReadFile(filepath.Join(proj, "FLOW.md"))
	if !strings.HasPrefix(string(flow), "# Flow\n\n## Phase\nEXECUTE\n\n## Capability Warnings\n") ||
		!strings.Contains(string(flow), "- **requirements-gathering** → defaults/interviewer") {
		t.Errorf("FLOW.md:\n%s", flow)
	}
	if data, err := os.ReadFile(gapLog); err != nil || !strings.Contains(string(data), `"capability": "requirements-gathering"`) {
		t.Errorf("gap log: %v %s", err, data)
	}

	// --refresh scans; a second root adds its plugins; --state none
	// leaves FLOW.md alone.
	out, _, code = run(t, "route", "--root", plugins, "--root", more, "--project", proj, "--cache", cache, "--gap-log", "none", "--state", "none", "--refresh", "write unit tests first with tdd")
	if code != 0 || !strings.Contains(out, "→ tdd-implementation: tdd:tdd-orchestrator (keyword match)") {
		t.Errorf("two roots: exit %d\n%s", code, out)
	}
	if again, _ := os.ReadFile(filepath.Join(proj, "FLOW.md")); string(again) != string(flow) {
		t.Error("--state none changed FLOW.md")
	}
	out, _, _ = run(t, "route", "--root", plugins, "--project", proj, "--state", "none", "--cache", "none", "--phase", "plan")
	if !strings.HasPrefix(out, "**Using built-in agent** for coordination → defaults/coordinator\n") {
		t.Errorf("PLAN:\n%s", out)
	}
}

func TestRouteErrors(t *testing.T) {
	withPlugins(t, testPlugins)
	proj := pythonProject(t)
	root := filepath.Join(t.TempDir(), "plugins")
	badTax := filepath.Join(t.TempDir(), "tax.yaml")
	os.WriteFile(badTax, []byte("categories:\n  - name: x\n    default: d\n"), 0o644)
	tests := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"route", "--root", root, "--project", proj}, 2, "route needs a task, --phase or --capability"},
		{[]string{"route", "--root", root, "--project", proj, "--phase", "SHIP"}, 2, `--phase "SHIP": unknown phase (known: DISCUSS, PLAN, EXECUTE, VERIFY)`},
		{[]string{"route", "--root", root, "--project", proj, "--capability", "magic"}, 2, `--capability "magic": unknown capability`},
		{[]string{"route", "--root", root, "--project", proj, "--min-confidence", "sure", "x"}, 2, `--min-confidence "sure": want Low, Medium or High`},
		{[]string{"route", "--root", root, "--project", proj, "--max-age", "0s", "x"}, 2, "--max-age 0s: want a positive duration"},
		{[]string{"route", "--root", root, "a", "b"}, 2, "route takes one task in quotes (got 2 arguments)"},
		{[]string{"route", "--root", root, "--project", filepath.Join(proj, "missing"), "x"}, 1, "detecting project type"},
		{[]string{"route", "--root", filepath.Join(proj, "nowhere"), "--project", proj, "--cache", "none", "x"}, 1, "scanning plugins: reading"},
		{[]string{"route", "--root", root, "--project", proj, "--taxonomy", badTax, "x"}, 1, `tax.yaml:2: category "x" has no keywords`},
		{[]string{"capabilities", "extra"}, 2, "takes no arguments (got 1 arguments)"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			_, errOut, code := run(t, tt.args...)
			if code != tt.code || !strings.Contains(errOut, tt.msg) {
				t.Errorf("exit %d, stderr %q; want exit %d with %q", code, errOut, tt.code, tt.msg)
			}
		})
	}
}

func TestRouteWithoutDiscovery(t *testing.T) {
	_, errOut, code := run(t, "route", "--cache", "none", "--state", "none", "--root", t.TempDir(), "x")
	if code != 1 || !strings.Contains(errOut, errNoPluginLoader.Error()) {
		t.Errorf("exit %d: %s", code, errOut)
	}
}

func TestCapabilities(t *testing.T) {
	withPlugins(t, testPlugins)
	root := filepath.Join(t.TempDir(), "plugins")
	out, errOut, code := run(t, "capabilities", "--root", root)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"capability map: 4 agents and commands from 3 plugins\n",
		"code-review (VERIFY) → default defaults/validator: 2 candidates\n",
		"coordination (PLAN, internal) → default defaults/coordinator: 0 candidates\n",
		"  High     83  agent   review:code-reviewer  [review, code review, quality, security, pull request, pull requests]\n",
		"  High     71  agent   python-development:python-pro  [develop, development, code, feature, features, refactor, refactoring]  tech: python\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	out, _, code = run(t, "capabilities", "--root", root, "--json")
	var sum struct {
		Plugins, Cards int
		Capabilities   []struct {
			Name       string
			Candidates []struct {
				Name       string
				Score      int
				Confidence string
			}
		}
		Unassigned []any
	}
	if err := json.Unmarshal([]byte(out), &sum); err != nil || code != 0 {
		t.Fatalf("exit %d, %v in %s", code, err, out)
	}
	i := slices.IndexFunc(sum.Capabilities, func(c struct {
		Name       string
		Candidates []struct {
			Name       string
			Score      int
			Confidence string
		}
	}) bool {
		return c.Name == "code-review"
	})
	if sum.Cards != 4 || i < 0 || sum.Capabilities[i].Candidates[0].Name != "review:code-reviewer" || sum.Capabilities[i].Candidates[0].Confidence != "High" {
		t.Errorf("summary: %+v", sum)
	}
	out, _, code = run(t, "capabilities", "--print-taxonomy")
	if code != 0 || !strings.Contains(out, "name: requirements-gathering") {
		t.Errorf("--print-taxonomy: %d\n%.200s", code, out)
	}
}
