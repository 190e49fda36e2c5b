package plugin

import (
	"errors"
	"fmt"
	"github.com/capbroker/capbroker/internal/safefile"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/source/frontmatter"
)

// MaxFileSize is the largest agent, command or skill file read. Larger
// files are skipped with a reason.
const MaxFileSize = 4 << 20

// Agent Skills limits (agentskills.io): longer values are kept and reported.
const (
	MaxSkillName        = 64
	MaxSkillDescription = 1024
)

// Metadata keys set on plugin, agent, command and skill cards.
const (
	MetaPlugin          = "plugin"           // plugin name
	MetaMarketplace     = "marketplace"      // marketplace listing the plugin
	MetaPluginVersion   = "plugin_version"   // plugin version
	MetaKeywords        = "keywords"         // plugin keywords, comma separated
	MetaCategory        = "category"         // plugin category
	MetaModel           = "model"            // agent model (sonnet, opus, inherit...)
	MetaTools           = "tools"            // tools, normalized "A, B, C"
	MetaAllowedTools    = "allowed-tools"    // allowed-tools, normalized
	MetaArgumentHint    = "argument-hint"    // argument hint as written
	MetaBodyBytes       = "body_bytes"       // skills: size of the body in bytes
	MetaDescriptionFrom = "description_from" // "body" when taken from the first body line
	MetaScope           = "scope"            // loose files: the source name they were given
)

// Load reads the plugin's agents, commands and skills into cards. A file
// that cannot be read is left out and reported; the others still load.
func (p *Plugin) Load() ([]card.Card, []Problem) {
	var cards []card.Card
	var probs []Problem
	add := func(c card.Card, ps []Problem, ok bool) {
		probs = append(probs, ps...)
		if ok {
			cards = append(cards, c)
		}
	}
	for _, f := range p.AgentFiles {
		add(p.file(f, card.KindAgent, strings.TrimSuffix(filepath.Base(f), ".md")))
	}
	for _, c := range p.CommandFiles {
		add(p.file(c.Path, card.KindCommand, c.Name))
	}
	for _, f := range p.SkillFiles {
		add(p.file(f, card.KindSkill, filepath.Base(filepath.Dir(f))))
	}
	probs = append(probs, Disambiguate(cards)...)
	return cards, probs
}

// kindOrder decides which kind keeps a name that cards of several kinds
// share: agents first, then commands, then skills.
var kindOrder = map[card.Kind]int{card.KindAgent: 0, card.KindCommand: 1, card.KindSkill: 2, card.KindTool: 3}

// Disambiguate renames cards of one source that share a name across kinds
// (a plugin with an agent, a command and a skill all called
// "discover-brand"): the first kind in the order agent, command, skill keeps
// the name, the others become name~kind with OriginalName set. Cards of the
// same kind and name are left for the catalog to report. It returns a
// warning per rename.
func Disambiguate(cards []card.Card) []Problem {
	byName := map[string][]int{}
	for i := range cards {
		k := cards[i].Source + "\x00" + cards[i].Name
		byName[k] = append(byName[k], i)
	}
	var probs []Problem
	for _, idx := range byName {
		if len(idx) < 2 {
			continue
		}
		best := idx[0]
		for _, i := range idx[1:] {
			if kindOrder[cards[i].Kind] < kindOrder[cards[best].Kind] {
				best = i
			}
		}
		for _, i := range idx {
			c := &cards[i]
			if c.Kind == cards[best].Kind {
				continue
			}
			orig := c.Name
			c.OriginalName = orig
			c.Name = orig + "~" + string(c.Kind)
			c.Digest = c.ComputeDigest()
			probs = append(probs, Problem{Path: c.Path, Reason: fmt.Sprintf("%s %s shares its name with an %s of the same plugin; named it %s", c.Kind, orig, cards[best].Kind, c.Name)})
		}
	}
	sort.Slice(probs, func(i, j int) bool { return probs[i].Path < probs[j].Path })
	return probs
}

func (p *Plugin) file(path string, kind card.Kind, placeName string) (card.Card, []Problem, bool) {
	o := owner{plugin: p}
	return loadFile(path, kind, placeName, o)
}

// LoadLoose reads a file that belongs to no plugin. scope names the
// source the card is given (for example "user", "project", or a root's
// folder name). ok is false when the file was left out.
func LoadLoose(l Loose, kind card.Kind, scope string) (c card.Card, probs []Problem, ok bool) {
	return loadFile(l.Path, kind, l.Name, owner{scope: scope})
}

type owner struct {
	plugin *Plugin
	scope  string
}

