package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// routingRoot returns a copy of testdata/routing/<name>, a folder of real
// plugins (plugin.json, agents/*.md, commands/*.md), so tests may change it.
func routingRoot(t *testing.T, name string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), name)
	if err := os.CopyFS(dst, os.DirFS(filepath.Join("testdata", "routing", name))); err != nil {
		t.Fatal(err)
	}
	return dst
}

func pythonProject(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "requirements.txt"), []byte("flask\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "FLOW.md"), []byte("# Flow\n\n## Phase\nEXECUTE\n"), 0o644)
	return dir
}

func TestRouteJSON(t *testing.T) {
	proj := pythonProject(t)
	root := routingRoot(t, "plugins")
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
	proj := pythonProject(t)
	dir := t.TempDir()
	plugins, more := routingRoot(t, "plugins"), routingRoot(t, "more")
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
	scanned := cacheScannedAt(t, cache)

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
	// The cache file was reused (else the map would have been fresh and
	// not scanned again), then scanned once more on the miss.
	if again := cacheScannedAt(t, cache); !again.After(scanned) {
		t.Errorf("cache scanned at %v, then %v: want one re-scan on the miss", scanned, again)
	}
	if want := "route: wrote the capability gap to " + filepath.Join(proj, "FLOW.md"); !strings.Contains(errOut, want) {
		t.Errorf("stderr lacks %q:\n%s", want, errOut)
	}
	flow, _ := os.ReadFile(filepath.Join(proj, "FLOW.md"))
	if !strings.HasPrefix(string(flow), "# Flow\n\n## Phase\nEXECUTE\n\n## Capability Warnings\n") ||
		!strings.Contains(string(flow), "- **requirements-gathering** → defaults/interviewer") {
		t.Errorf("FLOW.md:\n%s", flow)
	}
	if data, err := os.ReadFile(gapLog); err != nil || !strings.Contains(string(data), `"capability": "requirements-gathering"`) ||
		!strings.Contains(string(data), `"rescanned": true`) {
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
	// --no-flow: a gap again, FLOW.md untouched and not named on stderr.
	_, errOut, code = run(t, append([]string{"route", "--no-flow", "--capability", "requirements-gathering", "gather requirements"}, common...)...)
	if code != 0 || strings.Contains(errOut, "FLOW.md") {
		t.Errorf("--no-flow: exit %d, stderr:\n%s", code, errOut)
	}
	if again, _ := os.ReadFile(filepath.Join(proj, "FLOW.md")); string(again) != string(flow) {
		t.Error("--no-flow changed FLOW.md")
	}
	if _, errOut, code = run(t, "route", "--no-flow", "--state", "x.md", "--phase", "plan"); code != 2 || !strings.Contains(errOut, "--no-flow and --state") {
		t.Errorf("--no-flow --state: exit %d, stderr:\n%s", code, errOut)
	}
	out, _, _ = run(t, "route", "--root", plugins, "--project", proj, "--state", "none", "--cache", "none", "--phase", "plan")
	if !strings.HasPrefix(out, "**Using built-in agent** for coordination → defaults/coordinator\n") {
		t.Errorf("PLAN:\n%s", out)
	}
}

func TestRouteErrors(t *testing.T) {
	proj := pythonProject(t)
	root := routingRoot(t, "plugins")
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
		{[]string{"route", "--root", filepath.Join(proj, "nowhere"), "--project", proj, "--cache", "none", "x"}, 1, "scanning plugins: reading " + filepath.Join(proj, "nowhere") + ": no such file or directory"},
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

// TestRouteDefaultPlaces routes without --root: discovery scans the
// default places, here the user's ~/.claude folder with a plugin under
// plugins/ and a loose agent under agents/.
func TestRouteDefaultPlaces(t *testing.T) {
	home := t.TempDir()
	if err := os.CopyFS(filepath.Join(home, ".claude", "plugins"), os.DirFS(filepath.Join("testdata", "routing", "plugins"))); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(home, ".claude", "agents"), 0o755)
	os.WriteFile(filepath.Join(home, ".claude", "agents", "infra.md"),
		[]byte("---\nname: infra\ndescription: Terraform and Kubernetes infrastructure, CI/CD pipelines and deployment.\n---\nbody\n"), 0o644)
	env := map[string]string{"HOME": home, "XDG_CACHE_HOME": filepath.Join(home, ".cache")}
	proj := pythonProject(t)
	out, errOut, code := runEnv(t, env, "route", "--project", proj, "--state", "none", "--json", "--capability", "infrastructure", "set up the deployment")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var d struct{ Agent, Capability string }
	if err := json.Unmarshal([]byte(out), &d); err != nil || d.Agent != "infra" || d.Capability != "infrastructure" {
		t.Errorf("decision %+v (%v): %s", d, err, out)
	}
	out, _, code = runEnv(t, env, "capabilities", "--json")
	if code != 0 || !strings.Contains(out, `"name": "review:code-reviewer"`) || !strings.Contains(out, `"cards": 5`) {
		t.Errorf("capabilities from the default places: exit %d\n%.600s", code, out)
	}
}

// cacheScannedAt reads the scan time from a capability cache file.
func cacheScannedAt(t *testing.T, path string) time.Time {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		ScannedAt time.Time `json:"scanned_at"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	return f.ScannedAt
}

func TestCapabilities(t *testing.T) {
	root := routingRoot(t, "plugins")
	out, errOut, code := run(t, "capabilities", "--root", root)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"capability map: 4 agents and commands from 3 plugins\n",
		"code-review (VERIFY) → default defaults/validator: 2 candidates\n",
		"coordination (PLAN, internal) → default defaults/coordinator: 0 candidates\n",
		"  High     83  agent   review:code-reviewer  [review, code review, quality, security, pull request, pull requests]\n",
		"  High     60  agent   python-development:python-pro  [develop, development, code, feature, features, refactor, refactoring]  tech: python\n",
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

// TestRouteExplicitWriteFailure: a state file or cache the user named
// that cannot be written is an error (after the decision is printed); the
// default places only warn.
func TestRouteExplicitWriteFailure(t *testing.T) {
	proj := pythonProject(t)
	plugins := routingRoot(t, "plugins")
	dir := t.TempDir() // a directory where a file is expected
	for _, tt := range []struct {
		name string
		args []string
	}{
		{"state", []string{"--state", dir, "--cache", "none", "--gap-log", "none"}},
		{"cache", []string{"--cache", dir, "--state", "none", "--gap-log", "none"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"route", "--root", plugins, "--project", proj, "--capability", "requirements-gathering", "gather requirements"}, tt.args...)
			out, errOut, code := run(t, args...)
			if code != 1 || !strings.Contains(out, "requirements-gathering") || !strings.Contains(errOut, dir) {
				t.Errorf("exit %d, stdout %q, stderr %q: want the decision printed, then exit 1 naming %s", code, out, errOut, dir)
			}
		})
	}
}
