package route

// A minimal, test-only loader of plugin agents and commands, used because
// plugin discovery (package source) is not in main yet. It reads
// .claude-plugin/plugin.json, agents/*.md, commands/**/*.md and the
// plugin.json "agents"/"commands" lists, and takes name and description
// from frontmatter leniently. It is not the product's discovery: it skips
// skills, marketplaces and MCP servers, and reports nothing.

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/capbroker/capbroker/card"
)

// loadPlugins returns the agent and command cards of every plugin under root.
func loadPlugins(tb testing.TB, root string) []card.Card {
	tb.Helper()
	var plugins []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && d.Name() == "plugin.json" && filepath.Base(filepath.Dir(p)) == ".claude-plugin" {
			plugins = append(plugins, filepath.Dir(filepath.Dir(p)))
		}
		return nil
	})
	if err != nil {
		tb.Fatalf("walking %s: %v", root, err)
	}
	sort.Strings(plugins)
	var cards []card.Card
	for _, dir := range plugins {
		cards = append(cards, loadPlugin(tb, dir)...)
	}
	return cards
}

func loadPlugin(tb testing.TB, dir string) []card.Card {
	tb.Helper()
	var manifest struct {
		Name     string          `json:"name"`
		Agents   json.RawMessage `json:"agents"`
		Commands json.RawMessage `json:"commands"`
	}
	data, err := os.ReadFile(filepath.Join(dir, ".claude-plugin", "plugin.json"))
	if err != nil {
		tb.Fatal(err)
	}
	if err := json.Unmarshal(data, &manifest); err != nil {
		tb.Fatalf("%s: %v", dir, err)
	}
	plugin := manifest.Name
	if plugin == "" {
		plugin = filepath.Base(dir)
	}
	seen := map[string]bool{}
	var cards []card.Card
	add := func(kind card.Kind, path string) {
		if seen[path] || !strings.HasSuffix(path, ".md") {
			return
		}
		seen[path] = true
		data, err := os.ReadFile(path)
		if err != nil {
			tb.Fatal(err)
		}
		fm := frontmatter(string(data))
		if fm["description"] == "" && kind == card.KindCommand {
			// Claude Code describes a command without one by its first line.
			fm["description"] = firstLine(string(data))
		}
		name := fm["name"]
		if name == "" {
			name = strings.TrimSuffix(filepath.Base(path), ".md")
		}
		cards = append(cards, card.Card{
			Name: plugin + ":" + name, Kind: kind, Source: plugin,
			Description: fm["description"], Path: path,
			Meta: map[string]string{"plugin": plugin},
		})
	}
	listed := func(raw json.RawMessage) []string {
		var one string
		var many []string
		if json.Unmarshal(raw, &one) == nil && one != "" {
			many = []string{one}
		} else {
			_ = json.Unmarshal(raw, &many)
		}
		var out []string
		for _, p := range many {
			p = filepath.Join(dir, p)
			if st, err := os.Stat(p); err == nil && st.IsDir() {
				ms, _ := filepath.Glob(filepath.Join(p, "*.md"))
				out = append(out, ms...)
			} else {
				out = append(out, p)
			}
		}
		return out
	}
	agents, _ := filepath.Glob(filepath.Join(dir, "agents", "*.md"))
	for _, p := range append(agents, listed(manifest.Agents)...) {
		add(card.KindAgent, p)
	}
	var commands []string
	_ = filepath.WalkDir(filepath.Join(dir, "commands"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			commands = append(commands, p)
		}
		return nil
	})
	for _, p := range append(commands, listed(manifest.Commands)...) {
		add(card.KindCommand, p)
	}
	return cards
}

// frontmatter reads the top-level "key: value" pairs of a Markdown file's
// YAML frontmatter leniently: unquoted ": " in values, quoted values and
// block scalars (>, |) are read; anything else is ignored.
func frontmatter(s string) map[string]string {
	s = strings.TrimPrefix(s, "\ufeff")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	out := map[string]string{}
	if !strings.HasPrefix(s, "---\n") {
		return out
	}
	body, _, ok := strings.Cut(s[4:], "\n---")
	if !ok {
		return out
	}
	lines := strings.Split(body, "\n")
	for i := 0; i < len(lines); i++ {
		ln := lines[i]
		if ln == "" || ln[0] == ' ' || ln[0] == '\t' || ln[0] == '#' {
			continue
		}
		key, val, ok := strings.Cut(ln, ":")
		if !ok {
			continue
		}
		val = strings.TrimSpace(val)
		if val == "" || val[0] == '>' || val[0] == '|' {
			var block []string
			for i+1 < len(lines) && (lines[i+1] == "" || lines[i+1][0] == ' ' || lines[i+1][0] == '\t') {
				i++
				block = append(block, strings.TrimSpace(lines[i]))
			}
			sep := " "
			if val != "" && val[0] == '|' {
				sep = "\n"
			}
			val = strings.TrimSpace(strings.Join(block, sep))
		} else if len(val) >= 2 && (val[0] == '"' || val[0] == '\'') && val[len(val)-1] == val[0] {
			val = val[1 : len(val)-1]
		}
		out[strings.TrimSpace(key)] = val
	}
	return out
}

// firstLine returns the first non-empty line after any frontmatter, without
// a heading's leading '#'.
func firstLine(s string) string {
	s = strings.ReplaceAll(strings.TrimPrefix(s, "\ufeff"), "\r\n", "\n")
	if strings.HasPrefix(s, "---\n") {
		if _, rest, ok := strings.Cut(s[4:], "\n---"); ok {
			s = rest
			if i := strings.IndexByte(s, '\n'); i >= 0 {
				s = s[i+1:]
			}
		}
	}
	for _, ln := range strings.Split(s, "\n") {
		if ln = strings.TrimSpace(strings.TrimLeft(ln, "#")); ln != "" {
			return ln
		}
	}
	return ""
}
