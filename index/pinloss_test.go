package index

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capbroker/capbroker/card"
	"github.com/google/go-cmp/cmp"
)

// TestPinsLostOrCorrupt: a pins file that held approvals and is then
// deleted, corrupted or made unreadable approves nothing: every MCP tool
// is held, the reason names the file and the command that re-approves,
// Open does not fail, and approving brings the tools back. A first run
// (no pins file ever) pins what it sees. (The old code re-pinned every
// tool after a delete, and called a corrupt file's tools "changed since
// approved".)
func TestPinsLostOrCorrupt(t *testing.T) {
	tools := []card.Card{mcpCard("web", "fetch", "Fetch a page."), mcpCard("web", "stable", "Stays.")}
	for _, tc := range []struct {
		name string
		// damage does something to dir/pins.json after a first run pinned
		// the tools.
		damage func(t *testing.T, path string)
		// want are words every held reason contains; nil means nothing is held.
		want []string
		// approvable: approving every held tool brings them back.
		approvable bool
	}{
		{"untouched", func(*testing.T, string) {}, nil, false},
		{"deleted", func(t *testing.T, path string) {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
		}, []string{"was deleted", "pins.json", "capbroker approve --all", "capbroker approve --list"}, true},
		{"corrupt", func(t *testing.T, path string) {
			if err := os.WriteFile(path, []byte(`{"version":1,"pins":{"web\u0000fetch":`), 0o644); err != nil {
				t.Fatal(err)
			}
		}, []string{"was corrupt", "pins.json", "moved aside to pins.json.corrupt-", "capbroker approve --all"}, true},
		{"no pins object", func(t *testing.T, path string) {
			if err := os.WriteFile(path, []byte(`[]`), 0o644); err != nil {
				t.Fatal(err)
			}
		}, []string{"was corrupt", "pins.json"}, true},
		{"a directory", func(t *testing.T, path string) {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(path, 0o755); err != nil {
				t.Fatal(err)
			}
		}, []string{"cannot be read", "pins.json"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			first, err := Open(dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, held, err := first.Hold(tools); err != nil || len(held) != 0 {
				t.Fatalf("first run: held %v, err %v", names(held), err)
			}
			tc.damage(t, filepath.Join(dir, PinsName))

			for _, how := range []string{"a new process", "the running one"} {
				ix := first
				if how == "a new process" {
					if ix, err = Open(dir, nil); err != nil {
						t.Fatalf("Open after the damage: %v", err)
					}
				}
				keep, held, _ := ix.Hold(tools)
				if tc.want == nil {
					if len(held) != 0 || len(keep) != 2 {
						t.Fatalf("%s: keep %v held %v", how, names(keep), names(held))
					}
					continue
				}
				if len(keep) != 0 || len(held) != 2 {
					t.Fatalf("%s: keep %v held %v, want every tool held", how, names(keep), names(held))
				}
				for _, c := range held {
					why := c.Meta[HeldMeta]
					for _, w := range tc.want {
						if !strings.Contains(why, w) {
							t.Errorf("%s: the reason for %s lacks %q: %s", how, c.Name, w, why)
						}
					}
					if strings.Contains(why, "changed since") {
						t.Errorf("%s: reason says changed: %s", how, why)
					}
				}
				for _, ch := range ix.Changed() {
					if !strings.Contains(ch.Why, tc.want[0]) {
						t.Errorf("%s: Changed().Why = %q", how, ch.Why)
					}
				}
			}
			if !tc.approvable {
				return
			}
			if got, err := Open(dir, nil); err != nil {
				t.Fatal(err)
			} else if approved, err := got.ApproveAll(); err != nil || len(approved) != 2 {
				t.Fatalf("approve --all: %v %v", approved, err)
			}
			ix, err := Open(dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			if keep, held, err := ix.Hold(tools); err != nil || len(held) != 0 || len(keep) != 2 {
				t.Fatalf("after approve --all: keep %v held %v err %v", names(keep), names(held), err)
			}
		})
	}
}

// TestPinsFirstRun: with no pins file and no mark, tools are pinned as
// seen, and the mark is written with the first pins.
func TestPinsFirstRun(t *testing.T) {
	dir := t.TempDir()
	ix, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, held, err := ix.Hold([]card.Card{mcpCard("web", "fetch", "Fetch a page.")}); err != nil || len(held) != 0 {
		t.Fatalf("held %v err %v", names(held), err)
	}
	if _, err := os.Stat(filepath.Join(dir, MarkName)); err != nil {
		t.Errorf("no mark after the first pins: %v", err)
	}
}

// TestHoldNew: with HoldNew, a tool never seen before is held as new (a
// renamed tool too) until approved; pinned tools are kept.
func TestHoldNew(t *testing.T) {
	dir := t.TempDir()
	first, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := first.Hold([]card.Card{mcpCard("web", "fetch", "Fetch a page.")}); err != nil {
		t.Fatal(err)
	}
	ix, err := Open(dir, &Options{HoldNew: true})
	if err != nil {
		t.Fatal(err)
	}
	// The server renames fetch to fetch_url and adds a tool.
	now := []card.Card{mcpCard("web", "fetch_url", "Fetch a page."), mcpCard("web", "post", "Post a form.")}
	keep, held, err := ix.Hold(append(now, mcpCard("web", "fetch", "Fetch a page.")))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"web__fetch"}, names(keep)); d != "" {
		t.Errorf("kept (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"web__fetch_url", "web__post"}, names(held)); d != "" {
		t.Errorf("held (-want +got):\n%s", d)
	}
	for _, c := range held {
		if why := c.Meta[HeldMeta]; !strings.Contains(why, "never seen before") || !strings.Contains(why, "capbroker approve "+c.Name) {
			t.Errorf("reason for %s: %s", c.Name, why)
		}
	}
	if _, err := ix.Approve("web__fetch_url"); err != nil {
		t.Fatal(err)
	}
	keep, held, _ = ix.Hold(now)
	if d := cmp.Diff([]string{"web__fetch_url"}, names(keep)); d != "" {
		t.Errorf("after approving fetch_url, kept (-want +got):\n%s", d)
	}
	if len(held) != 1 {
		t.Errorf("after approving fetch_url, held %v", names(held))
	}
}
