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

// TestREADMEPaths: the files and folders the README points at are in a
// clone (links, and `paths` under the repository's folders), and it never
// points outside the repository (../shared/... is not in a clone).
func TestREADMEPaths(t *testing.T) {
	data, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	if strings.Contains(text, "../shared") {
		t.Error("the README points at ../shared, which a clone does not have")
	}
	var paths []string
	for _, m := range regexp.MustCompile(`\]\(([^)#:]+)(#[^)]*)?\)`).FindAllStringSubmatch(text, -1) {
		paths = append(paths, m[1])
	}
	for _, m := range regexp.MustCompile("`(?:\\./)?((?:examples|scripts|cmd|internal|\\.ci|clientconfig|gateway|source|telemetry)/[^`\\s*…]*)`").FindAllStringSubmatch(text, -1) {
		paths = append(paths, m[1])
	}
	if len(paths) < 5 {
		t.Fatalf("found %d paths in the README; the reading seems broken", len(paths))
	}
	for _, p := range paths {
		if _, err := os.Stat(filepath.FromSlash(strings.TrimSuffix(p, "/"))); err != nil {
			t.Errorf("the README names %s, which a clone does not have", p)
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
