package capbroker_test

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/capbroker/capbroker/internal/testenv"
)

// goreleaserConfig is the part of .goreleaser.yaml the release uses.
type goreleaserConfig struct {
	ProjectName string `yaml:"project_name"`
	Builds      []struct {
		Main    string   `yaml:"main"`
		Binary  string   `yaml:"binary"`
		Env     []string `yaml:"env"`
		GOOS    []string `yaml:"goos"`
		GOARCH  []string `yaml:"goarch"`
		Flags   []string `yaml:"flags"`
		LDFlags []string `yaml:"ldflags"`
	} `yaml:"builds"`
	Archives []struct {
		Formats      []string `yaml:"formats"`
		NameTemplate string   `yaml:"name_template"`
		Files        []string `yaml:"files"`
	} `yaml:"archives"`
	Checksum struct {
		NameTemplate string `yaml:"name_template"`
		Algorithm    string `yaml:"algorithm"`
	} `yaml:"checksum"`
}

func readGoreleaser(t *testing.T) goreleaserConfig {
	t.Helper()
	data, err := os.ReadFile(".goreleaser.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cfg goreleaserConfig
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		t.Fatalf(".goreleaser.yaml: %v", err)
	}
	return cfg
}

// TestReleaseConfig checks .goreleaser.yaml for every target without
// GoReleaser: one build of ./cmd/capbroker, static (CGO off), for linux,
// darwin and windows on amd64 and arm64; every -X it sets names a
// variable of internal/buildinfo; one tar.gz archive per target (zip on
// Windows) named for its target; SHA-256 checksums.
func TestReleaseConfig(t *testing.T) {
	cfg := readGoreleaser(t)
	if len(cfg.Builds) != 1 || len(cfg.Archives) != 1 {
		t.Fatalf("%d builds and %d archives, want one of each", len(cfg.Builds), len(cfg.Archives))
	}
	b, a := cfg.Builds[0], cfg.Archives[0]
	if b.Main != "./cmd/capbroker" || b.Binary != "capbroker" || !slices.Contains(b.Env, "CGO_ENABLED=0") {
		t.Errorf("build: main %q, binary %q, env %v; want ./cmd/capbroker, capbroker, CGO_ENABLED=0", b.Main, b.Binary, b.Env)
	}
	slices.Sort(b.GOOS)
	slices.Sort(b.GOARCH)
	if !slices.Equal(b.GOOS, []string{"darwin", "linux", "windows"}) || !slices.Equal(b.GOARCH, []string{"amd64", "arm64"}) {
		t.Errorf("targets %v x %v, want darwin, linux, windows x amd64, arm64", b.GOOS, b.GOARCH)
	}
	src, err := os.ReadFile(filepath.Join("internal", "buildinfo", "buildinfo.go"))
	if err != nil {
		t.Fatal(err)
	}
	xs := regexp.MustCompile(`-X github\.com/capbroker/capbroker/internal/buildinfo\.(\w+)=`).FindAllStringSubmatch(strings.Join(b.LDFlags, " "), -1)
	if len(xs) != 3 {
		t.Errorf("ldflags %q set %d buildinfo variables, want version, commit and date", b.LDFlags, len(xs))
	}
	for _, x := range xs {
		if !regexp.MustCompile(`(?m)^\s+` + x[1] + `\s+string`).Match(src) {
			t.Errorf("ldflags set buildinfo.%s, which internal/buildinfo does not declare", x[1])
		}
	}
	for _, v := range []string{"{{ .Os }}", "{{ .Arch }}", "{{ .Version }}"} {
		if !strings.Contains(a.NameTemplate, v) {
			t.Errorf("archive name %q lacks %s: two targets would write one name", a.NameTemplate, v)
		}
	}
	if !slices.Equal(a.Formats, []string{"tar.gz"}) || cfg.Checksum.Algorithm != "sha256" {
		t.Errorf("archive formats %v, checksum %q; want tar.gz and sha256", a.Formats, cfg.Checksum.Algorithm)
	}
}

