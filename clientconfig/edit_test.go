package clientconfig

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/tailscale/hujson"

	"github.com/capbroker/capbroker/source/mcpconfig"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// TestAddRemove routes each client's real config shape through the
// gateway and back: the diff of the dry run (golden), the files written,
// a second add that changes nothing, and a remove that restores every
// server.
func TestAddRemove(t *testing.T) {
	for _, tc := range []struct {
		client string
		moved  []string
		stay   []string // left in the client, with a note
		off    []string // moved, but disabled: the gateway leaves them out too
	}{
		{ClaudeCode, []string{"github", "memory", "sentry"}, nil, nil},
		{ClaudeDesktop, []string{"brave-search", "filesystem"}, nil, nil},
		{VSCode, []string{"fetch", "github", "playwright"}, []string{"perplexity"}, nil},
		{Cursor, []string{"context7", "git", "linear"}, nil, []string{"git"}},
	} {
		t.Run(tc.client, func(t *testing.T) {
			home := t.TempDir()
			env := Env{Home: home, WorkDir: filepath.Join(home, "src"), GOOS: "linux", Getenv: func(string) string { return "" }}
			f, err := UserFile(tc.client, env)
			if err != nil {
				t.Fatal(err)
			}
			orig, err := os.ReadFile(filepath.Join("testdata", tc.client+".json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Dir(f.Path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(f.Path, orig, 0o600); err != nil {
				t.Fatal(err)
			}
			servers := ServersFile(tc.client, env)
			gw := Gateway{Command: "/usr/local/bin/capbroker", Args: []string{"gateway"}}

			p, err := PlanAdd(f, servers, gw)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.moved, sorted(p.Moved)); diff != "" {
				t.Errorf("moved (-want +got):\n%s", diff)
			}
			if len(p.Notes) != len(tc.stay) {
				t.Errorf("notes = %q, want one for each of %v", p.Notes, tc.stay)
			}
			golden(t, filepath.Join("testdata", tc.client+".add.diff"), strings.ReplaceAll(p.Diff(), home, "$HOME"))
			if _, err := os.Stat(servers); err == nil {
				t.Fatal("planning wrote the servers file")
			}

			now := time.Date(2026, 12, 1, 7, 0, 0, 0, time.UTC)
			backups, err := p.Apply(now)
			if err != nil {
				t.Fatal(err)
			}
			if len(backups) != 1 || !strings.HasSuffix(backups[0], ".capbroker-backup-20261201-070000") {
				t.Errorf("backups = %v, want the client's file", backups)
			} else if b, _ := os.ReadFile(backups[0]); string(b) != string(orig) {
				t.Error("the backup differs from the original")
			}
			if st, err := os.Stat(f.Path); err != nil || st.Mode().Perm() != 0o600 {
				t.Errorf("the client's file mode: %v, %v; want 0600 kept", st, err)
			}

			// The client now lists the gateway (and what stays); the
			// gateway's servers file holds the moved servers, as the
			// gateway reads them.
			got := clientNames(t, f)
			want := append([]string{EntryName}, tc.stay...)
			if diff := cmp.Diff(sorted(want), got); diff != "" {
				t.Errorf("client servers after add (-want +got):\n%s", diff)
			}
			usable := slices.DeleteFunc(slices.Clone(tc.moved), func(n string) bool { return slices.Contains(tc.off, n) })
			if diff := cmp.Diff(usable, serverNames(t, servers, home, len(tc.off))); diff != "" {
				t.Errorf("servers behind the gateway (-want +got):\n%s", diff)
			}
			gwEntry := loadServer(t, f.Path, EntryName)
			if gwEntry.Command != gw.Command || !slices.Equal(gwEntry.Args, []string{"gateway", "--mcp-config", servers}) {
				t.Errorf("gateway entry = %s %v", gwEntry.Command, gwEntry.Args)
			}

			// A second add changes nothing.
			again, err := PlanAdd(f, servers, gw)
			if err != nil {
				t.Fatal(err)
			}
			if !again.Empty() {
				t.Errorf("a second add plans:\n%s", again.Diff())
			}

			// Remove restores every server.
			rm, err := PlanRemove(f, servers)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, filepath.Join("testdata", tc.client+".remove.diff"), strings.ReplaceAll(rm.Diff(), home, "$HOME"))
			if _, err := rm.Apply(now); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(servers); err == nil {
				t.Error("remove left the servers file")
			}
			restored, _ := os.ReadFile(f.Path)
			if diff := cmp.Diff(standard(t, orig), standard(t, restored)); diff != "" {
				t.Errorf("after remove, the client's file differs from the original (-orig +now):\n%s", diff)
			}
			if again, _ := PlanRemove(f, servers); !again.Empty() {
				t.Errorf("a second remove plans:\n%s", again.Diff())
			}
		})
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s (-want +got):\n%s", path, diff)
	}
}

// clientNames are the servers the client's file defines.
func clientNames(t *testing.T, f File) []string {
	t.Helper()
	d, err := readDoc(f.Path, f.Key)
	if err != nil {
		t.Fatal(err)
	}
	return sorted(d.order)
}

// serverNames are the servers the gateway reads from path, every one
// usable.
func serverNames(t *testing.T, path, home string, disabled int) []string {
	t.Helper()
	// VS Code's fetch server reads ${userHome}/.config/fetch.env.
	if err := os.WriteFile(filepath.Join(home, ".config", "fetch.env"), []byte("FETCH_UA=test\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	servers, probs, err := mcpconfig.Load(path, &mcpconfig.Options{Getenv: func(string) string { return "x" }, Vars: map[string]string{"userHome": home}})
	if err != nil {
		t.Fatal(err)
	}
	if len(probs) != disabled {
		t.Errorf("the gateway reads %s with problems: %v", path, probs)
	}
	var names []string
	for _, s := range servers {
		names = append(names, s.Name)
	}
	return sorted(names)
}

func loadServer(t *testing.T, path, name string) mcpconfig.Server {
	t.Helper()
	servers, _, err := mcpconfig.Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range servers {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("%s has no server %s", path, name)
	return mcpconfig.Server{}
}

// standard decodes a (JSON with comments) file into plain values.
func standard(t *testing.T, data []byte) any {
	t.Helper()
	d, err := hujson.Standardize(slices.Clone(data))
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(d, &v); err != nil {
		t.Fatal(err)
	}
	return v
}
