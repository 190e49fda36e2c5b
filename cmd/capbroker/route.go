package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/route"
)

// loadRoutingCards returns the plugin agents and commands found under
// roots. Plugin discovery (the source packages that read
// .claude-plugin/plugin.json, agents/*.md and commands/*.md) is not built
// into capbroker yet, so the default says so; tests and builds that have
// discovery replace it.
var loadRoutingCards = func(ctx context.Context, m *Main, roots []string) ([]card.Card, error) {
	return nil, errNoPluginLoader
}

var errNoPluginLoader = errors.New("no plugin loader: plugin discovery is not built into this capbroker yet")

// routingFlags are the flags of route and capabilities.
type routingFlags struct {
	roots         []string
	taxonomy      string
	cache         string
	refresh       bool
	maxAge        time.Duration
	minConfidence string
	asJSON        bool
}

func (f *routingFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringArrayVar(&f.roots, "root", nil, "plugins directory to scan; repeatable (default ~/.claude/plugins)")
	fl.StringVar(&f.taxonomy, "taxonomy", "", "YAML file that extends or replaces the capability taxonomy (see capabilities --print-taxonomy)")
	fl.StringVar(&f.cache, "cache", "", "capability cache file (default <user cache dir>/capbroker/route-<roots hash>.json; \"none\" keeps it in memory)")
	fl.BoolVar(&f.refresh, "refresh", false, "scan the plugins again whatever the age of the cache")
	fl.DurationVar(&f.maxAge, "max-age", route.DefaultMaxAge, "how long a scan stays fresh")
	fl.StringVar(&f.minConfidence, "min-confidence", "Low", "lowest confidence delegated to: Low, Medium or High")
	fl.BoolVar(&f.asJSON, "json", false, "print JSON")
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

// routing builds the router and its cache from the flags. gaps may be nil.
func (m *Main) routing(f *routingFlags, gaps route.GapRecorder) (*route.Router, *route.Cache, error) {
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

	roots := f.roots
	if len(roots) == 0 {
		if h := m.Getenv("HOME"); h != "" {
			roots = []string{filepath.Join(h, ".claude", "plugins")}
		}
	}
	abs := make([]string, len(roots))
	for i, root := range roots {
		a, err := filepath.Abs(root)
		if err != nil {
			return nil, nil, fmt.Errorf("plugin root %s: %w", root, err)
		}
		abs[i] = a
	}
	key := strings.Join(abs, "\n")
	path := f.cache
	switch {
	case path == "none":
		path = ""
	case path == "" && m.cacheDir() != "":
		sum := sha256.Sum256([]byte(key))
		path = filepath.Join(m.cacheDir(), "route-"+hex.EncodeToString(sum[:6])+".json")
	}
	scan := func(ctx context.Context) ([]card.Card, error) {
		return loadRoutingCards(ctx, m, abs)
	}
	c := route.NewCache(r, scan, &route.CacheOptions{MaxAge: f.maxAge, Path: path, Key: key, Gaps: gaps})
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
	)
	cmd := &cobra.Command{
		Use:   `route ["<task>"]`,
		Short: "Pick the installed plugin agent for a task or workflow phase, and say why",
		Long: `route maps a task or a workflow phase (DISCUSS, PLAN, EXECUTE, VERIFY) to a
capability (requirements-gathering, code-review, ...) and delegates it to the
best installed plugin agent: project-type match first, then exact keyword
matches, then agents over commands. With no match it names the built-in
default, logs the gap (JSON, and a "## Capability Warnings" section in the
project's FLOW.md) and suggests what kind of plugin to install.`,
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
			if cmd.Flags().Changed("state") {
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
			r, cache, err := m.routing(&rf, gaps)
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
			if rf.asJSON {
				return writeJSON(m.Stdout, d)
			}
			fmt.Fprint(m.Stdout, d.Announcement)
			fmt.Fprintln(m.Stdout, d.Line)
			if len(d.Secondary) > 0 {
				fmt.Fprintf(m.Stdout, "\nalso in %s:\n", d.Phase)
				for _, s := range d.Secondary {
					fmt.Fprintln(m.Stdout, "  "+s.Line)
				}
			}
			return nil
		},
	}
	rf.register(cmd)
	fl := cmd.Flags()
	fl.StringVar(&phase, "phase", "", "workflow phase: DISCUSS, PLAN, EXECUTE or VERIFY")
	fl.StringVar(&capability, "capability", "", "capability to delegate, e.g. code-review (wins over --phase)")
	fl.StringVar(&project, "project", "", "project root whose files reveal the project type (default .)")
	fl.StringVar(&state, "state", "", "Markdown state file that gets the Capability Warnings section (default <project>/FLOW.md; \"none\" to skip)")
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
