package plugin

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"
)

// extract writes a txtar archive into a new temporary folder, replacing
// $ROOT in file contents with that folder.
func extract(t *testing.T, archive string) string {
	t.Helper()
	a, err := txtar.ParseFile(archive)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	for _, f := range a.Files {
		p := filepath.Join(root, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		data := strings.ReplaceAll(string(f.Data), "$ROOT", root)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// TestScan runs each testdata/scan/*.txtar scenario and compares the
// layout, cards and problems with testdata/scan/<name>.golden.
func TestScan(t *testing.T) {
	archives, err := filepath.Glob("testdata/scan/*.txtar")
	if err != nil || len(archives) == 0 {
		t.Fatalf("no scenarios: %v", err)
	}
	for _, archive := range archives {
		name := strings.TrimSuffix(filepath.Base(archive), ".txtar")
		t.Run(name, func(t *testing.T) {
			root := extract(t, archive)
			if name == "messy" {
				writeMessy(t, root)
			}
			l, err := Scan(root, nil)
			if err != nil {
				t.Fatal(err)
			}
			cards, probs, n := loadAll(t, root, "root")
			var b strings.Builder
			fmt.Fprintf(&b, "counts: %+v\n", n)
			for _, p := range l.Plugins {
				rel, _ := filepath.Rel(root, p.Dir)
				fmt.Fprintf(&b, "plugin %s at %s marketplace=%q keywords=%q mcp=%v\n", p.Name, filepath.ToSlash(rel), p.Marketplace, p.Keywords, p.MCPConfig != "")
			}
			for _, group := range [][]string{l.MCPConfigs, l.DataFiles} {
				var rels []string
				for _, f := range group {
					rel, _ := filepath.Rel(root, f)
					rels = append(rels, filepath.ToSlash(rel))
				}
				sort.Strings(rels)
				fmt.Fprintf(&b, "files: %q\n", rels)
			}
			for _, c := range cards {
				if c.Meta[MetaArgumentHint] != "" || c.Meta[MetaModel] != "" {
					fmt.Fprintf(&b, "meta %s: model=%q argument-hint=%q\n", c.Name, c.Meta[MetaModel], c.Meta[MetaArgumentHint])
				}
			}
			b.WriteString(render(root, cards, probs))
			golden(t, filepath.Join("testdata", "scan", name+".golden"), b.String())
		})
	}
}

// writeMessy adds files a txtar cannot hold verbatim, and symbolic links.
func writeMessy(t *testing.T, root string) {
	t.Helper()
	files := map[string]string{
		"enc/.claude-plugin/plugin.json": "\ufeff{\"name\": \"enc\"}",
		"enc/agents/bom-crlf.md":         "\ufeff---\r\nname: bom-crlf\r\ndescription: Windows file.\r\ntools:\r\n  - Read\r\n---\r\nBody\r\n",
		"enc/agents/latin1.md":           "---\nname: latin1\ndescription: Caf\xe9 cr\xe8me.\n---\n",
		"enc/commands/bad-utf8.md":       "---\ndescription: na\xc3\xafve \xff\n---\n",
	}
	for name, data := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A link back to the root must not loop; a dangling link is reported.
	if err := os.Symlink(root, filepath.Join(root, "loop")); err != nil {
		t.Skipf("symbolic links unavailable: %v", err)
	}
	if err := os.Symlink(filepath.Join(root, "nowhere"), filepath.Join(root, "dangling")); err != nil {
		t.Fatal(err)
	}
}
