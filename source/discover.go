package source

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/source/mcp"
	"github.com/capbroker/capbroker/source/mcpconfig"
	"github.com/capbroker/capbroker/source/plugin"
)

// Options says where to look and how. A nil *Options discovers nothing:
// use [Defaults] for the usual places.
type Options struct {
	// Roots are folders or files, each scanned as whatever it holds: a
	// plugins folder, a marketplace, a single plugin, a skills tree, a
	// .claude folder, tool files, an MCP config file.
	Roots []Root
	// ToolFiles are tool definition files (JSON, YAML, JSONL) read as
	// such; a file that holds no tools is reported.
	ToolFiles []string
	// MCPConfigs are MCP client config files whose servers are connected.
	MCPConfigs []string
	// PluginMCP also connects the MCP servers that plugins declare in
	// their .mcp.json. If false, those servers are only counted.
	PluginMCP bool
	// MCPTimeout bounds each MCP server's connection and listing; zero
	// means mcp.DefaultTimeout.
	MCPTimeout time.Duration
	// Parallel is how many sources are read at once; zero means 4.
	Parallel int
	// Getenv expands ${VAR} in MCP configs; nil means os.Getenv.
	Getenv func(string) string
	// Environ is the base environment of stdio MCP servers; nil means
	// os.Environ().
	Environ []string
	// WorkDir and Home expand ${workspaceFolder} and ${userHome}.
	WorkDir, Home string
	// Cache, when set, supplies unchanged sources without reading them.
	Cache Cache
	// Hold, when set, is given every card before the catalog is built and
	// returns the cards to keep and those to hold back (changed since
	// approved). The index sets it.
	Hold func(cards []card.Card) (keep, held []card.Card)
	// Progress, when set, is called after each source is read or taken
	// from the cache, from one goroutine at a time.
	Progress func(Progress)
}

// Root is a place to scan.
type Root struct {
	// Path is a folder or a file.
	Path string `yaml:"path" json:"path"`
	// Scope is the source name given to skills, agents and commands found
	// outside plugins; empty means the folder's name.
	Scope string `yaml:"scope,omitempty" json:"scope,omitempty"`
	// ClaudeDir scans the folder as a .claude folder (agents/, commands/,
	// skills/, plugins/ only), whatever its name.
	ClaudeDir bool `yaml:"claude_dir,omitempty" json:"claude_dir,omitempty"`
	// Optional roots that do not exist are passed over silently.
	Optional bool `yaml:"optional,omitempty" json:"optional,omitempty"`
}

// Progress reports one source done.
type Progress struct {
	Done, Total int
	// Source is the ID of the source just done.
	Source string
	// Cached reports that it came from the cache.
	Cached bool
}

// Cache supplies sources that have not changed since they were read. The
// index package implements it.
type Cache interface {
	// Lookup returns the batch stored for the source id if the source
	// still matches it, judged by the current stamp.
	Lookup(id string, current Stamp) (*Batch, bool)
}

// Discover finds every source opts points at, reads those the cache does
// not hold, and merges their cards into one catalog. It fails only when
// ctx is done; every other problem is in the report.
func Discover(ctx context.Context, opts *Options) (*Result, error) {
	start := time.Now()
	if opts == nil {
		opts = &Options{}
	}
	sources, skipped, warnings := Plan(ctx, opts)
	planned := &planProblems{skipped: skipped, warnings: warnings}
	batches := make([]*Batch, len(sources))
	stamps := make([]Stamp, len(sources))
	var toLoad []int
	var mu sync.Mutex
	done := 0
	report := func(id string, cached bool) {
		if opts.Progress == nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		done++
		opts.Progress(Progress{Done: done, Total: len(sources), Source: id, Cached: cached})
	}
	for i, s := range sources {
		st, err := s.Stamp()
		stamps[i] = st
		if err == nil && opts.Cache != nil {
			if b, ok := opts.Cache.Lookup(s.ID(), st); ok {
				c := *b
				c.Info.Cached = true
				batches[i] = &c
				report(s.ID(), true)
				continue
			}
		}
		toLoad = append(toLoad, i)
	}

	parallel := opts.Parallel
	if parallel <= 0 {
		parallel = 4
	}
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for _, i := range toLoad {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			s := sources[i]
			b, err := s.Load(ctx)
			if b == nil {
				b = &Batch{}
			}
			b.ID = s.ID()
			if err != nil {
				b.Info.Error = err.Error()
				b.Cards = nil
			}
			b.Stamp = stamps[i]
			b.LoadedAt = time.Now()
			batches[i] = b
			report(s.ID(), false)
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("discovering capabilities: %w", err)
	}
	res := merge(batches, planned, opts)
	res.Report.Read = len(toLoad)
	res.Report.Cached = len(sources) - len(toLoad)
	res.Report.Elapsed = time.Since(start)
	return res, nil
}

