package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// A documented example is a ```console block of the README or of a file
// under docs/: lines starting with "$ capbroker " are commands, the lines
// after each are what it prints (stdout, then stderr). In the expected
// text "~" is the home folder, a line ending in "…" matches any line that
// starts with the rest, and a line "…" alone matches any lines up to the
// next expected one (or the end).
//
// Each block runs in a fresh home and working folder, unless the comment
// <!-- example: claude-code --> stands on the line before it: the blocks
// so marked in one file share one home whose ~/.claude.json holds two
// servers (memory and filesystem, run with npx; no example starts them),
// in order. The ranker is the default (hybrid), as a user's is; blocks
// that select or find run "capbroker embed" first.

type docExample struct {
	file    string
	line    int
	fixture string
	cmds    []docCommand
}

type docCommand struct {
	line int
	args []string
	want []string
}

var exampleFixture = regexp.MustCompile(`<!--\s*example:\s*([\w-]+)\s*-->`)

// docExamples reads the console blocks of one Markdown file.
func docExamples(t *testing.T, path string) []docExample {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	var out []docExample
	for i := 0; i < len(lines); i++ {
		trimmed := strings.TrimSpace(lines[i])
		if trimmed != "```console" {
			continue
		}
		indent := lines[i][:len(lines[i])-len(strings.TrimLeft(lines[i], " "))]
		ex := docExample{file: path, line: i + 1}
		if i > 0 {
			if m := exampleFixture.FindStringSubmatch(lines[i-1]); m != nil {
				ex.fixture = m[1]
			}
		}
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
			l := strings.TrimPrefix(lines[i], indent)
			if cmd, ok := strings.CutPrefix(l, "$ "); ok {
				ex.cmds = append(ex.cmds, docCommand{line: i + 1, args: shellWords(t, cmd)})
				continue
			}
			if len(ex.cmds) == 0 {
				t.Fatalf("%s:%d: output before any $ command", path, i+1)
			}
			c := &ex.cmds[len(ex.cmds)-1]
			c.want = append(c.want, l)
		}
		out = append(out, ex)
	}
	return out
}

// shellWords splits a command line as a shell would for the examples'
// needs: words, "double" and 'single' quotes.
func shellWords(t *testing.T, s string) []string {
	var words []string
	var cur strings.Builder
	in, quote := false, rune(0)
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '"' || r == '\'':
			quote, in = r, true
		case r == ' ':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if quote != 0 {
		t.Fatalf("unclosed quote in %q", s)
	}
	if in {
		words = append(words, cur.String())
	}
	return words
}

// matchOutput reports whether got (lines) matches want, and the first
// expected line that does not.
func matchOutput(want, got []string) (bool, string) {
	gi := 0
	for wi := 0; wi < len(want); wi++ {
		w := want[wi]
		if w == "…" {
			if wi == len(want)-1 {
				return true, ""
			}
			next := want[wi+1]
			for gi < len(got) && !lineMatches(next, got[gi]) {
				gi++
			}
			continue
		}
		if gi >= len(got) || !lineMatches(w, got[gi]) {
			return false, w
		}
		gi++
	}
	if gi < len(got) {
		return false, "(end; got more: " + got[gi] + ")"
	}
	return true, ""
}

func lineMatches(want, got string) bool {
	if p, ok := strings.CutSuffix(want, "…"); ok {
		return strings.HasPrefix(got, p)
	}
	return want == got
}

// exampleHome makes the home of a fixture.
func exampleHome(t *testing.T, fixture string) string {
	t.Helper()
	home := t.TempDir()
	switch fixture {
	case "":
	case "claude-code":
		writeFile(t, filepath.Join(home, ".claude.json"), `{
  "numStartups": 12,
  "mcpServers": {
    "memory": {"type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]},
    "filesystem": {"type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/home/me/src"]}
  }
}
`)
		os.Chmod(filepath.Join(home, ".claude.json"), 0o600)
	case "github":
		// A user with GitHub's server, for examples that name it.
		writeFile(t, filepath.Join(home, ".claude.json"), `{"mcpServers": {"github": {"type": "stdio", "command": "github-mcp-server", "args": ["stdio"]}}}`)
		os.Chmod(filepath.Join(home, ".claude.json"), 0o600)
	default:
		t.Fatalf("unknown example fixture %q", fixture)
	}
	return home
}

