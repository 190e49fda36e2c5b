package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/capbroker/capbroker/clientconfig"
	"github.com/capbroker/capbroker/index"
	"github.com/capbroker/capbroker/internal/progress"
	"github.com/capbroker/capbroker/source"
	srcmcp "github.com/capbroker/capbroker/source/mcp"
	"github.com/capbroker/capbroker/source/trust"
)

// discoveryFlags say where to discover capabilities and how to cache them.
// Commands that load the user's capabilities share them.
type discoveryFlags struct {
	roots      []string
	toolFiles  []string
	mcpConfigs []string
	config     string
	noDefaults bool
	pluginMCP  bool
	timeout    time.Duration
	indexDir   string
	noIndex    bool
	refresh    bool
}

// register adds the discovery flags, tool files as --tools (with the
// former --tool-file as a hidden alias that warns once).
func (f *discoveryFlags) register(cmd *cobra.Command) {
	f.registerPlaces(cmd)
	fl := cmd.Flags()
	fl.StringArrayVar(&f.toolFiles, "tools", nil, "tool definition file (JSON, YAML, JSONL); repeatable; replaces the default places")
	alias(fl, "tool-file", "tools")
}

// registerPlaces adds every discovery flag but the tool files, for
// commands whose own --tools replaces discovery (see catalogFlags).
func (f *discoveryFlags) registerPlaces(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringArrayVar(&f.roots, "root", nil, "folder or file to scan as whatever it holds (plugins, a marketplace, a plugin, skills, a .claude folder, tool files, an MCP config); repeatable; replaces the default places")
	fl.StringArrayVar(&f.mcpConfigs, "mcp-config", nil, "MCP client config (.mcp.json, claude_desktop_config.json, VS Code mcp.json) whose servers are connected; repeatable; replaces the default places")
	fl.StringVar(&f.config, "config", "", "config file (default ./"+source.ConfigName+" when present)")
	fl.BoolVar(&f.noDefaults, "no-defaults", false, "skip the default places (./.claude, ./.mcp.json, ~/.claude)")
	fl.BoolVar(&f.pluginMCP, "plugin-mcp", false, "also connect the MCP servers plugins declare in their .mcp.json")
	fl.DurationVar(&f.timeout, "start-timeout", 0, "time limit to start an MCP server and list its tools (default "+srcmcp.DefaultTimeout.String()+", as the gateway's; mcp_timeout in capbroker.yaml)")
	alias(fl, "timeout", "start-timeout")
	fl.StringVar(&f.indexDir, "index", "", "index folder (default $CAPBROKER_INDEX, else $XDG_CACHE_HOME/capbroker, else ~/.cache/capbroker)")
	fl.BoolVar(&f.noIndex, "no-index", false, "read every source and do not use or write the index")
	fl.BoolVar(&f.refresh, "refresh", false, "read every source again and rebuild the index")
}

// sourceOptions turns the flags, the config file and the defaults into
// discovery options, and returns the index folder to use.
//
// Explicit --root, --tools or --mcp-config flags name exactly what is
// scanned. Otherwise the config file's places are scanned, plus the
// default places unless the config says "defaults: false" or --no-defaults
// is given.
func (m *Main) sourceOptions(f *discoveryFlags) (*source.Options, string, error) {
	opts, dir, _, err := m.sourceOptionsConfig(f)
	return opts, dir, err
}

// loadedConfig is the capbroker.yaml a command read, and where.
type loadedConfig struct {
	*source.Config
	path string
}

// sourceOptionsConfig is sourceOptions, also returning the config file
// read (nil when none).
func (m *Main) sourceOptionsConfig(f *discoveryFlags) (*source.Options, string, *loadedConfig, error) {
	home := m.Getenv("HOME")
	wd, err := os.Getwd()
	if err != nil {
		return nil, "", nil, fmt.Errorf("finding the working folder: %w", err)
	}
	opts := &source.Options{Getenv: m.Getenv, Home: home, WorkDir: wd, MCPTimeout: f.timeout, PluginMCP: f.pluginMCP, Tokens: m.tokenStore()}
	indexDir := f.indexDir

	cfg, cfgPath, err := m.loadConfig(f.config, wd)
	if err != nil {
		return nil, "", nil, err
	}
	if cfg != nil && indexDir == "" {
		indexDir = cfg.IndexDir(home)
	}
	opts.Trust = m.trustPolicy().Check

	explicit := len(f.roots)+len(f.toolFiles)+len(f.mcpConfigs) > 0
	switch {
	case explicit:
		for _, r := range f.roots {
			opts.Roots = append(opts.Roots, source.Root{Path: r})
		}
		opts.ToolFiles = f.toolFiles
		opts.MCPConfigs = f.mcpConfigs
	default:
		if cfg != nil {
			cfg.Apply(opts, home)
		}
		if !f.noDefaults && (cfg == nil || cfg.UseDefaults()) {
			opts.Roots = append(opts.Roots, source.DefaultRoots(clientconfig.ClaudeDir(clientconfig.Env{Home: home, Getenv: m.Getenv}), wd)...)
		}
	}
	if f.timeout > 0 {
		opts.MCPTimeout = f.timeout
	}
	if f.pluginMCP {
		opts.PluginMCP = true
	}
	if indexDir == "" {
		indexDir = index.DefaultDir(m.Getenv)
	}
	if cfg == nil {
		return opts, indexDir, nil, nil
	}
	return opts, indexDir, &loadedConfig{cfg, cfgPath}, nil
}

