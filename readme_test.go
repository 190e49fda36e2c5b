package capbroker_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

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