// TestDocumentedExamples runs every console example of the README and
// docs/*.md and compares what it prints with what the page shows.
func TestDocumentedExamples(t *testing.T) {
	files := []string{filepath.Join("..", "..", "README.md")}
	docs, _ := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	files = append(files, docs...)
	for i, f := range files {
		a, err := filepath.Abs(f)
		if err != nil {
			t.Fatal(err)
		}
		files[i] = a
	}
	n := 0
	for _, f := range files {
		homes := map[string]string{}
		for _, ex := range docExamples(t, f) {
			home, ok := homes[ex.fixture]
			if !ok || ex.fixture == "" {
				home = exampleHome(t, ex.fixture)
				homes[ex.fixture] = home
			}
			// "client add" would write the test binary's path, a temporary
			// build: the capbroker on PATH stands for the installed one.
			bin := fakeCapbroker(t)
			env := map[string]string{"HOME": home, "PATH": filepath.Dir(bin), "CAPBROKER_RANKER": ""}
			t.Chdir(t.TempDir())
			// Ranking by meaning needs the catalog's vectors: a one-shot
			// command on a loaded machine would rank by words while they
			// are computed. "capbroker embed" computes them first, as the
			// README suggests for a slow machine.
			if slices.ContainsFunc(ex.cmds, func(c docCommand) bool { return len(c.args) > 1 && (c.args[1] == "select" || c.args[1] == "find") }) {
				if _, stderr, code := runEnv(t, env, "embed"); code != 0 {
					t.Fatalf("%s:%d: capbroker embed: exit %d: %s", f, ex.line, code, stderr)
				}
			}
			for _, c := range ex.cmds {
				n++
				if len(c.args) == 0 || c.args[0] != "capbroker" {
					t.Errorf("%s:%d: a console example runs capbroker, not %q", f, c.line, c.args)
					continue
				}
				stdout, stderr, code := runEnv(t, env, c.args[1:]...)
				var got []string
				for _, l := range strings.Split(strings.TrimRight(stdout+stderr, "\n"), "\n") {
					if strings.Contains(l, "this capbroker is a temporary build") || strings.Contains(l, bin+" is under the temporary folder") {
						continue // the test binary's and its stand-in's own warnings
					}
					got = append(got, strings.ReplaceAll(l, home, "~"))
				}
				if ok, at := matchOutput(c.want, got); !ok || code != 0 {
					t.Errorf("%s:%d: %s: exit %d; the page shows, from %q on, not what it prints:\n%s",
						f, c.line, strings.Join(c.args, " "), code, at, strings.Join(got, "\n"))
				}
			}
		}
	}
	if n < 3 {
		t.Errorf("ran %d documented examples; the reading seems broken", n)
	}
}

func TestMatchOutput(t *testing.T) {
	for _, tc := range []struct {
		want, got []string
		ok        bool
	}{
		{[]string{"a", "b"}, []string{"a", "b"}, true},
		{[]string{"a", "b"}, []string{"a", "c"}, false},
		{[]string{"a"}, []string{"a", "b"}, false},
		{[]string{"a", "…"}, []string{"a", "b", "c"}, true},
		{[]string{"a", "…", "d"}, []string{"a", "b", "c", "d"}, true},
		{[]string{"ab…"}, []string{"abc"}, true},
		{[]string{"ab…"}, []string{"xbc"}, false},
	} {
		if ok, _ := matchOutput(tc.want, tc.got); ok != tc.ok {
			t.Errorf("matchOutput(%q, %q) = %v", tc.want, tc.got, ok)
		}
	}
}
