package source

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/capbroker/capbroker/internal/safefile"
	"path/filepath"
	"sort"
	"strings"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/source/mcp"
	"github.com/capbroker/capbroker/source/mcpconfig"
	"github.com/capbroker/capbroker/source/plugin"
	"github.com/capbroker/capbroker/source/toolfile"
)

// Interface guards.
var (
	_ Source = (*pluginSource)(nil)
	_ Source = (*looseSource)(nil)
	_ Source = (*marketplaceSource)(nil)
	_ Source = (*toolFileSource)(nil)
	_ Source = (*mcpSource)(nil)
)

// split sorts plugin problems into skipped and warnings.
func split(b *Batch, probs []plugin.Problem) {
	for _, pr := range probs {
		s := Skipped{Path: pr.Path, Line: pr.Line, Reason: pr.Reason}
		if pr.Skipped {
			b.Skipped = append(b.Skipped, s)
		} else {
			b.Warnings = append(b.Warnings, s)
		}
	}
}

// pluginSource is one Claude Code plugin.
type pluginSource struct {
	p      *plugin.Plugin
	getenv func(string) string
}

func (s *pluginSource) ID() string { return "plugin:" + s.p.Dir + "#" + s.p.Name }

func (s *pluginSource) Stamp() (Stamp, error) {
	st := Stamp{Files: StampFiles(s.p.Files())}
	if s.p.Entry != nil {
		st.Config = Digest(string(s.p.Entry.Raw))
	}
	return st, nil
}

func (s *pluginSource) Load(ctx context.Context) (*Batch, error) {
	cards, probs := s.p.Load()
	b := &Batch{Cards: cards, Info: Info{Name: s.p.Name, Kind: KindPlugin, Path: s.p.Dir}}
	split(b, probs)
	b.Info.Counts.Plugins = 1
	b.Info.Counts.Add(cards)
	// Count the MCP servers the plugin declares.
	var servers []mcpconfig.Server
	var mprobs []mcpconfig.Problem
	var err error
	opts := &mcpconfig.Options{Getenv: s.getenv, Vars: map[string]string{"CLAUDE_PLUGIN_ROOT": s.p.Dir}}
	switch {
	case s.p.MCPConfig != "":
		servers, mprobs, err = mcpconfig.Load(s.p.MCPConfig, opts)
		if err != nil {
			b.Skipped = append(b.Skipped, Skipped{Path: s.p.MCPConfig, Reason: err.Error()})
		}
	case len(s.p.InlineMCP) > 0:
		data, _ := json.Marshal(map[string]json.RawMessage{"mcpServers": s.p.InlineMCP})
		servers, mprobs, err = mcpconfig.Parse(s.p.ManifestPath, data, opts)
		if err != nil {
			b.Skipped = append(b.Skipped, Skipped{Path: s.p.ManifestPath, Reason: err.Error()})
		}
	}
	b.Info.Servers = len(servers)
	_ = mprobs // the servers' own problems are reported when they are connected
	return b, nil
}

// looseSource is the skills, agents and commands of one root that belong
// to no plugin.
type looseSource struct {
	root, scope              string
	agents, commands, skills []plugin.Loose
}

func (s *looseSource) ID() string { return "loose:" + s.root }

func (s *looseSource) files() []string {
	var out []string
	for _, g := range [][]plugin.Loose{s.agents, s.commands, s.skills} {
		for _, l := range g {
			out = append(out, l.Path)
		}
	}
	return out
}

func (s *looseSource) Stamp() (Stamp, error) {
	return Stamp{Files: StampFiles(s.files()), Config: Digest(s.scope)}, nil
}

func (s *looseSource) Load(ctx context.Context) (*Batch, error) {
	b := &Batch{Info: Info{Name: s.scope, Kind: KindLoose, Path: s.root}}
	var probs []plugin.Problem
	for _, g := range []struct {
		files []plugin.Loose
		kind  card.Kind
	}{{s.agents, card.KindAgent}, {s.commands, card.KindCommand}, {s.skills, card.KindSkill}} {
		for _, f := range g.files {
			c, ps, ok := plugin.LoadLoose(f, g.kind, s.scope)
			probs = append(probs, ps...)
			if ok {
				b.Cards = append(b.Cards, c)
			}
		}
	}
	probs = append(probs, plugin.Disambiguate(b.Cards)...)
	split(b, probs)
	b.Info.Counts.Add(b.Cards)
	return b, nil
}

// marketplaceSource is a marketplace.json; it has no cards of its own.
type marketplaceSource struct {
	m *plugin.MarketplaceFile
}

func (s *marketplaceSource) ID() string { return "marketplace:" + s.m.Path }

