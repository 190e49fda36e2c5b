package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/clientconfig"
	"github.com/capbroker/capbroker/gateway"
	"github.com/capbroker/capbroker/route"
	"github.com/capbroker/capbroker/source"
)

// routingFlags are the flags of route and capabilities: where to discover
// the plugin agents and commands (the same flags as discover), and how to
// score and cache them.
type routingFlags struct {
	discoveryFlags
	routeFlags
	asJSON bool
}

func (f *routingFlags) register(cmd *cobra.Command) {
	f.discoveryFlags.register(cmd)
	f.routeFlags.register(cmd)
	cmd.Flags().BoolVar(&f.asJSON, "json", false, "print JSON")
}

// routeFlags say how to score and cache the capability map; serve shares
// them with route and capabilities.
type routeFlags struct {
	taxonomy      string
	cache         string
	maxAge        time.Duration
	minConfidence string
}

func (f *routeFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.taxonomy, "taxonomy", "", "YAML file that extends or replaces the capability taxonomy (see capabilities --print-taxonomy)")
	fl.StringVar(&f.cache, "cache", "", "capability cache file (default <user cache dir>/capbroker/route-<places hash>.json; \"none\" keeps it in memory)")
	fl.DurationVar(&f.maxAge, "max-age", route.DefaultMaxAge, "how long a scan stays fresh")
	fl.StringVar(&f.minConfidence, "min-confidence", "Low", "lowest confidence delegated to: Low, Medium or High")
}

// cacheDir returns capbroker's cache directory, or "" when the
// environment names none.
func (m *Main) cacheDir() string {
	if d := m.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "capbroker")
	}
	if h := m.Getenv("HOME"); h != "" {
		return filepath.Join(h, ".cache", "capbroker")
	}
	return ""
}

// placesKey identifies the places the discovery flags scan, so that a
// capability cache written for other places is not reused.
func (m *Main) placesKey(f *discoveryFlags) (string, error) {
	var b strings.Builder
	list := func(label string, paths []string) error {
		for _, p := range paths {
			a, err := filepath.Abs(p)
			if err != nil {
				return fmt.Errorf("%s %s: %w", label, p, err)
			}
			fmt.Fprintf(&b, "%s %s\n", label, a)
		}
		return nil
	}
	if err := list("root", f.roots); err != nil {
		return "", err
	}
	if err := list("tool-file", f.toolFiles); err != nil {
		return "", err
	}
	if err := list("mcp-config", f.mcpConfigs); err != nil {
		return "", err
	}
	if len(f.roots)+len(f.toolFiles)+len(f.mcpConfigs) == 0 {
		// The default places depend on the working folder, the home
		// folder and the config file.
		wd, err := os.Getwd()
		if err != nil {
			return "", fmt.Errorf("finding the working folder: %w", err)
		}
		fmt.Fprintf(&b, "defaults %v\nworkdir %s\nhome %s\nconfig %s\n", !f.noDefaults, wd, m.Getenv("HOME"), f.config)
	}
	if f.pluginMCP {
		b.WriteString("plugin-mcp\n")
	}
	return b.String(), nil
}

// routePlaces lists the folders and files routing scans, for the
// cache's stamp (route.FolderStamp): the named roots, tool files and MCP
// configs, or, when none is named, ./.claude, ~/.claude and the config
// file (with the roots it names).
func (m *Main) routePlaces(f *discoveryFlags) []string {
	places := slices.Concat(f.roots, f.toolFiles, f.mcpConfigs)
	if len(places) > 0 {
		return places
	}
	wd, err := os.Getwd()
	if err == nil {
		places = append(places, filepath.Join(wd, ".claude"))
	}
	if home := m.Getenv("HOME"); home != "" {
		places = append(places, filepath.Join(home, ".claude"))
	}
	if path, _ := configPath(f.config, wd); path != "" {
		places = append(places, path)
		if cfg, err := source.LoadConfig(path); err == nil {
			for _, r := range cfg.Roots {
				p := r.Path
				if !filepath.IsAbs(p) {
					p = filepath.Join(filepath.Dir(path), p)
				}
				places = append(places, p)
			}
		}
	}
	return places
}

