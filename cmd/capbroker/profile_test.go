package main

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestCPUProfileFlag: the hidden --cpuprofile writes a pprof profile
// (gzip'd protocol buffer) of the command, on any command, and is not in
// the help.
func TestCPUProfileFlag(t *testing.T) {
	prof := filepath.Join(t.TempDir(), "cpu.prof")
	out, errOut, code := run(t, "select", "--cpuprofile", prof, "open an issue")
	if code != 0 || !strings.Contains(out, "open") {
		t.Fatalf("exit %d: %s\n%s", code, errOut, out)
	}
	b, err := os.ReadFile(prof)
	if err != nil || !bytes.HasPrefix(b, []byte{0x1f, 0x8b}) {
		t.Fatalf("profile: %d bytes (%.2q), err %v; want a gzip'd pprof profile", len(b), b, err)
	}
	help, _, _ := run(t, "select", "--help")
	if strings.Contains(help, "cpuprofile") {
		t.Errorf("--cpuprofile shown in the help:\n%s", help)
	}
	_, errOut, code = run(t, "version", "--cpuprofile", filepath.Join(t.TempDir(), "no", "such", "dir", "p"))
	if code != 0 || !strings.Contains(errOut, "note: no CPU profile") {
		t.Errorf("an unwritable profile: exit %d, stderr %q; want 0 and a note", code, errOut)
	}
}

// TestOneShotGC: select and find run the collector at a quarter of the
// default pace unless GOGC is set; other commands keep the default, and
// so does a Main that is not the process's own.
func TestOneShotGC(t *testing.T) {
	prev := debug.SetGCPercent(100)
	defer debug.SetGCPercent(prev)
	root := &cobra.Command{Use: "capbroker"}
	cmds := map[string]*cobra.Command{}
	for _, n := range []string{"select", "find", "serve", "gateway", "eval"} {
		cmds[n] = &cobra.Command{Use: n}
		root.AddCommand(cmds[n])
	}
	for _, tt := range []struct {
		cmd, gogc string
		want      int
	}{
		{"select", "", 400},
		{"find", "", 400},
		{"select", "50", 100},
		{"serve", "", 100},
		{"gateway", "", 100},
		{"eval", "", 100},
		{"select", "own=false", 100},
	} {
		debug.SetGCPercent(100)
		m := &Main{tuneGC: tt.gogc != "own=false", Getenv: func(k string) string {
			if k == "GOGC" && tt.gogc != "own=false" {
				return tt.gogc
			}
			return ""
		}}
		oneShotGC(m, cmds[tt.cmd])
		if got := debug.SetGCPercent(100); got != tt.want {
			t.Errorf("%s with GOGC=%q: GC percent %d, want %d", tt.cmd, tt.gogc, got, tt.want)
		}
	}
}
