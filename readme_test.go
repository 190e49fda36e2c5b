package capbroker_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/capbroker/capbroker/internal/testenv"
)

// docPages are the README and every page under docs/.
func docPages(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join("docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{"README.md"}, pages...)
}

// TestREADMEPaths: the files and folders the README and the pages under
// docs/ point at are in a clone (links, relative to the page, and `paths`
// under the repository's folders, relative to its root), and they never
// point outside the repository (../shared/... is not in a clone).
func TestREADMEPaths(t *testing.T) {
	total := 0
	for _, page := range docPages(t) {
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		if strings.Contains(text, "../shared") {
			t.Errorf("%s points at ../shared, which a clone does not have", page)
		}
		var paths []string
		for _, m := range regexp.MustCompile(`\]\(([^)#:]+)(#[^)]*)?\)`).FindAllStringSubmatch(text, -1) {
			paths = append(paths, filepath.Join(filepath.Dir(page), m[1]))
		}
		for _, m := range regexp.MustCompile("`(?:\\./)?((?:examples|scripts|cmd|internal|\\.ci|clientconfig|gateway|source|telemetry|docs)/[^`\\s*…]*)`").FindAllStringSubmatch(text, -1) {
			paths = append(paths, m[1])
		}
		total += len(paths)
		for _, p := range paths {
			if _, err := os.Stat(filepath.FromSlash(strings.TrimSuffix(p, "/"))); err != nil {
				t.Errorf("%s names %s, which a clone does not have", page, p)
			}
		}
	}
	if total < 10 {
		t.Fatalf("found %d paths in the README and docs/; the reading seems broken", total)
	}
}

// TestREADMEShort: the README stays a newcomer's page (at most 300
// lines, reference in docs/), links every page under docs/, and its
// first screen says how to install capbroker and put it in front of
// Claude Code's servers.
func TestREADMEShort(t *testing.T) {
	data, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	if n := strings.Count(text, "\n"); n > 300 {
		t.Errorf("the README has %d lines; keep it to 300 and move reference to docs/", n)
	}
	for _, page := range docPages(t)[1:] {
		if !strings.Contains(text, "]("+filepath.ToSlash(page)+")") {
			t.Errorf("the README does not link %s; add it to its Documentation list", page)
		}
	}
	first := strings.Join(strings.SplitN(text, "\n", 50)[:min(49, strings.Count(text, "\n"))], "\n")
	for _, want := range []string{"go install github.com/capbroker/capbroker/cmd/capbroker@latest", "capbroker client add claude-code", "Restart Claude Code", "What you will see"} {
		if !strings.Contains(first, want) {
			t.Errorf("the README's first screen (50 lines) lacks %q", want)
		}
	}
}

// TestNoticeNamesEmbeddedData: every file the binary embeds (//go:embed)
// is either capbroker's own or named, by its path, in NOTICE with its
// licence, so a new embedded data set cannot ship without one.
func TestNoticeNamesEmbeddedData(t *testing.T) {
	notice, err := os.ReadFile("NOTICE")
	if err != nil {
		t.Fatal(err)
	}
	own := map[string]bool{ // written for capbroker, under its licence
		"route/default.yaml": true, "examples/catalog/*.json": true,
		"httpapi/openapi.json": true, "httpapi/static": true,
	}
	embed := regexp.MustCompile(`(?m)^//go:embed (.+)$`)
	n := 0
	testenv.EachGoSource(t, func(path string, data []byte) {
		for _, m := range embed.FindAllStringSubmatch(string(data), -1) {
			for _, pat := range strings.Fields(m[1]) {
				p := filepath.ToSlash(filepath.Join(filepath.Dir(path), pat))
				n++
				if !own[p] && !strings.Contains(string(notice), p) {
					t.Errorf("%s embeds %s, which NOTICE does not name (add its section and licence, or list it here as capbroker's own)", path, p)
				}
			}
		}
	})
	if n < 5 {
		t.Fatalf("found %d embedded files; the reading seems broken", n)
	}
}

// TestReleaseArchiveFiles: every file the release archives carry
// (.goreleaser.yaml, archives' files) is in a clone, and so is every
// licence NOTICE points at, so a renamed or removed licence fails here
// rather than in the release build.
func TestReleaseArchiveFiles(t *testing.T) {
	data, err := os.ReadFile(".goreleaser.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Archives []struct {
			Files []string `yaml:"files"`
		} `yaml:"archives"`
	}
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		t.Fatalf(".goreleaser.yaml: %v", err)
	}
	var files []string
	for _, a := range cfg.Archives {
		files = append(files, a.Files...)
	}
	if len(files) < 3 {
		t.Fatalf("found %d archive files in .goreleaser.yaml; the reading seems broken", len(files))
	}
	notice, err := os.ReadFile("NOTICE")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range regexp.MustCompile(`[\w./-]+LICENSE[\w.-]*`).FindAllString(string(notice), -1) {
		if strings.Contains(p, "/") {
			files = append(files, strings.TrimSuffix(p, "."))
		}
	}
	for _, f := range files {
		if _, err := os.Stat(filepath.FromSlash(f)); err != nil {
			t.Errorf("%s is named for the release but missing: %v", f, err)
		}
	}
}