func (s *marketplaceSource) Stamp() (Stamp, error) {
	return Stamp{Files: StampFiles([]string{s.m.Path})}, nil
}

func (s *marketplaceSource) Load(ctx context.Context) (*Batch, error) {
	return &Batch{Info: Info{Name: s.m.Marketplace.Name, Kind: KindMarketplace, Path: s.m.Path, Counts: Counts{Plugins: s.m.Local}}}, nil
}

// toolFileSource is a file of tool definitions. One found while scanning
// a root (not explicit) that holds no tools is ignored, not reported.
type toolFileSource struct {
	path     string
	explicit bool
}

func (s *toolFileSource) ID() string { return "toolfile:" + s.path }

func (s *toolFileSource) Stamp() (Stamp, error) {
	return Stamp{Files: StampFiles([]string{s.path})}, nil
}

func (s *toolFileSource) Load(ctx context.Context) (*Batch, error) {
	name := strings.TrimSuffix(filepath.Base(s.path), filepath.Ext(s.path))
	b := &Batch{Info: Info{Name: name, Kind: KindToolFile, Path: s.path}}
	cards, err := toolfile.Load(s.path)
	var se *safefile.Error
	if errors.As(err, &se) {
		// A FIFO, a device or a huge file named like a tool file: said
		// even when found while scanning, so it is not silently ignored.
		b.Skipped = append(b.Skipped, Skipped{Path: s.path, Reason: se.Error() + "; skipped"})
		b.Info.Error = se.Error()
		return b, nil
	}
	if !s.explicit && !looksLikeTools(cards) {
		b.Ignored = true
		return b, nil
	}
	b.Cards = cards
	b.Info.Counts.Add(cards)
	for _, e := range unjoin(err) {
		var te *toolfile.Error
		if errors.As(e, &te) {
			reason := te.Err.Error()
			switch {
			case te.Item > 0 && te.Name != "":
				reason = fmt.Sprintf("item %d (%q): %s", te.Item, te.Name, reason)
			case te.Item > 0:
				reason = fmt.Sprintf("item %d: %s", te.Item, reason)
			case te.Name != "":
				reason = fmt.Sprintf("tool %q: %s", te.Name, reason)
			}
			b.Skipped = append(b.Skipped, Skipped{Path: te.File, Line: te.Line, Reason: reason})
			continue
		}
		b.Skipped = append(b.Skipped, Skipped{Path: s.path, Reason: e.Error()})
	}
	if len(cards) == 0 && err != nil {
		b.Info.Error = "no tools read"
	}
	return b, nil
}

// looksLikeTools decides whether a data file found while scanning a root
// is a tool file: it must give at least one tool, and every tool must have
// an input schema or the OpenAI function wrapper. A package.json, whose
// "name" and "description" read as one schema-less tool, is not.
func looksLikeTools(cards []card.Card) bool {
	if len(cards) == 0 {
		return false
	}
	for _, c := range cards {
		if len(c.InputSchema) == 0 && c.Meta["format"] != "openai" {
			return false
		}
	}
	return true
}

// unjoin lists the errors inside an errors.Join.
func unjoin(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// mcpSource is one MCP server.
type mcpSource struct {
	s    mcpconfig.Server
	opts *mcp.Options
}

func (s *mcpSource) ID() string { return "mcp:" + s.s.File + "#" + s.s.Name }

func (s *mcpSource) Stamp() (Stamp, error) {
	parts := []string{s.s.Name, s.s.Transport, s.s.Command, s.s.Dir, s.s.URL}
	parts = append(parts, s.s.Args...)
	parts = append(parts, sortedPairs(s.s.Env)...)
	parts = append(parts, sortedPairs(s.s.Headers)...)
	return Stamp{Config: Digest(parts...), Live: true}, nil
}

func sortedPairs(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

func (s *mcpSource) Load(ctx context.Context) (*Batch, error) {
	b := &Batch{Info: Info{Name: s.s.Name, Kind: KindMCP, Path: s.s.File}}
	cards, err := mcp.List(ctx, s.s, s.opts)
	if err != nil {
		b.Skipped = append(b.Skipped, Skipped{Path: s.s.File, Line: s.s.Line, Reason: err.Error()})
		return b, err
	}
	b.Cards = cards
	b.Info.Counts.Add(cards)
	return b, nil
}

// MCPServer returns the MCP server definition a planned source connects
// to, and whether s is such a source. The MCP gateway uses it to front
// the servers discovery finds (see [Plan]) without listing them itself.
func MCPServer(s Source) (mcpconfig.Server, bool) {
	if m, ok := s.(*mcpSource); ok {
		return m.s, true
	}
	return mcpconfig.Server{}, false
}