// merge builds the catalog and the report from the batches.
func merge(batches []*Batch, planned *planProblems, opts *Options) *Result {
	sort.SliceStable(batches, func(i, j int) bool { return batches[i].ID < batches[j].ID })
	res := &Result{Batches: batches}
	rep := &res.Report
	rep.Skipped = append(rep.Skipped, planned.skipped...)
	rep.Warnings = append(rep.Warnings, planned.warnings...)
	var all []card.Card
	for _, b := range batches {
		if b.Ignored {
			rep.Ignored++
			continue
		}
		rep.Sources = append(rep.Sources, b.Info)
		rep.Skipped = append(rep.Skipped, b.Skipped...)
		rep.Warnings = append(rep.Warnings, b.Warnings...)
		if b.Info.Kind == KindPlugin {
			rep.Counts.Plugins++
		}
		rep.Counts.Add(b.Cards)
		all = append(all, b.Cards...)
	}
	if opts.Hold != nil {
		all, res.Held = opts.Hold(all)
		for _, c := range res.Held {
			rep.Held = append(rep.Held, c.Name)
		}
		sort.Strings(rep.Held)
	}
	res.Catalog, rep.Catalog = card.NewCatalog(all)
	res.Cards = res.Catalog.Cards()
	sortSkipped(rep.Skipped)
	sortSkipped(rep.Warnings)
	if rep.Skipped == nil {
		rep.Skipped = []Skipped{}
	}
	if rep.Sources == nil {
		rep.Sources = []Info{}
	}
	return res
}

func sortSkipped(s []Skipped) {
	sort.SliceStable(s, func(i, j int) bool {
		if s[i].Path != s[j].Path {
			return s[i].Path < s[j].Path
		}
		if s[i].Line != s[j].Line {
			return s[i].Line < s[j].Line
		}
		return s[i].Reason < s[j].Reason
	})
}

// planProblems are what planning found wrong.
type planProblems struct {
	skipped, warnings []Skipped
}

func (p *planProblems) add(probs []plugin.Problem) {
	for _, pr := range probs {
		s := Skipped{Path: pr.Path, Line: pr.Line, Reason: pr.Reason}
		if pr.Skipped {
			p.skipped = append(p.skipped, s)
		} else {
			p.warnings = append(p.warnings, s)
		}
	}
}

func (p *planProblems) addMCP(probs []mcpconfig.Problem) {
	for _, pr := range probs {
		s := Skipped{Path: pr.Path, Line: pr.Line, Reason: pr.Reason}
		if pr.Skipped {
			p.skipped = append(p.skipped, s)
		} else {
			p.warnings = append(p.warnings, s)
		}
	}
}

// Plan finds the sources opts points at without reading them: folders
// are walked and manifests, marketplaces and MCP configs (small files) are
// parsed. Sources are returned in ID order without duplicates, with what
// was skipped or repaired on the way.
func Plan(ctx context.Context, opts *Options) (sources []Source, skipped, warnings []Skipped) {
	if opts == nil {
		opts = &Options{}
	}
	p := &planner{opts: opts, seen: map[string]bool{}, probs: &planProblems{}}
	for _, r := range opts.Roots {
		if ctx.Err() != nil {
			break
		}
		p.root(r)
	}
	for _, f := range opts.ToolFiles {
		p.add(&toolFileSource{path: abs(f), explicit: true})
	}
	for _, f := range opts.MCPConfigs {
		p.mcpConfig(abs(f), nil, false)
	}
	sort.Slice(p.sources, func(i, j int) bool { return p.sources[i].ID() < p.sources[j].ID() })
	return p.sources, p.probs.skipped, p.probs.warnings
}

type planner struct {
	opts    *Options
	sources []Source
	seen    map[string]bool
	probs   *planProblems
}

func (p *planner) add(s Source) {
	if p.seen[s.ID()] {
		return
	}
	p.seen[s.ID()] = true
	p.sources = append(p.sources, s)
}

func (p *planner) skip(path, reason string) {
	p.probs.skipped = append(p.probs.skipped, Skipped{Path: path, Reason: reason})
}

