package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capbroker/capbroker/internal/buildinfo"
	"github.com/capbroker/capbroker/internal/testenv"
)

func TestVersion(t *testing.T) {
	want := buildinfo.Read().String() + "\n"
	for _, args := range [][]string{{"version"}, {"--version"}} {
		out, stderr, code := run(t, args...)
		if code != 0 || out != want {
			t.Errorf("capbroker %s: exit %d, stdout %q, stderr %q; want %q", strings.Join(args, " "), code, out, stderr, want)
		}
	}
	out, _, code := run(t, "version", "--json")
	var in buildinfo.Info
	if err := json.Unmarshal([]byte(out), &in); code != 0 || err != nil || in.Module != "github.com/capbroker/capbroker" || in.GoVersion == "" {
		t.Errorf("version --json: exit %d, %v, %+v", code, err, in)
	}
}

// TestVersionBinary builds capbroker from this checkout as a user does and
// checks that it names the checkout's commit.
func TestVersionBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	root := testenv.Root()
	head, err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output()
	if err != nil {
		testenv.Missing(t, "git and a git checkout of capbroker")
	}
	// Go stamps the commit only where .git is a folder, not in a git
	// worktree (where .git is a file): there, build a clone of HEAD.
	src := root
	if fi, err := os.Stat(filepath.Join(root, ".git")); err != nil || !fi.IsDir() {
		src = filepath.Join(t.TempDir(), "capbroker")
		if out, err := exec.Command("git", "clone", "-q", root, src).CombinedOutput(); err != nil {
			t.Fatalf("cloning %s: %v\n%s", root, err, out)
		}
	}
	bin := filepath.Join(t.TempDir(), "capbroker")
	// -buildvcs=true: a user's go build stamps by default (auto); this
	// machine may turn it off in GOFLAGS.
	build := exec.Command("go", "build", "-buildvcs=true", "-o", bin, "./cmd/capbroker")
	build.Dir = src
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building capbroker: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version", "--json").Output()
	if err != nil {
		t.Fatalf("capbroker version: %v", err)
	}
	var in buildinfo.Info
	if err := json.Unmarshal(out, &in); err != nil {
		t.Fatalf("capbroker version --json: %v in %s", err, out)
	}
	commit := strings.TrimSpace(string(head))
	// Go stamps a clean checkout with a pseudo-version naming the commit
	// (v0.0.0-20261201064738-6c4c0680a4ea), a modified one with "+dirty".
	if in.Commit != commit || !strings.Contains(in.Version, commit[:12]) {
		t.Errorf("capbroker version --json: version %q, commit %q; want commit %s, also in the version", in.Version, in.Commit, commit)
	}
	line, _ := exec.Command(bin, "--version").Output()
	if !strings.HasPrefix(string(line), "capbroker "+in.Version+" (commit "+commit) {
		t.Errorf("capbroker --version = %q", line)
	}
}
