//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestDiscoverSkipsSpecialFiles: a FIFO named ./.mcp.json or like a tool
// file, a tool file and an index symlinked to /dev/zero, and a FIFO as
// capbroker.yaml are skipped with a warning; discovery neither blocks
// (which also kept SIGTERM from ending it) nor reads without end.
func TestDiscoverSkipsSpecialFiles(t *testing.T) {
	home, wd, root, ix := t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()
	t.Chdir(wd)
	for _, p := range []string{filepath.Join(wd, ".mcp.json"), filepath.Join(root, "tools.json"), filepath.Join(wd, ".vscode", "mcp.json")} {
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := syscall.Mkfifo(p, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.Symlink("/dev/zero", filepath.Join(root, "zero.json"))
	os.Symlink("/dev/zero", filepath.Join(ix, "index.bin"))
	writeFile(t, filepath.Join(root, "good.json"), `{"name": "good_tool", "description": "A tool.", "inputSchema": {"type": "object"}}`)
	env := map[string]string{"HOME": home, "CAPBROKER_INDEX": ix}

	type result struct {
		out, stderr string
		code        int
	}
	for _, args := range [][]string{
		{"discover", "--root", root},
		{"discover"},
		{"select", "use the good tool", "--root", root},
		{"gateway"},
	} {
		done := make(chan result, 1)
		go func() {
			out, stderr, code := runEnv(t, env, args...)
			done <- result{out, stderr, code}
		}()
		var r result
		select {
		case r = <-done:
		case <-time.After(2 * time.Minute): // a hang detector, not a speed limit
			t.Fatalf("%v blocked on a special file", args)
		}
		all := r.out + r.stderr
		switch args[0] {
		case "discover":
			for _, w := range []string{"not a regular file"} {
				if !strings.Contains(all, w) {
					t.Errorf("%v does not warn %q:\n%s", args, w, all)
				}
			}
			if len(args) > 1 && (!strings.Contains(all, "a named pipe (FIFO)") || !strings.Contains(all, "a character device") || !strings.Contains(all, "good_tool") && !strings.Contains(all, "1 tools")) {
				t.Errorf("%v:\n%s", args, all)
			}
		case "select":
			if r.code != 0 || !strings.Contains(r.out, "good_tool") {
				t.Errorf("%v: exit %d\n%s", args, r.code, all)
			}
		case "gateway":
			if !strings.Contains(all, "a named pipe (FIFO), not a regular file") {
				t.Errorf("%v does not name the FIFO:\n%s", args, all)
			}
		}
	}
}