func abs(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

func (p *planner) root(r Root) {
	path := abs(r.Path)
	fi, err := os.Stat(path)
	if err != nil {
		if !r.Optional || !errors.Is(err, os.ErrNotExist) {
			p.skip(path, fmt.Sprintf("cannot scan: %v", err))
		}
		return
	}
	if !fi.IsDir() {
		p.file(path, r)
		return
	}
	l, err := plugin.Scan(path, &plugin.ScanOptions{ClaudeDir: r.ClaudeDir})
	if err != nil {
		p.skip(path, err.Error())
		return
	}
	p.layout(l, r)
}

// file classifies a root that is a file.
func (p *planner) file(path string, r Root) {
	base := filepath.Base(path)
	switch {
	case base == "SKILL.md":
		l, err := plugin.Scan(path, nil)
		if err != nil {
			p.skip(path, err.Error())
			return
		}
		p.layout(l, r)
	case (base == "plugin.json" || base == "marketplace.json") && filepath.Base(filepath.Dir(path)) == ".claude-plugin":
		p.root(Root{Path: filepath.Dir(filepath.Dir(path)), Scope: r.Scope})
	case strings.EqualFold(filepath.Ext(path), ".json") && isMCPConfig(path):
		p.mcpConfig(path, nil, false)
	case isDataFile(path):
		p.add(&toolFileSource{path: path, explicit: true})
	default:
		p.skip(path, "not a plugin, skill, tool file or MCP config")
	}
}

func isDataFile(path string) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".json", ".yaml", ".yml", ".jsonl", ".ndjson":
		return true
	}
	return false
}

// isMCPConfig reports whether a JSON file's top level holds a server list.
func isMCPConfig(path string) bool {
	data, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(data, &top) != nil {
		// JSON with comments: let the MCP parser judge by name.
		switch filepath.Base(path) {
		case ".mcp.json", "mcp.json", "claude_desktop_config.json":
			return true
		}
		return false
	}
	_, a := top["mcpServers"]
	_, b := top["servers"]
	return a || b
}

func (p *planner) layout(l *plugin.Layout, r Root) {
	p.probs.add(l.Problems)
	scope := r.Scope
	if scope == "" {
		scope = filepath.Base(l.Root)
	}
	for _, pl := range l.Plugins {
		p.add(&pluginSource{p: pl, getenv: p.getenv()})
		if p.opts.PluginMCP {
			vars := map[string]string{"CLAUDE_PLUGIN_ROOT": pl.Dir}
			switch {
			case pl.MCPConfig != "":
				p.mcpConfig(pl.MCPConfig, vars, true)
			case len(pl.InlineMCP) > 0:
				p.mcpInline(pl, vars)
			}
		}
	}
	for _, m := range l.Marketplaces {
		p.add(&marketplaceSource{m: m})
	}
	if len(l.Agents)+len(l.Commands)+len(l.Skills) > 0 {
		p.add(&looseSource{root: l.Root, scope: scope, agents: l.Agents, commands: l.Commands, skills: l.Skills})
	}
	for _, f := range l.MCPConfigs {
		p.mcpConfig(f, nil, false)
	}
	for _, f := range l.DataFiles {
		p.add(&toolFileSource{path: f})
	}
}

func (p *planner) getenv() func(string) string {
	if p.opts.Getenv != nil {
		return p.opts.Getenv
	}
	return os.Getenv
}

func (p *planner) vars(extra map[string]string) map[string]string {
	v := map[string]string{}
	if p.opts.WorkDir != "" {
		v["workspaceFolder"] = p.opts.WorkDir
	}
	if p.opts.Home != "" {
		v["userHome"] = p.opts.Home
	}
	for k, x := range extra {
		v[k] = x
	}
	return v
}

func (p *planner) mcpOptions() *mcp.Options {
	return &mcp.Options{Timeout: p.opts.MCPTimeout, Environ: p.opts.Environ}
}

// mcpConfig plans one source per server of a config file.
func (p *planner) mcpConfig(path string, vars map[string]string, fromPlugin bool) {
	servers, probs, err := mcpconfig.Load(path, &mcpconfig.Options{Getenv: p.getenv(), Vars: p.vars(vars)})
	p.probs.addMCP(probs)
	if err != nil {
		p.skip(path, err.Error())
		return
	}
	for _, s := range servers {
		p.add(&mcpSource{s: s, opts: p.mcpOptions()})
	}
}

// mcpInline plans the servers of a manifest's inline mcpServers object.
func (p *planner) mcpInline(pl *plugin.Plugin, vars map[string]string) {
	data, _ := json.Marshal(map[string]json.RawMessage{"mcpServers": pl.InlineMCP})
	servers, probs, err := mcpconfig.Parse(pl.ManifestPath, data, &mcpconfig.Options{Getenv: p.getenv(), Vars: p.vars(vars)})
	p.probs.addMCP(probs)
	if err != nil {
		p.skip(pl.ManifestPath, err.Error())
		return
	}
	for _, s := range servers {
		s.File = pl.ManifestPath
		p.add(&mcpSource{s: s, opts: p.mcpOptions()})
	}
}
