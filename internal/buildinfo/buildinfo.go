package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// Set by release builds with -ldflags "-X github.com/capbroker/capbroker/internal/buildinfo.version=...".
var (
	version string
	commit  string
	date    string
)

// Info is what a binary knows about its own build.
type Info struct {
	// Module is the main module's path (github.com/capbroker/capbroker).
	Module string `json:"module"`
	// Version is the release or module version ("v0.2.0",
	// "v0.0.0-20261201062240-b7cad10abcde"), or "devel" for a build that
	// recorded none (go run, -buildvcs=false).
	Version string `json:"version"`
	// Commit is the full commit hash, or "" when the build does not say.
	Commit string `json:"commit,omitempty"`
	// Time is the commit's time (RFC 3339), or "" when unknown.
	Time string `json:"time,omitempty"`
	// Modified is true when the checkout had uncommitted changes.
	Modified bool `json:"modified,omitempty"`
	// GoVersion is the toolchain that built the binary (go1.26.8).
	GoVersion string `json:"go"`
	// Platform is GOOS/GOARCH.
	Platform string `json:"platform"`
}

// Read returns this binary's build information.
func Read() Info {
	bi, _ := debug.ReadBuildInfo()
	return read(bi, version, commit, date)
}

// read builds an Info from the toolchain's record and the linker-set
// values (which win when set).
func read(bi *debug.BuildInfo, ldVersion, ldCommit, ldDate string) Info {
	in := Info{Module: "github.com/capbroker/capbroker", GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi != nil {
		if bi.Main.Path != "" {
			in.Module = bi.Main.Path
		}
		if bi.GoVersion != "" {
			in.GoVersion = bi.GoVersion
		}
		if v := bi.Main.Version; v != "" && v != "(devel)" {
			in.Version = v
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				in.Commit = s.Value
			case "vcs.time":
				in.Time = s.Value
			case "vcs.modified":
				in.Modified = s.Value == "true"
			}
		}
		if in.Commit == "" {
			in.Commit = pseudoCommit(in.Version)
		}
	}
	if ldVersion != "" {
		in.Version = ldVersion
	}
	if ldCommit != "" {
		in.Commit = ldCommit
	}
	if ldDate != "" {
		in.Time = ldDate
	}
	if in.Version == "" {
		in.Version = "devel"
	}
	return in
}

// pseudoCommit returns the 12-digit commit prefix a pseudo-version ends
// with (v0.0.0-20261201062240-b7cad10abcde, v1.2.4-0.20261201062240-b7cad10abcde),
// or "" for any other version.
func pseudoCommit(v string) string {
	v = strings.TrimSuffix(v, "+incompatible")
	i := strings.LastIndexByte(v, '-')
	if i < 0 {
		return ""
	}
	rev, stamp := v[i+1:], v[:i]
	j := strings.LastIndexAny(stamp, "-.")
	if len(rev) != 12 || j < 0 || len(stamp)-j-1 != 14 || !allDigits(stamp[j+1:]) {
		return ""
	}
	for _, c := range rev {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return ""
		}
	}
	return rev
}

func allDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// Short is the version as clients see it in MCP serverInfo and User-Agent
// strings: the version, plus "+" and the first 12 digits of the commit
// for a build that is not a release ("devel+b7cad10abcde", with
// ".dirty" for uncommitted changes).
func (in Info) Short() string {
	v := in.Version
	if v == "devel" && in.Commit != "" {
		c := in.Commit
		if len(c) > 12 {
			c = c[:12]
		}
		v += "+" + c
		if in.Modified {
			v += ".dirty"
		}
	}
	return v
}

// String is the one line "capbroker --version" prints.
func (in Info) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "capbroker %s", in.Version)
	commit := in.Commit
	if commit == "" {
		commit = "unknown"
	}
	fmt.Fprintf(&b, " (commit %s", commit)
	if in.Modified {
		b.WriteString(", modified")
	}
	if in.Time != "" {
		fmt.Fprintf(&b, ", %s", in.Time)
	}
	fmt.Fprintf(&b, ", %s, %s)", in.GoVersion, in.Platform)
	return b.String()
}