// routingCards discovers the cards to route between, in the places the
// flags name, through the card index (only changed sources are read
// again). Routing uses the plugin agents and commands and ignores the
// rest. A --root that does not exist is an error.
func (m *Main) routingCards(ctx context.Context, f *discoveryFlags) ([]card.Card, error) {
	for _, r := range f.roots {
		if _, err := os.Stat(r); err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			return nil, fmt.Errorf("reading %s: %w", r, err)
		}
	}
	res, _, err := m.discover(ctx, f)
	if err != nil {
		return nil, err
	}
	m.noteSkipped(res.Report.Skipped)
	m.noteUnapproved(res.Report.Unapproved)
	m.noteFailedServers(&res.Report)
	return res.Cards, nil
}

// routing builds the router and its cache from the flags: the cache scans
// the places df names. gaps may be nil. first, when set, is given to the
// cache's first scan instead of discovering again (serve passes the cards
// it has just discovered).
func (m *Main) routing(df *discoveryFlags, f *routeFlags, gaps route.GapRecorder, first []card.Card) (*route.Router, *route.Cache, error) {
	if f.maxAge <= 0 {
		return nil, nil, usageError{fmt.Errorf("--max-age %v: want a positive duration", f.maxAge)}
	}
	var minConf route.Confidence
	switch strings.ToLower(f.minConfidence) {
	case "low", "":
		minConf = route.Low
	case "medium":
		minConf = route.Medium
	case "high":
		minConf = route.High
	default:
		return nil, nil, usageError{fmt.Errorf("--min-confidence %q: want Low, Medium or High", f.minConfidence)}
	}
	tax := route.Default()
	if f.taxonomy != "" {
		var err error
		if tax, err = route.LoadTaxonomy(f.taxonomy, nil); err != nil {
			return nil, nil, err
		}
	}
	r := route.New(tax, &route.Options{MinConfidence: minConf})

	key, err := m.placesKey(df)
	if err != nil {
		return nil, nil, err
	}
	path := f.cache
	switch {
	case path == "none":
		path = ""
	case path == "" && m.cacheDir() != "":
		sum := sha256.Sum256([]byte(key))
		path = filepath.Join(m.cacheDir(), "route-"+hex.EncodeToString(sum[:6])+".json")
	}
	flags := *df
	scan := func(ctx context.Context) ([]card.Card, error) {
		if first != nil {
			cards := first
			first = nil
			return cards, nil
		}
		return m.routingCards(ctx, &flags)
	}
	places := m.routePlaces(df)
	stamp := func() string { return route.FolderStamp(places) }
	c := route.NewCache(r, scan, &route.CacheOptions{MaxAge: f.maxAge, Path: path, Key: key, Gaps: gaps, Stamp: stamp})
	return r, c, nil
}

