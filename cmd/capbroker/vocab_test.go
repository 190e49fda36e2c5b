package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestVocabulary walks every command's flags and holds the CLI to one
// vocabulary (issue 19): --config is capbroker.yaml everywhere, tool
// files are --tools, both HTTP faces listen at --addr, each timeout has
// one name that says what it bounds, the token comes from
// $CAPBROKER_TOKEN, and every hidden flag is a former name that warns.
func TestVocabulary(t *testing.T) {
	// The timeouts, by name; a flag ending in "timeout" must be one of them.
	timeouts := []string{"start-timeout", "call-timeout", "read-timeout", "write-timeout", "idle-timeout", "login-timeout", "drain-timeout", "ready-timeout"}
	// Former names: no command may show them.
	former := []string{"timeout", "http", "tool-file", "catalog", "listen"}
	// Deliberate exceptions, each with its reason.
	except := map[string]string{
		"capbroker eval --k":               "the benchmark's list of cut-offs (1,3,5,10), not a count of results",
		"capbroker eval --usage-b":         "a hidden tuning knob for leave-one-dataset-out runs, not a user's flag",
		"capbroker eval --usage-phrases":   "a hidden tuning knob for leave-one-dataset-out runs, not a user's flag",
		"capbroker eval --usage-precedent": "a hidden tuning knob for leave-one-dataset-out runs, not a user's flag",
		"capbroker eval upstream --tools":  "the one tool file the session eval's hidden upstream serves",
	}
	var addrs []string
	types := map[string]string{} // flag name -> its type, the same on every command
	var walk func(prefix string, cmds []*cobra.Command)
	walk = func(prefix string, cmds []*cobra.Command) {
		for _, c := range cmds {
			path := prefix + " " + c.Name()
			c.Flags().VisitAll(func(f *pflag.Flag) {
				where := path + " --" + f.Name
				if _, ok := except[where]; ok {
					return
				}
				if f.Hidden {
					to, ok := f.Annotations[aliasOf]
					if !ok || !strings.HasPrefix(f.Usage, aliasUsage) || c.Flags().Lookup(to[0]) == nil {
						t.Errorf("%s: hidden but not a former name of a flag it has (usage %q)", where, f.Usage)
					}
					return
				}
				if slices.Contains(former, f.Name) {
					t.Errorf("%s: a former name shown; make it a hidden alias", where)
				}
				if prev, ok := types[f.Name]; ok && prev != f.Value.Type() {
					t.Errorf("%s: a %s here, a %s elsewhere", where, f.Value.Type(), prev)
				}
				types[f.Name] = f.Value.Type()
				switch {
				case f.Name == "config" && !strings.Contains(f.Usage, "capbroker.yaml"):
					t.Errorf("%s: %q; --config names capbroker.yaml on every command", where, f.Usage)
				case strings.HasSuffix(f.Name, "timeout") && !slices.Contains(timeouts, f.Name):
					t.Errorf("%s: a timeout outside the vocabulary %v", where, timeouts)
				case f.Name == "token" && !strings.Contains(f.Usage, "$CAPBROKER_TOKEN"):
					t.Errorf("%s: %q does not say it defaults to $CAPBROKER_TOKEN", where, f.Usage)
				case f.Name == "addr":
					addrs = append(addrs, path)
				case f.Name != "tools" && f.Name != "root" && strings.Contains(strings.ToLower(f.Usage), "tool file"):
					t.Errorf("%s: %q reads tool files; name it --tools", where, f.Usage)
				}
			})
			walk(path, c.Commands())
		}
	}
	walk("capbroker", (&Main{}).commands())
	if want := []string{"capbroker gateway", "capbroker serve"}; !slices.Equal(sorted(addrs), want) {
		t.Errorf("--addr on %v, want %v (both HTTP faces)", addrs, want)
	}
}

func sorted(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }

// TestFormerNamesWarn: the former names TestVocabulary hides still work,
// each with one warning naming what to use.
func TestFormerNamesWarn(t *testing.T) {
	tools := filepath.Join("..", "..", "examples", "catalog", "github.json")
	index := t.TempDir()
	for _, tc := range []struct {
		args []string
		warn string
	}{
		{[]string{"select", "open an issue", "--tool-file", tools, "--index", index, "--json"},
			"warning: --tool-file is deprecated; use --root (capbroker select)"},
		{[]string{"login", "nosuch", "--timeout", "1s", "--mcp-config", tools},
			"warning: --timeout is deprecated; use --login-timeout (capbroker login)"},
	} {
		_, stderr, _ := run(t, tc.args...)
		if strings.Count(stderr, tc.warn) != 1 {
			t.Errorf("%v: stderr %q, want %q once", tc.args, stderr, tc.warn)
		}
	}
}

// TestIsServersFile: the gateway's former --config took an MCP servers
// file; one with comments (VS Code's) is recognized too, capbroker.yaml
// is not.
func TestIsServersFile(t *testing.T) {
	dir := t.TempDir()
	for name, tc := range map[string]struct {
		text string
		want bool
	}{
		"servers.json":   {`{"mcpServers": {"a": {"command": "a"}}}`, true},
		"mcp.json":       {"{\n  // mine\n  \"servers\": {\"a\": {\"command\": \"a\"},},\n}", true},
		"capbroker.yaml": {"roots: [./plugins]\n", false},
		"other.json":     {`{"theme": "dark"}`, false},
	} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(tc.text), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := isServersFile(p); got != tc.want {
			t.Errorf("isServersFile(%s) = %v, want %v", name, got, tc.want)
		}
	}
}
