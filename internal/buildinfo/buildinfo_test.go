package buildinfo

import (
	"os"
	"runtime/debug"
	"strings"
	"testing"
)

func TestRead(t *testing.T) {
	checkout := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/capbroker/capbroker", Version: "(devel)"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "b7cad10abcdef0123456789abcdef0123456789a"}, {Key: "vcs.time", Value: "2026-12-01T06:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	installed := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/capbroker/capbroker", Version: "v0.0.0-20261201062240-b7cad10abcde"}}
	tagged := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/capbroker/capbroker", Version: "v0.3.0"}}
	for _, tt := range []struct {
		name                string
		bi                  *debug.BuildInfo
		ldv, ldc, ldd       string
		version, commit     string
		short, stringPrefix string
	}{
		{name: "checkout", bi: checkout, version: "devel", commit: "b7cad10abcdef0123456789abcdef0123456789a",
			short: "devel+b7cad10abcde.dirty", stringPrefix: "capbroker devel (commit b7cad10abcdef0123456789abcdef0123456789a, modified, 2026-12-01T06:00:00Z, go1.26.8, "},
		{name: "go install of a pseudo-version", bi: installed, version: "v0.0.0-20261201062240-b7cad10abcde", commit: "b7cad10abcde",
			short: "v0.0.0-20261201062240-b7cad10abcde", stringPrefix: "capbroker v0.0.0-20261201062240-b7cad10abcde (commit b7cad10abcde, go1.26.8, "},
		{name: "go install of a tag", bi: tagged, version: "v0.3.0", commit: "",
			short: "v0.3.0", stringPrefix: "capbroker v0.3.0 (commit unknown, go1.26.8, "},
		{name: "release build", bi: checkout, ldv: "0.3.0", ldc: "0123456789abcdef0123456789abcdef01234567", ldd: "2026-12-01T07:00:00Z", version: "0.3.0", commit: "0123456789abcdef0123456789abcdef01234567",
			short: "0.3.0", stringPrefix: "capbroker 0.3.0 (commit 0123456789abcdef0123456789abcdef01234567, modified, 2026-12-01T07:00:00Z, go1.26.8, "},
		{name: "no build info", bi: nil, version: "devel", short: "devel", stringPrefix: "capbroker devel (commit unknown, go"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := read(tt.bi, tt.ldv, tt.ldc, tt.ldd)
			if in.Version != tt.version || in.Commit != tt.commit {
				t.Errorf("version, commit = %q, %q; want %q, %q", in.Version, in.Commit, tt.version, tt.commit)
			}
			if got := in.Short(); got != tt.short {
				t.Errorf("Short() = %q, want %q", got, tt.short)
			}
			if got := in.String(); !strings.HasPrefix(got, tt.stringPrefix) {
				t.Errorf("String() = %q, want prefix %q", got, tt.stringPrefix)
			}
		})
	}
}

func TestPseudoCommit(t *testing.T) {
	for v, want := range map[string]string{
		"v0.0.0-20261201062240-b7cad10abcde":              "b7cad10abcde",
		"v1.2.4-0.20261201062240-b7cad10abcde":            "b7cad10abcde",
		"v1.2.4-pre.0.20261201062240-b7cad10abcde":        "b7cad10abcde",
		"v2.0.0-20261201062240-b7cad10abcde+incompatible": "b7cad10abcde",
		"v1.2.3":                   "",
		"v1.2.3-rc.1":              "",
		"v1.2.3-beta-abc":          "",
		"v0.0.0-2026-b7cad10abcde": "",
	} {
		if got := pseudoCommit(v); got != want {
			t.Errorf("pseudoCommit(%q) = %q, want %q", v, got, want)
		}
	}
}

// TestProgram: the running test binary is identified by its path, size
// and time, the same on every call.
func TestProgram(t *testing.T) {
	p := Program()
	exe, _ := os.Executable()
	if p == "" || !strings.HasPrefix(p, exe+" ") || p != Program() {
		t.Errorf("Program() = %q, want the executable %s with its size and time", p, exe)
	}
}