func (m *Main) newRouteCmd() *cobra.Command {
	var (
		rf         routingFlags
		phase      string
		capability string
		project    string
		state      string
		gapLog     string
		noFlow     bool
	)
	cmd := &cobra.Command{
		Use:   `route ["<task>"]`,
		Short: "Pick the installed plugin agent for a task or workflow phase, and say why",
		Long: `route maps a task or a workflow phase (DISCUSS, PLAN, EXECUTE, VERIFY) to a
capability (requirements-gathering, code-review, ...) and delegates it to the
best installed plugin agent: project-type match first, then exact keyword
matches, then agents over commands. With no match it names the built-in
default, logs the gap (JSON, and a "## Capability Warnings" section in the
project's FLOW.md) and suggests what kind of plugin to install.

Plugins are found the way capbroker discover finds them: in the --root folders
(plugins folders, marketplaces, single plugins, .claude folders), else in the
config file's places and the default ones (./.claude, ~/.claude). The scan is
cached for --max-age (default 24h) and redone on --refresh or when a
capability has no match.`,
		Example: `  capbroker route --phase EXECUTE --project . "add the CSV export"
  capbroker route --root ~/.claude/plugins --json "review the pull request"
  capbroker route --capability code-review --state none`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usageError{fmt.Errorf("route takes one task in quotes (got %d arguments); see capbroker route --help", len(args))}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			task := ""
			if len(args) == 1 {
				task = args[0]
			}
			if strings.TrimSpace(task+phase+capability) == "" {
				return usageError{errors.New(`route needs a task, --phase or --capability; see capbroker route --help`)}
			}
			ctx := cmd.Context()
			if project == "" {
				project = "."
			}
			gaps := &route.GapLog{}
			if noFlow {
				if cmd.Flags().Changed("state") {
					return usageError{errors.New("--no-flow and --state name two things for the state file; give one")}
				}
			} else if cmd.Flags().Changed("state") {
				if state != "none" {
					gaps.StatePath = state
				}
			} else {
				gaps.StatePath = filepath.Join(project, "FLOW.md")
			}
			if cmd.Flags().Changed("gap-log") {
				if gapLog != "none" {
					gaps.Path = gapLog
				}
			} else if d := m.cacheDir(); d != "" {
				gaps.Path = filepath.Join(d, "route-gaps.json")
			}
			// What the state file held, to say on stderr whether route
			// wrote it.
			var flowBefore []byte
			flowExisted := false
			if gaps.StatePath != "" {
				if b, err := os.ReadFile(gaps.StatePath); err == nil {
					flowBefore, flowExisted = b, true
				}
			}
			r, cache, err := m.routing(&rf.discoveryFlags, &rf.routeFlags, gaps, nil)
			if err != nil {
				return err
			}
			tax := r.Taxonomy()
			if phase != "" && tax.Phase(phase) == nil {
				return usageError{fmt.Errorf("--phase %q: unknown phase (known: %s)", phase, phaseList(tax))}
			}
			if capability != "" && tax.Category(capability) == nil {
				return usageError{fmt.Errorf("--capability %q: unknown capability (see capbroker capabilities)", capability)}
			}
			proj, err := route.DetectProject(ctx, project, tax)
			if err != nil {
				return err
			}
			if rf.refresh {
				if _, err := cache.Refresh(ctx); err != nil {
					return err
				}
			}
			d, err := cache.Route(ctx, route.Request{Task: task, Phase: phase, Capability: capability, Project: proj})
			if err != nil {
				return err
			}
			for _, w := range d.Warnings {
				fmt.Fprintln(m.Stderr, "warning:", w)
			}
			if gaps.StatePath != "" {
				if after, err := os.ReadFile(gaps.StatePath); err == nil && (!flowExisted || !bytes.Equal(after, flowBefore)) {
					fmt.Fprintf(m.Stderr, "route: wrote the capability gap to %s (--no-flow skips it)\n", gaps.StatePath)
				}
			}
			if rf.asJSON {
				if err := writeJSON(m.Stdout, d); err != nil {
					return err
				}
				return explicitWriteFailure(cmd, d.Warnings)
			}
			fmt.Fprint(m.Stdout, d.Announcement)
			fmt.Fprintln(m.Stdout, d.Line)
			if len(d.Secondary) > 0 {
				fmt.Fprintf(m.Stdout, "\nalso in %s:\n", d.Phase)
				for _, s := range d.Secondary {
					fmt.Fprintln(m.Stdout, "  "+s.Line)
				}
			}
			return explicitWriteFailure(cmd, d.Warnings)
		},
	}
	rf.register(cmd)
	fl := cmd.Flags()
	fl.StringVar(&phase, "phase", "", "workflow phase: DISCUSS, PLAN, EXECUTE or VERIFY")
	fl.StringVar(&capability, "capability", "", "capability to delegate, e.g. code-review (wins over --phase)")
	fl.StringVar(&project, "project", "", "project root whose files reveal the project type (default .)")
	fl.StringVar(&state, "state", "", "Markdown state file that gets the Capability Warnings section (default <project>/FLOW.md; \"none\" to skip)")
	fl.BoolVar(&noFlow, "no-flow", false, "do not write the Capability Warnings section to the state file (same as --state none)")
	fl.StringVar(&gapLog, "gap-log", "", "JSON gap log (default <user cache dir>/capbroker/route-gaps.json; \"none\" to skip)")
	return cmd
}