func loadFile(path string, kind card.Kind, placeName string, o owner) (card.Card, []Problem, bool) {
	data, err := safefile.ReadFile(path, MaxFileSize)
	var se *safefile.Error
	switch {
	case errors.As(err, &se):
		return card.Card{}, []Problem{{Path: path, Reason: se.Error(), Skipped: true}}, false
	case err != nil:
		return card.Card{}, []Problem{{Path: path, Reason: fmt.Sprintf("cannot read: %v", err), Skipped: true}}, false
	}
	c, probs := Build(path, data, kind, placeName, o.plugin, o.scope)
	return c, probs, true
}

// Build makes the card of one agent, command or skill file from its bytes.
// placeName is the name the file's place gives it (file stem, skill
// folder, "ns:cmd"); the frontmatter name wins for agents and skills. p is
// the owning plugin, or nil for a loose file with the given scope. Build
// never fails; problems are reported as warnings.
func Build(path string, data []byte, kind card.Kind, placeName string, p *Plugin, scope string) (card.Card, []Problem) {
	d := frontmatter.Parse(data)
	var probs []Problem
	warn := func(line int, format string, args ...any) {
		probs = append(probs, Problem{Path: path, Line: line, Reason: fmt.Sprintf(format, args...)})
	}
	for _, n := range d.Notes {
		warn(0, "%s", n)
	}
	if d.Lenient {
		warn(d.YAMLLine, "frontmatter is not valid YAML (%v); read it line by line", d.YAMLError)
	}

	name := placeName
	if kind != card.KindCommand || !strings.Contains(placeName, ":") {
		if n := d.String("name"); n != "" {
			name = n
		}
	}
	name = strings.TrimSpace(name)
	if name == "" {
		name = strings.TrimSuffix(filepath.Base(path), ".md")
	}
	desc := d.String("description")
	meta := map[string]string{}
	if desc == "" && kind != card.KindSkill {
		if line := firstLine(d.Body); line != "" {
			desc = line
			meta[MetaDescriptionFrom] = "body"
		}
	}
	if desc == "" {
		warn(d.Line("description"), "no description")
	}
	if kind == card.KindSkill {
		if n := utf8.RuneCountInString(name); n > MaxSkillName {
			warn(d.Line("name"), "skill name is %d characters; Agent Skills allow %d", n, MaxSkillName)
		}
		if n := utf8.RuneCountInString(desc); n > MaxSkillDescription {
			warn(d.Line("description"), "skill description is %d characters; Agent Skills allow %d", n, MaxSkillDescription)
		}
		meta[MetaBodyBytes] = strconv.Itoa(len(d.Body))
	}
	if v := d.String("model"); v != "" {
		meta[MetaModel] = v
	}
	if v := d.List("tools"); v != nil {
		meta[MetaTools] = strings.Join(v, ", ")
	}
	if v := d.List("allowed-tools"); v != nil {
		meta[MetaAllowedTools] = strings.Join(v, ", ")
	}
	if v := d.String("argument-hint"); v != "" {
		meta[MetaArgumentHint] = v
	}

	c := card.Card{Name: name, Kind: kind, Description: desc, Path: path, Meta: meta}
	if p != nil {
		c.Name = p.Name + ":" + name
		c.Source = p.Name
		meta[MetaPlugin] = p.Name
		if p.Marketplace != "" {
			meta[MetaMarketplace] = p.Marketplace
		}
		if p.Version != "" {
			meta[MetaPluginVersion] = p.Version
		}
		if len(p.Keywords) > 0 {
			meta[MetaKeywords] = strings.Join(p.Keywords, ", ")
		}
		if p.Category != "" {
			meta[MetaCategory] = p.Category
		}
		c.Tags = tags(p)
	} else {
		c.Source = scope
		if scope != "" {
			meta[MetaScope] = scope
		}
	}
	c.ResolveRisk()
	c.Digest = c.ComputeDigest()
	return c, probs
}

// tags are the plugin's keywords and category, lower case, unique, sorted.
func tags(p *Plugin) []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range append(append([]string{}, p.Keywords...), p.Category) {
		t = strings.ToLower(strings.TrimSpace(t))
		if t != "" && !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	sort.Strings(out)
	return out
}

// firstLine returns the first line of text of a Markdown body, without
// heading marks: the description Claude Code shows for a command that has
// none.
func firstLine(body string) string {
	for _, l := range strings.Split(body, "\n") {
		l = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(l), "#"))
		if l == "" || l == "---" || strings.HasPrefix(l, "<!--") {
			continue
		}
		return l
	}
	return ""
}
