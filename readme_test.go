package capbroker_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
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