func phaseList(tax *route.Taxonomy) string {
	var names []string
	for _, p := range tax.Phases {
		names = append(names, p.Name)
	}
	return strings.Join(names, ", ")
}

// explicitWriteFailure turns a failed write of a file the user named
// (--state, --gap-log, --cache) into an error, after the decision was
// printed; the default places only warn, as routing itself succeeded.
func explicitWriteFailure(cmd *cobra.Command, warnings []string) error {
	for _, w := range warnings {
		switch {
		case strings.HasPrefix(w, "recording the capability gap") && (cmd.Flags().Changed("state") || cmd.Flags().Changed("gap-log")),
			strings.HasPrefix(w, "writing capability cache") && cmd.Flags().Changed("cache"):
			return fmt.Errorf("%s", w)
		}
	}
	return nil
}

// gatewayRouter returns the router behind the gateway's route_capability
// tool: a capability cache over the plugin agents and commands of the
// folders named (--plugins), else of the project's and the user's .claude
// folders (agents, commands and plugins only: no MCP server is connected).
// It returns nil when those places hold no agent or command, so the tool
// is listed only when there is something to route to. Decisions use the
// project type of the working folder and write nothing (no gap log, no
// FLOW.md): the tool is read-only.
func (m *Main) gatewayRouter(ctx context.Context, plugins []string) (gateway.Router, int, error) {
	wd, err := os.Getwd()
	if err != nil {
		return nil, 0, fmt.Errorf("gateway: finding the working folder: %w", err)
	}
	var roots []source.Root
	for _, p := range plugins {
		if _, err := os.Stat(p); err != nil {
			return nil, 0, usageError{fmt.Errorf("gateway: --plugins %s: %w", p, err)}
		}
		roots = append(roots, source.Root{Path: p})
	}
	if len(roots) == 0 {
		roots = append(roots, source.Root{Path: filepath.Join(wd, ".claude"), Scope: "project", ClaudeDir: true, Optional: true})
		if d := clientconfig.ClaudeDir(m.clientEnv()); d != "" {
			roots = append(roots, source.Root{Path: d, Scope: "user", ClaudeDir: true, Optional: true})
		}
	}
	r := route.New(nil, nil)
	scan := func(ctx context.Context) ([]card.Card, error) {
		res, err := source.Discover(ctx, &source.Options{Roots: roots, Getenv: m.Getenv, WorkDir: wd, Home: m.Getenv("HOME")})
		if err != nil {
			return nil, err
		}
		return res.Cards, nil
	}
	cache := route.NewCache(r, scan, nil)
	mp, err := cache.Map(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("gateway: reading the plugins to route to: %w", err)
	}
	if mp.Len() == 0 {
		return nil, 0, nil
	}
	proj, err := route.DetectProject(ctx, wd, r.Taxonomy())
	if err != nil {
		return nil, 0, fmt.Errorf("gateway: %w", err)
	}
	return projectRouter{cache, proj}, mp.Len(), nil
}

// projectRouter routes with a fixed project when the request names none.
type projectRouter struct {
	c *route.Cache
	p *route.Project
}

func (r projectRouter) Route(ctx context.Context, req route.Request) (route.Decision, error) {
	if req.Project == nil {
		req.Project = r.p
	}
	return r.c.Route(ctx, req)
}
