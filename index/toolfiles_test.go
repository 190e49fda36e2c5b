package index

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/source/toolfile"
)

// TestLoadToolFiles: the cards of tool files come from the cache while
// no file changed, and equal what the files give; a changed file, a tool
// file added to a folder or removed from it, and a file turned into a
// folder are each noticed by their stamps and read again; files with a
// problem are never cached (their warnings are said every run); a
// corrupt cache file is ignored and rewritten.
func TestLoadToolFiles(t *testing.T) {
	src, cache := t.TempDir(), t.TempDir()
	one := filepath.Join(src, "one.json")
	folder := filepath.Join(src, "more")
	write := func(path, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(one, `[{"name":"read_file","description":"Read a file.","parameters":{"type":"object","properties":{"path":{"type":"string"}}}}]`)
	write(filepath.Join(folder, "a.jsonl"), `{"name":"send_email","description":"Send an email.","annotations":{"destructiveHint":true}}`+"\n")
	write(filepath.Join(folder, "notes.txt"), "not a tool file")
	paths := []string{one, folder}
	// load checks the cards against toolfile.LoadAll's and whether they
	// came from the cache.
	load := func(what string, wantCached bool) []card.Card {
		t.Helper()
		want, wantErrs := toolfile.LoadAll(paths)
		got, errs, cached := LoadToolFiles(cache, paths)
		if cached != wantCached {
			t.Errorf("%s: from the cache %v, want %v", what, cached, wantCached)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: cards differ from toolfile.LoadAll (-want +got):\n%s", what, diff)
		}
		if len(errs) != len(wantErrs) {
			t.Errorf("%s: %d errors, want %d: %v", what, len(errs), len(wantErrs), errs)
		}
		return got
	}
	load("first run", false)
	load("second run", true)
	load("third run", true)

	// Stamps are stat-based: a new time (the same size) is noticed.
	text, _ := os.ReadFile(one)
	write(one, strings.Replace(string(text), "Read a file.", "Read a fil!", 1))
	later := time.Now().Add(time.Minute)
	os.Chtimes(one, later, later)
	if got := load("after an edit", false); got[0].Description != "Read a fil!" {
		t.Errorf("after an edit: description %q", got[0].Description)
	}
	load("after an edit, again", true)

	// A tool file added to the folder; a file of another extension is not
	// a tool file and changes nothing.
	write(filepath.Join(folder, "b.json"), `{"name":"list_events","description":"List calendar events."}`)
	if got := load("a file added", false); len(got) != 3 {
		t.Errorf("a file added: %d cards, want 3", len(got))
	}
	write(filepath.Join(folder, "other.txt"), "still not a tool file")
	load("a text file added", true)
	if err := os.Remove(filepath.Join(folder, "b.json")); err != nil {
		t.Fatal(err)
	}
	load("a file removed", false)

	// A path that became a folder.
	os.Remove(one)
	write(filepath.Join(one, "c.yaml"), "- name: get_weather\n  description: Get the weather.\n")
	if got := load("a file turned folder", false); len(got) != 2 || got[0].Name != "get_weather" {
		t.Errorf("a file turned folder: %v", got)
	}

	// A file with a problem: read every time, its errors every time.
	bad := filepath.Join(src, "bad.json")
	write(bad, `[{"name":"ok_tool","description":"Fine."},{"description":"no name"}]`)
	paths = append(paths, bad)
	for _, run := range []string{"with a bad tool", "with a bad tool, again"} {
		_, errs, cached := LoadToolFiles(cache, paths)
		if cached || len(errs) == 0 {
			t.Errorf("%s: cached %v, %d errors; want a read with the errors", run, cached, len(errs))
		}
	}
	paths = paths[:2]

	// A corrupt cache file is ignored, then rewritten.
	files, _ := filepath.Glob(filepath.Join(cache, "toolfiles-*.bin"))
	if len(files) == 0 {
		t.Fatal("no cache file written")
	}
	for _, f := range files {
		data, _ := os.ReadFile(f)
		data[len(data)-1] ^= 0xff
		os.WriteFile(f, data, 0o600)
	}
	load("a corrupt cache", false)
	load("after a corrupt cache", true)

	// No folder, no cache.
	if _, _, cached := LoadToolFiles("", paths); cached {
		t.Error("cached with no cache folder")
	}
}

// TestPruneToolFiles: cache files last written more than PruneAfter ago
// are removed, newer ones kept.
func TestPruneToolFiles(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	old, fresh := filepath.Join(dir, "toolfiles-old.bin"), filepath.Join(dir, "toolfiles-new.bin")
	for _, f := range []string{old, fresh} {
		os.WriteFile(f, []byte("x"), 0o600)
	}
	os.Chtimes(old, now.Add(-PruneAfter-time.Hour), now.Add(-PruneAfter-time.Hour))
	pruneToolFiles(dir, now)
	if _, err := os.Stat(old); err == nil {
		t.Error("an old cache file was kept")
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("a fresh cache file was removed: %v", err)
	}
}

// BenchmarkLoadToolFiles loads a catalog of 500 tools in one JSONL file,
// parsed (no cache) and from a warm cache.
func BenchmarkLoadToolFiles(b *testing.B) {
	path := filepath.Join(b.TempDir(), "tools.jsonl")
	var sb strings.Builder
	for i := range 500 {
		sb.WriteString(`{"name":"tool_` + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + `_` + strconv.Itoa(i) + `","description":"Look up the stored record in the archive of the department and return every field it holds.","parameters":{"type":"object","properties":{"id":{"type":"string","description":"The record's id."},"fields":{"type":"array","items":{"type":"string"}},"limit":{"type":"integer","minimum":1}},"required":["id"]}}` + "\n")
	}
	os.WriteFile(path, []byte(sb.String()), 0o644)
	b.Run("cache=none", func(b *testing.B) {
		for b.Loop() {
			if cs, _, _ := LoadToolFiles("", []string{path}); len(cs) != 500 {
				b.Fatalf("%d cards", len(cs))
			}
		}
	})
	cache := b.TempDir()
	LoadToolFiles(cache, []string{path})
	b.Run("cache=warm", func(b *testing.B) {
		for b.Loop() {
			if cs, _, cached := LoadToolFiles(cache, []string{path}); len(cs) != 500 || !cached {
				b.Fatalf("%d cards, cached %v", len(cs), cached)
			}
		}
	})
}
