package source

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/capbroker/capbroker/internal/safefile"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/clientconfig"
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
	// Servers are MCP servers given as they are, connected like those of
	// MCPConfigs (Claude Code's ~/.claude.json, whose two scopes its
	// reader splits, gives its servers this way).
	Servers []mcpconfig.Server
	// KeepServer, when set, decides which of the MCP servers found are
	// planned: one it refuses is left out silently (the caller chose
	// another definition of its name, or it runs capbroker itself).
	KeepServer func(s mcpconfig.Server) bool
	// ProjectMCPConfigs are MCP config files of the project (./.mcp.json,
	// ./.vscode/mcp.json, what a project's capbroker.yaml names): their
	// servers are connected only when Trust approves them.
	ProjectMCPConfigs []string
	// Trust decides whether a server from a project-scoped place
	// (ProjectMCPConfigs, a Root with Project set) may be started or
	// connected; reason says why not. nil approves none of them. A server
	// left out is listed in the report's Unapproved, not connected and
	// has no cards.
	Trust func(s mcpconfig.Server) (ok bool, reason string)
	// InheritEnv passes the whole environment (Environ) to every stdio
	// MCP server, not only the safe set and what its config names.
	InheritEnv bool
	// Tokens holds the OAuth logins of remote MCP servers (capbroker
	// login); nil means none.
	Tokens *mcp.TokenStore
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
	// Project marks a place inside the project (a cloned repository):
	// the MCP servers found there run only when [Options.Trust] approves
	// them. Skills, agents, commands and tool files are read as text.
	Project bool `yaml:"-" json:"project,omitempty"`
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
	pl := Plan(ctx, opts)
	sources := pl.Sources
	planned := &planProblems{skipped: pl.Skipped, warnings: pl.Warnings}
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
	res.Report.Unapproved = pl.Unapproved
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

// Planned is what [Plan] found.
type Planned struct {
	// Sources are in ID order, without duplicates.
	Sources []Source
	// Skipped and Warnings are what was left out or repaired on the way.
	Skipped, Warnings []Skipped
	// Unapproved are the project's MCP servers [Options.Trust] did not
	// approve; they are not among Sources.
	Unapproved []Unapproved
}

// Unapproved is a project MCP server left out until approved.
type Unapproved struct {
	// Server is the definition (its ${VAR}s expanded: do not print it;
	// CommandLine is the printable form).
	Server mcpconfig.Server `json:"-"`
	Name   string           `json:"name"`
	Path   string           `json:"path"`
	Line   int              `json:"line,omitempty"`
	// CommandLine is what it would run, or its URL, secrets as ${VAR}.
	CommandLine string `json:"command_line"`
	// Reason says why it is not approved.
	Reason string `json:"reason"`
}

func (u Unapproved) String() string {
	where := u.Path
	if u.Line > 0 {
		where = fmt.Sprintf("%s:%d", u.Path, u.Line)
	}
	return fmt.Sprintf("%s: server %s (%s): %s", where, u.Name, u.CommandLine, u.Reason)
}

// Plan finds the sources opts points at without reading them: folders
// are walked and manifests, marketplaces and MCP configs (small files) are
// parsed. Nothing is started: project servers that opts.Trust does not
// approve are returned as Unapproved.
func Plan(ctx context.Context, opts *Options) *Planned {
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
	for _, f := range opts.ProjectMCPConfigs {
		if fileExists(f) {
			p.mcpConfig(abs(f), nil, true)
		}
	}
	for _, s := range opts.Servers {
		p.addServer(s, false)
	}
	sort.Slice(p.sources, func(i, j int) bool { return p.sources[i].ID() < p.sources[j].ID() })
	sort.SliceStable(p.unapproved, func(i, j int) bool {
		a, b := p.unapproved[i], p.unapproved[j]
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		return a.Name < b.Name
	})
	return &Planned{Sources: p.sources, Skipped: p.probs.skipped, Warnings: p.probs.warnings, Unapproved: p.unapproved}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

type planner struct {
	opts       *Options
	sources    []Source
	seen       map[string]bool
	probs      *planProblems
	unapproved []Unapproved
	held       map[string]bool // IDs of unapproved servers
}

// addServer plans an MCP server; one from the project needs Trust's
// approval first.
func (p *planner) addServer(s mcpconfig.Server, project bool) {
	src := &mcpSource{s: s, opts: p.mcpOptions()}
	if project {
		ok, reason := false, "defined in the project and not approved"
		if p.opts.Trust != nil {
			ok, reason = p.opts.Trust(s)
		}
		if !ok {
			if p.held == nil {
				p.held = map[string]bool{}
			}
			if !p.held[src.ID()] && !p.seen[src.ID()] {
				p.held[src.ID()] = true
				p.unapproved = append(p.unapproved, Unapproved{Server: s, Name: s.Name, Path: s.File, Line: s.Line,
					CommandLine: s.CommandLine(), Reason: reason})
			}
			return
		}
	}
	if p.opts.KeepServer != nil && !p.opts.KeepServer(s) {
		return
	}
	p.add(src)
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
		p.root(Root{Path: filepath.Dir(filepath.Dir(path)), Scope: r.Scope, Project: r.Project})
	case strings.EqualFold(filepath.Ext(path), ".json") && isMCPConfig(path):
		p.mcpConfig(path, nil, r.Project)
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
	data, err := safefile.ReadFile(path, safefile.MaxConfig)
	if err != nil {
		return false
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(data, &top) != nil {
		// JSON with comments: let the MCP parser judge by name.
		return clientconfig.IsConfigName(path)
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
				p.mcpConfig(pl.MCPConfig, vars, r.Project)
			case len(pl.InlineMCP) > 0:
				p.mcpInline(pl, vars, r.Project)
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
		p.mcpConfig(f, nil, r.Project)
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
	return &mcp.Options{Timeout: p.opts.MCPTimeout, Environ: p.opts.Environ, InheritEnv: p.opts.InheritEnv, Tokens: p.opts.Tokens}
}

// mcpConfig plans one source per server of a config file; those of a
// project file need approval.
func (p *planner) mcpConfig(path string, vars map[string]string, project bool) {
	servers, probs, err := mcpconfig.Load(path, &mcpconfig.Options{Getenv: p.getenv(), Vars: p.vars(vars)})
	p.probs.addMCP(probs)
	if err != nil {
		p.skip(path, err.Error())
		return
	}
	for _, s := range servers {
		p.addServer(s, project)
	}
}

// mcpInline plans the servers of a manifest's inline mcpServers object.
func (p *planner) mcpInline(pl *plugin.Plugin, vars map[string]string, project bool) {
	data, _ := json.Marshal(map[string]json.RawMessage{"mcpServers": pl.InlineMCP})
	servers, probs, err := mcpconfig.Parse(pl.ManifestPath, data, &mcpconfig.Options{Getenv: p.getenv(), Vars: p.vars(vars)})
	p.probs.addMCP(probs)
	if err != nil {
		p.skip(pl.ManifestPath, err.Error())
		return
	}
	for _, s := range servers {
		s.File = pl.ManifestPath
		p.addServer(s, project)
	}
}
