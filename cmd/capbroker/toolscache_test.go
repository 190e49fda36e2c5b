package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestToolsCacheNoticesChanges: select --tools caches the files' cards
// in the index folder, and a file changed between two runs is read again
// (its new tool is selected), however warm the cache.
func TestToolsCacheNoticesChanges(t *testing.T) {
	home := t.TempDir()
	file := filepath.Join(home, "tools.json")
	write := func(text string, at time.Time) {
		t.Helper()
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(file, at, at)
	}
	tools := `[{"name":"read_file","description":"Read a file from disk."},{"name":"send_email","description":"Send an email message."}`
	now := time.Now()
	write(tools+"]", now)
	env := map[string]string{"HOME": home}
	task := "feed the zebras at the zoo"
	for range 2 {
		out, errOut, code := runEnv(t, env, "select", "--tools", file, task)
		if code != 0 || strings.Contains(out, "feed_zebras") {
			t.Fatalf("before the change: exit %d: %s\n%s", code, errOut, out)
		}
	}
	if m, _ := filepath.Glob(filepath.Join(home, ".cache", "capbroker", "toolfiles-*.bin")); len(m) != 1 {
		t.Fatalf("cache files %v, want one", m)
	}
	write(tools+`,{"name":"feed_zebras","description":"Feed the zebras at the zoo."}]`, now.Add(time.Second))
	out, errOut, code := runEnv(t, env, "select", "--tools", file, task)
	if code != 0 || !strings.Contains(out, "feed_zebras") {
		t.Errorf("after the change: exit %d, the new tool not selected: %s\n%s", code, errOut, out)
	}
}
