package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// InstallHint is the command that installs every component the tests use.
const InstallHint = "scripts/test-all.sh (installs Node packages, PostgreSQL and Chromium, then runs the tests)"

// CI reports whether the tests run under CI (CI=true).
func CI() bool { return os.Getenv("CI") == "true" }

// Missing stops tb because a component it needs is absent: Fatalf under
// CI, Skipf elsewhere.
func Missing(tb testing.TB, component string) {
	tb.Helper()
	if CI() {
		tb.Fatalf("%s is missing; CI must install it (see %s)", component, InstallHint)
	}
	tb.Skipf("%s is missing; install it with %s", component, InstallHint)
}

// Root returns the module root (the directory holding go.mod).
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// Deps returns the project-local folder that scripts/test-all.sh installs
// components into: $CAPBROKER_DEPS, else <root>/.deps.
func Deps() string {
	if d := os.Getenv("CAPBROKER_DEPS"); d != "" {
		return d
	}
	return filepath.Join(Root(), ".deps")
}

// Shared returns the project's shared/ folder (benchmarks and corpus),
// which sits beside the checkout: $CAPBROKER_SHARED, else <root>/../shared.
func Shared() string {
	if d := os.Getenv("CAPBROKER_SHARED"); d != "" {
		return d
	}
	return filepath.Join(Root(), "..", "shared")
}

// NeedShared returns a path under shared/, stopping tb (see [Missing]) if
// it does not exist.
func NeedShared(tb testing.TB, rel string) string {
	tb.Helper()
	p := filepath.Join(Shared(), rel)
	if _, err := os.Stat(p); err != nil {
		Missing(tb, "shared data "+p)
	}
	return p
}

// NodeBin returns the path of an executable installed by npm under
// .deps/npm/node_modules/.bin, stopping tb if it is absent.
func NodeBin(tb testing.TB, name string) string {
	tb.Helper()
	p := filepath.Join(Deps(), "npm", "node_modules", ".bin", name)
	if _, err := os.Stat(p); err != nil {
		Missing(tb, "npm package binary "+name+" ("+p+")")
	}
	return p
}

// LookPath returns the path of a program on PATH, stopping tb if absent.
func LookPath(tb testing.TB, name string) string {
	tb.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		Missing(tb, "program "+name)
	}
	return p
}

// EachGoSource calls fn with the module-relative path (slash-separated)
// and the contents of each non-test Go file of the module, skipping
// testdata and dot folders (.git, .deps). It stops tb on a read error.
func EachGoSource(tb testing.TB, fn func(path string, data []byte)) {
	tb.Helper()
	root := Root()
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		fn(filepath.ToSlash(rel), data)
		return nil
	})
	if err != nil {
		tb.Fatalf("reading the module's Go files: %v", err)
	}
}