// configPath returns the config file to read: the one named (--config),
// else ./capbroker.yaml when present (project is then true: what a
// repository's own config names runs only once approved), else "".
func configPath(named, wd string) (path string, project bool) {
	if named != "" {
		return named, false
	}
	if p := filepath.Join(wd, source.ConfigName); fileExists(p) {
		return p, true
	}
	return "", false
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// discover runs discovery as the flags say, through the index unless
// --no-index, showing progress on stderr when it is a terminal. It
// returns the result and the index (nil with --no-index).
func (m *Main) discover(ctx context.Context, f *discoveryFlags) (*source.Result, *index.Index, error) {
	res, ix, _, err := m.discoverSet(ctx, f)
	return res, ix, err
}

// discoverSet is discover, also returning the places read (see
// [Main.sources]).
func (m *Main) discoverSet(ctx context.Context, f *discoveryFlags) (*source.Result, *index.Index, *sourceSet, error) {
	set, err := m.sources(ctx, f)
	if err != nil {
		return nil, nil, nil, err
	}
	res, ix, err := m.discoverWith(ctx, f, set)
	return res, ix, set, err
}

func (m *Main) discoverWith(ctx context.Context, f *discoveryFlags, set *sourceSet) (*source.Result, *index.Index, error) {
	opts, dir := set.opts, set.index
	if m.StderrTerminal {
		p := m.progress()
		opts.Progress = func(pr source.Progress) { p.Count("discovering", pr.Done, pr.Total, pr.Source) }
		defer p.Done()
	}
	if f.noIndex {
		res, err := source.Discover(ctx, opts)
		return res, nil, err
	}
	ix, err := index.Open(dir, &index.Options{Refresh: f.refresh, FailMemory: failMemory})
	if err != nil {
		return nil, nil, err
	}
	res, err := ix.Discover(ctx, opts)
	return res, ix, err
}

// failMemory is how long the CLI remembers that an MCP server failed, so
// that the next runs do not wait for its timeout again.
const failMemory = 2 * time.Minute

// noteFailedServers says, once per run, which MCP servers failed: in this
// run (remembered for failMemory) or in an earlier one (not asked
// again yet), and how to retry now.
func (m *Main) noteFailedServers(r *source.Report) {
	if m.notedFailed {
		return
	}
	for _, s := range r.Sources {
		if s.Kind != source.KindMCP || s.Error == "" {
			continue
		}
		m.notedFailed = true
		if !s.RetryAfter.IsZero() {
			fmt.Fprintf(m.Stderr, "note: MCP server %s failed in an earlier run and is not asked again before %s (%s); --refresh asks it now\n",
				s.Name, s.RetryAfter.Local().Format(time.TimeOnly), firstLine(s.Error, 120))
		} else {
			fmt.Fprintf(m.Stderr, "note: MCP server %s failed (%s); runs in the next %s will not wait for it again (--refresh asks it anyway)\n",
				s.Name, firstLine(s.Error, 120), failMemory)
		}
	}
}

// progress is the progress line on stderr, shown only when stderr is a
// terminal.
func (m *Main) progress() *progress.Reporter { return progress.New(m.rawStderr(), m.StderrTerminal) }

// discoverOutput is what discover --json prints.
type discoverOutput struct {
	source.Report
	// HeldWhy says why the held tools are held, one line per kind.
	HeldWhy []string `json:"held_why,omitempty"`
	// Places are every place looked at, with what was there.
	Places []string   `json:"places"`
	Index  *indexInfo `json:"index,omitempty"`
}

type indexInfo struct {
	Dir    string `json:"dir"`
	Status string `json:"status"`
}

func (m *Main) newDiscoverCmd() *cobra.Command {
	var f discoveryFlags
	var asJSON, verbose bool
	cmd := &cobra.Command{
		Use: "discover [--root DIR]... [--refresh] [--json]",
		Example: `  capbroker discover
  capbroker discover --root ~/.claude/plugins --refresh
  capbroker discover --mcp-config .mcp.json --tools examples/catalog/calendar.json --json`,
		Short: "Find every capability: plugins, skills, agents, commands, tool files, MCP servers",
		Long: `discover scans the places capabilities live and prints each source with its
counts, what was skipped and why. Without --root, --tools or --mcp-config it
scans the config file's places (./capbroker.yaml) and the default places: the
project's ./.claude and ./.mcp.json, and ~/.claude/{agents,commands,skills,plugins}.

Results are cached in an index: a later run reads only the sources that changed.
MCP tools whose description or schema changed since they were approved are held
back until "capbroker approve"; so is every MCP tool when the pins file
(pins.json in the index folder) was deleted or is corrupt.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			res, ix, set, err := m.discoverSet(cmd.Context(), &f)
			if err != nil {
				return err
			}
			out := discoverOutput{Report: res.Report, HeldWhy: heldSummary(res.Held), Places: set.looked}
			if ix != nil {
				out.Index = &indexInfo{Dir: ix.Dir(), Status: ix.Status().String()}
			}
			if asJSON {
				return writeJSON(m.Stdout, out)
			}
			m.printReport(out, res.Catalog.Len(), verbose)
			if ix != nil {
				m.noteFailedServers(&res.Report)
			}
			return nil
		},
	}
	f.register(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	cmd.Flags().BoolVarP(&verbose, "verbose", "v", false, "also list warnings and catalog renames")
	return cmd
}

func (m *Main) printReport(out discoverOutput, catalogLen int, verbose bool) {
	r := out.Report
	tw := table(m.Stdout)
	fmt.Fprintln(tw, "SOURCE\tKIND\tAGENTS\tCOMMANDS\tSKILLS\tTOOLS\tNOTE")
	for _, s := range r.Sources {
		var note []string
		if s.Cached {
			note = append(note, "cached")
		}
		if s.Kind == source.KindMarketplace {
			note = append(note, fmt.Sprintf("%d local plugins", s.Counts.Plugins))
		}
		if s.Servers > 0 {
			note = append(note, fmt.Sprintf("%d MCP servers declared", s.Servers))
		}
		if s.Error != "" {
			note = append(note, "error: "+firstLine(s.Error, 80))
			if !s.RetryAfter.IsZero() {
				note = append(note, fmt.Sprintf("remembered from an earlier run, not asked again before %s (--refresh asks now)", s.RetryAfter.Local().Format(time.TimeOnly)))
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%s\n", s.Name, s.Kind, s.Counts.Agents, s.Counts.Commands, s.Counts.Skills, s.Counts.Tools, strings.Join(note, "; "))
	}
	tw.Flush()
	c := r.Counts
	fmt.Fprintf(m.Stdout, "\ntotal: %d plugins, %d agents, %d commands, %d skills, %d tools; %d cards in the catalog\n",
		c.Plugins, c.Agents, c.Commands, c.Skills, c.Tools, catalogLen)
	fmt.Fprintf(m.Stdout, "%d sources read, %d from the index, in %s\n", r.Read, r.Cached, r.Elapsed.Round(time.Millisecond))
	if out.Index != nil {
		fmt.Fprintf(m.Stdout, "index: %s (%s)\n", out.Index.Dir, out.Index.Status)
	}
	if r.Ignored > 0 {
		fmt.Fprintf(m.Stdout, "%d data files held no tools and were ignored\n", r.Ignored)
	}
	if len(r.Skipped) > 0 {
		fmt.Fprintf(m.Stdout, "\nskipped (%d):\n", len(r.Skipped))
		for _, s := range r.Skipped {
			fmt.Fprintf(m.Stdout, "  %s\n", s)
		}
	}
	if len(r.Unapproved) > 0 {
		fmt.Fprintf(m.Stdout, "\nproject MCP servers not started until approved (%d):\n", len(r.Unapproved))
		for _, u := range r.Unapproved {
			fmt.Fprintf(m.Stdout, "  %s\n", u)
		}
		fmt.Fprintf(m.Stdout, "  review and approve them with: %s\n", trust.Fix)
	}
	if len(r.Held) > 0 {
		fmt.Fprintf(m.Stdout, "\nheld until approved (%d): %s\n", len(r.Held), strings.Join(r.Held, ", "))
		for _, line := range out.HeldWhy {
			fmt.Fprintf(m.Stdout, "  %s\n", line)
		}
	}
	if len(out.Places) > 0 {
		fmt.Fprintf(m.Stdout, "\nplaces read:\n")
		for _, p := range out.Places {
			fmt.Fprintf(m.Stdout, "  %s\n", p)
		}
	}
	if verbose {
		if len(r.Warnings) > 0 {
			fmt.Fprintf(m.Stdout, "\nwarnings (%d):\n", len(r.Warnings))
			for _, s := range r.Warnings {
				fmt.Fprintf(m.Stdout, "  %s\n", s)
			}
		}
		if len(r.Catalog) > 0 {
			fmt.Fprintf(m.Stdout, "\ncatalog (%d):\n", len(r.Catalog))
			for _, w := range r.Catalog {
				fmt.Fprintf(m.Stdout, "  %s\n", w)
			}
		}
	} else if n := len(r.Warnings) + len(r.Catalog); n > 0 {
		fmt.Fprintf(m.Stdout, "%d warnings (files repaired, names changed); --verbose lists them\n", n)
	}
}
