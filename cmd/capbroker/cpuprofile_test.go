package main

import (
	"bytes"
	"math"
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

// TestOneShotGC: select and find collect garbage only at
// oneShotMemoryLimit unless GOGC or GOMEMLIMIT is set; other commands
// keep the default, and so does a Main that is not the process's own.
func TestOneShotGC(t *testing.T) {
	prevPct := debug.SetGCPercent(100)
	prevLimit := debug.SetMemoryLimit(-1)
	defer func() {
		debug.SetGCPercent(prevPct)
		debug.SetMemoryLimit(prevLimit)
	}()
	root := &cobra.Command{Use: "capbroker"}
	cmds := map[string]*cobra.Command{}
	for _, n := range []string{"select", "find", "serve", "gateway", "eval"} {
		cmds[n] = &cobra.Command{Use: n}
		root.AddCommand(cmds[n])
	}
	const none = math.MaxInt64
	for _, tt := range []struct {
		cmd, env, val string
		own           bool
		pct           int
		limit         int64
	}{
		{"select", "", "", true, -1, oneShotMemoryLimit},
		{"find", "", "", true, -1, oneShotMemoryLimit},
		{"select", "GOGC", "50", true, 100, none},
		{"select", "GOMEMLIMIT", "1GiB", true, 100, none},
		{"serve", "", "", true, 100, none},
		{"gateway", "", "", true, 100, none},
		{"eval", "", "", true, 100, none},
		{"select", "", "", false, 100, none},
	} {
		debug.SetGCPercent(100)
		debug.SetMemoryLimit(none)
		m := &Main{tuneGC: tt.own, Getenv: func(k string) string {
			if k == tt.env {
				return tt.val
			}
			return ""
		}}
		oneShotGC(m, cmds[tt.cmd])
		pct, limit := debug.SetGCPercent(100), debug.SetMemoryLimit(none)
		if pct != tt.pct || limit != tt.limit {
			t.Errorf("%s (%s=%q, own process %v): GC percent %d, memory limit %d; want %d, %d", tt.cmd, tt.env, tt.val, tt.own, pct, limit, tt.pct, tt.limit)
		}
	}
}