// TestReleaseOneArchive builds the release archive of this machine's
// target as .goreleaser.yaml says (its flags, ldflags with this commit,
// its archive name and files), checks it holds them, and runs the
// binary: it must name the commit it was built
// from. GoReleaser builds the six archives in the release job; this checks
// one in CI without compiling GoReleaser (minutes). It links capbroker
// (about a minute), so it runs under CI=true or with
// CAPBROKER_RELEASE_CHECK=1 (scripts/test-all.sh sets it), else skips.
func TestReleaseOneArchive(t *testing.T) {
	if !testenv.CI() && os.Getenv("CAPBROKER_RELEASE_CHECK") != "1" {
		t.Skip("links capbroker: runs under CI=true or CAPBROKER_RELEASE_CHECK=1 (scripts/test-all.sh)")
	}
	cfg := readGoreleaser(t)
	b, a := cfg.Builds[0], cfg.Archives[0]
	git := func(args ...string) string {
		out, err := exec.Command("git", args...).Output()
		if err != nil {
			t.Fatalf("git %v: %v (the release check builds from a git checkout)", args, err)
		}
		return strings.TrimSpace(string(out))
	}
	commit := git("rev-parse", "HEAD")
	version := "0.0.0-snapshot+" + commit[:7]
	fill := strings.NewReplacer("{{ .Version }}", version, "{{ .FullCommit }}", commit,
		"{{ .CommitDate }}", git("log", "-1", "--format=%cI"), "{{ .ProjectName }}", cfg.ProjectName,
		"{{ .Os }}", runtime.GOOS, "{{ .Arch }}", runtime.GOARCH)
	var ldflags []string
	for _, l := range b.LDFlags {
		ldflags = append(ldflags, fill.Replace(l))
	}
	if strings.Contains(strings.Join(ldflags, " "), "{{") {
		t.Fatalf("ldflags %q use a template this check does not fill", ldflags)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, b.Binary)
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	args := append([]string{"build"}, b.Flags...)
	args = append(args, "-ldflags", strings.Join(ldflags, " "), "-o", bin, b.Main)
	build := exec.Command("go", args...)
	build.Env = append(os.Environ(), b.Env...)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go %v: %v\n%s", args, err, out)
	}

	name := fill.Replace(a.NameTemplate) + ".tar.gz"
	archive := filepath.Join(dir, name)
	members := append([]string{filepath.Base(bin)}, a.Files...)
	writeArchive(t, archive, map[string]string{filepath.Base(bin): bin}, a.Files)
	got := archiveMembers(t, archive)
	if !slices.Equal(got, members) {
		t.Errorf("%s holds %v, want %v", name, got, members)
	}
	sum := fileSHA256(t, archive)
	out, err := exec.Command(bin, "version").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "commit "+commit) || !strings.Contains(string(out), version) {
		t.Errorf("%s version printed %q (%v); want version %s and commit %s", bin, out, err, version, commit)
	}
	t.Logf("%s: %s (%s)", name, sum, strings.TrimSpace(string(out)))
}

// writeArchive writes a tar.gz of the named files (archive name: path on
// disk) and the repository files.
func writeArchive(t *testing.T, path string, named map[string]string, files []string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zw := gzip.NewWriter(f)
	tw := tar.NewWriter(zw)
	add := func(name, src string) {
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatalf("archiving %s: %v", src, err)
		}
		st, _ := os.Stat(src)
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: int64(st.Mode().Perm()), Size: int64(len(data))}); err != nil {
			t.Fatal(err)
		}
		tw.Write(data)
	}
	for name, src := range named {
		add(name, src)
	}
	for _, p := range files {
		add(p, filepath.FromSlash(p))
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
}

func archiveMembers(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return names
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
	}
}

func fileSHA256(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}
