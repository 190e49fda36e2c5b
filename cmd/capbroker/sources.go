package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/capbroker/capbroker/clientconfig"
	"github.com/capbroker/capbroker/source"
	"github.com/capbroker/capbroker/source/mcpconfig"
	"github.com/capbroker/capbroker/source/trust"
)

// sourceSet is what a command reads: the discovery options (roots, tool
// files) with the MCP servers already decided, the servers themselves
// (one definition per name, the gateway's own entry left out), and every
// place looked at. Every face of capbroker — discover, select, find,
// cards, embed, serve, route, the gateway and the explorer — reads
// through [Main.sources], so they all see the same servers.
type sourceSet struct {
	// opts discovers what the set names; its KeepServer plans exactly the
	// servers below.
	opts *source.Options
	upstreams
	// explicit: the flags named the places (--root, --tools,
	// --mcp-config); nothing else was read.
	explicit bool
}

// sources decides what a command reads, from its flags:
//
//   - explicit --root, --tools or --mcp-config flags: those, and nothing
//     else; a named place that cannot be read is an error (a named MCP
//     config must parse);
//   - otherwise the places capbroker.yaml names (./capbroker.yaml, or
//     --config), plus, unless it says "defaults: false" or --no-defaults
//     is given, the default places: the project's ./.claude, ./.mcp.json,
//     ./.vscode/mcp.json and ./.cursor/mcp.json, ~/.claude (agents,
//     commands, skills, plugins), ~/.claude.json (user servers and this
//     project's), Claude Desktop's, VS Code's and Cursor's user configs,
//     and the servers files "capbroker client add" wrote
//     (~/.config/capbroker/clients/*.json).
//
// A server entry that runs "capbroker gateway --mcp-config FILE" is left
// out, and FILE's servers are read in its place (a client routed through
// the gateway keeps its servers there). Of two definitions of one name
// the most specific wins (see clientconfig.Rank).
func (m *Main) sources(ctx context.Context, f *discoveryFlags) (*sourceSet, error) {
	opts, indexDir, cfg, err := m.sourceOptionsConfig(f)
	if err != nil {
		return nil, err
	}
	set := &sourceSet{opts: opts, explicit: len(f.roots)+len(f.toolFiles)+len(f.mcpConfigs) > 0}
	set.index = indexDir
	home := m.Getenv("HOME")
	wd := opts.WorkDir
	mopts := m.mcpOptions(home, wd)

	rank := map[string]clientconfig.Rank{}
	perFile := map[string]int{}
	read := map[string]bool{} // servers files read (followed or named)
	if set.explicit {
		for _, r := range f.roots {
			if _, err := os.Stat(r); err != nil {
				return nil, usageError{fmt.Errorf("--root %s: %w", r, unwrapPath(err))}
			}
		}
		for _, t := range f.toolFiles {
			if _, err := os.Stat(t); err != nil {
				return nil, usageError{fmt.Errorf("--tools %s: %w", t, unwrapPath(err))}
			}
		}
		for _, c := range f.mcpConfigs {
			if _, _, err := mcpconfig.Load(c, mopts); err != nil {
				return nil, fmt.Errorf("--mcp-config %s: %w", c, unwrapPath(err))
			}
			read[absPath(c)] = true
		}
	}

	defaults := !set.explicit && !f.noDefaults && (cfg == nil || cfg.UseDefaults())
	if cfg != nil && !set.explicit {
		set.looked = append(set.looked, cfg.path+" (mcp_configs, roots)")
	} else if !set.explicit {
		set.looked = append(set.looked, filepath.Join(wd, source.ConfigName)+" (not found)")
	}

	env := clientconfig.Env{Home: home, WorkDir: wd, AppData: m.Getenv("APPDATA"), GOOS: runtime.GOOS, Getenv: m.Getenv}
	var known []clientconfig.File
	type serversFile struct {
		path, client string
	}
	var serversFiles []serversFile
	if defaults {
		known = clientconfig.Files(env)
		for _, c := range known {
			rank[c.Path] = c.Rank
			if !fileExists(c.Path) || slices.Contains(opts.MCPConfigs, c.Path) || slices.Contains(opts.ProjectMCPConfigs, c.Path) {
				continue
			}
			if c.Project {
				// The project's files: their servers run once approved.
				opts.ProjectMCPConfigs = append(opts.ProjectMCPConfigs, c.Path)
			} else {
				opts.MCPConfigs = append(opts.MCPConfigs, c.Path)
			}
		}
		// The servers files "client add" wrote, ranked as their client's
		// user file.
		for _, c := range clientconfig.Clients() {
			p := clientconfig.ServersFile(c.ID, env)
			if !fileExists(p) || slices.Contains(opts.MCPConfigs, p) {
				continue
			}
			if uf, err := clientconfig.UserFile(c.ID, env); err == nil {
				rank[p] = uf.Rank
			}
			opts.MCPConfigs = append(opts.MCPConfigs, p)
			read[p] = true
			serversFiles = append(serversFiles, serversFile{p, c.Name})
		}
	}
	for _, f := range append(slices.Clone(opts.MCPConfigs), opts.ProjectMCPConfigs...) {
		if _, ok := rank[f]; !ok {
			rank[f] = clientconfig.RankNamed
		}
	}

	// ~/.claude.json: Claude Code's user servers and this project's own.
	if p := clientconfig.ClaudeJSON(env); defaults && p != "" {
		local, user, probs, state := clientconfig.ClaudeServers(p, wd, mopts)
		set.looked = append(set.looked, p+" ("+state+")")
		for _, pr := range probs {
			set.notes = append(set.notes, pr.String())
		}
		for _, s := range local {
			rank[s.File] = clientconfig.RankLocal
		}
		rank[p] = clientconfig.RankUser
		opts.Servers = append(opts.Servers, local...)
		opts.Servers = append(opts.Servers, user...)
		// Codex's TOML and Zed's context_servers: named, not read.
		for _, pr := range clientconfig.Unsupported(env) {
			set.notes = append(set.notes, pr.String())
			set.looked = append(set.looked, pr.Path+" (not supported)")
		}
	}

	pl := source.Plan(ctx, opts)
	var found []mcpconfig.Server
	for _, s := range pl.Sources {
		if srv, ok := source.MCPServer(s); ok {
			found = append(found, srv)
			perFile[srv.File]++
		}
	}
	// A gateway entry's own servers file: read in its place, once.
	for _, s := range slices.Clone(found) {
		sf := gatewayServersFile(s)
		if !isGatewayItself(s) || sf == "" || read[sf] {
			continue
		}
		read[sf] = true
		servers, probs, err := mcpconfig.Load(sf, mopts)
		if err != nil {
			set.notes = append(set.notes, fmt.Sprintf("%s: server %s runs capbroker gateway with %s, which cannot be read: %v", s.File, s.Name, sf, err))
			continue
		}
		for _, pr := range probs {
			set.notes = append(set.notes, pr.String())
		}
		r, ok := rank[s.File]
		if !ok {
			r = clientconfig.RankNamed
		}
		rank[sf] = r
		opts.Servers = append(opts.Servers, servers...)
		found = append(found, servers...)
		perFile[sf] += len(servers)
		set.looked = append(set.looked, fmt.Sprintf("%s (servers behind %s's capbroker entry: %d servers)", sf, s.File, len(servers)))
	}
	for _, u := range pl.Unapproved {
		perFile[u.Path]++
	}
	set.unapproved = pl.Unapproved
	if n := len(pl.Unapproved); n > 0 {
		var names []string
		for _, u := range pl.Unapproved {
			names = append(names, fmt.Sprintf("%s (%s: %s)", u.Name, u.Path, u.CommandLine))
		}
		set.notes = append(set.notes, fmt.Sprintf("%d project MCP servers not started until approved: %s; review and approve them with: %s",
			n, strings.Join(names, ", "), trust.Fix))
		for _, u := range pl.Unapproved {
			if !strings.Contains(u.Reason, trust.Fix) {
				set.notes = append(set.notes, u.String())
			}
		}
	}
	for _, s := range append(pl.Skipped, pl.Warnings...) {
		if _, ok := rank[s.Path]; ok || clientconfig.IsConfigName(s.Path) {
			set.notes = append(set.notes, s.String())
		}
	}
	for _, c := range known {
		state := "not found"
		if fileExists(c.Path) {
			state = fmt.Sprintf("%d servers", perFile[c.Path])
		}
		set.looked = append(set.looked, fmt.Sprintf("%s (%s: %s)", c.Path, c.Label, state))
	}
	for _, sf := range serversFiles {
		set.looked = append(set.looked, fmt.Sprintf("%s (%s, behind capbroker's gateway: %d servers)", sf.path, sf.client, perFile[sf.path]))
	}
	for _, f := range append(slices.Clone(opts.MCPConfigs), opts.ProjectMCPConfigs...) {
		if slices.ContainsFunc(known, func(c clientconfig.File) bool { return c.Path == f }) ||
			slices.ContainsFunc(serversFiles, func(s serversFile) bool { return s.path == f }) {
			continue
		}
		what := "capbroker.yaml"
		if set.explicit {
			what = "--mcp-config"
		}
		set.looked = append(set.looked, fmt.Sprintf("%s (%s: %d servers)", f, what, perFile[absPath(f)]))
	}
	for _, r := range opts.Roots {
		if !r.Optional || fileExists(r.Path) {
			set.looked = append(set.looked, r.Path+" (scanned)")
		}
	}
	for _, t := range opts.ToolFiles {
		set.looked = append(set.looked, t+" (tool file)")
	}
	if !defaults && !set.explicit {
		why := "--no-defaults"
		if cfg != nil && !cfg.UseDefaults() {
			why = "capbroker.yaml says defaults: false"
		}
		set.looked = append(set.looked, "(the default places are off: "+why+")")
	}
	// The files to watch: every MCP config looked at (found or not),
	// capbroker.yaml, ~/.claude.json and the servers files behind gateway
	// entries.
	for _, f := range append(slices.Clone(opts.MCPConfigs), opts.ProjectMCPConfigs...) {
		set.watch = append(set.watch, absPath(f))
	}
	for _, c := range known {
		set.watch = append(set.watch, c.Path)
	}
	for p := range read {
		set.watch = append(set.watch, p)
	}
	if defaults {
		if p := clientconfig.ClaudeJSON(env); p != "" {
			set.watch = append(set.watch, p)
		}
		for _, c := range clientconfig.Clients() {
			set.watch = append(set.watch, clientconfig.ServersFile(c.ID, env))
		}
	}
	if cfg != nil {
		set.watch = append(set.watch, cfg.path)
	} else if !set.explicit {
		set.watch = append(set.watch, filepath.Join(wd, source.ConfigName))
	}
	slices.Sort(set.watch)
	set.watch = slices.Compact(set.watch)
	set.add(found, func(file string) clientconfig.Rank {
		if r, ok := rank[file]; ok {
			return r
		}
		if strings.HasPrefix(file, wd+string(filepath.Separator)) {
			return clientconfig.RankProject
		}
		return clientconfig.RankNamed
	})
	keep := set.kept
	opts.KeepServer = func(s mcpconfig.Server) bool { return keep[serverKey(s)] }
	return set, nil
}

// serverKey identifies one definition of a server.
func serverKey(s mcpconfig.Server) string { return s.File + "\x00" + s.Name }

// gatewayServersFile is the --mcp-config file a "capbroker gateway" entry
// serves from, or "".
func gatewayServersFile(s mcpconfig.Server) string {
	for i, a := range s.Args {
		if v, ok := strings.CutPrefix(a, "--mcp-config="); ok {
			return absPath(v)
		}
		if a == "--mcp-config" && i+1 < len(s.Args) {
			return absPath(s.Args[i+1])
		}
	}
	return ""
}

func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// unwrapPath turns "open x: no such file or directory" into "no such file
// or directory" when the caller names the file already.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// placesLine is the places a set read, on one line, for a note: the
// home folder as ~, the working folder as ".".
func (set *sourceSet) placesLine() string {
	var out []string
	for _, l := range set.looked {
		if wd := set.opts.WorkDir; wd != "" {
			l = strings.ReplaceAll(l, wd+string(filepath.Separator), "."+string(filepath.Separator))
		}
		if h := set.opts.Home; h != "" {
			l = strings.ReplaceAll(l, h+string(filepath.Separator), "~"+string(filepath.Separator))
		}
		out = append(out, l)
	}
	return strings.Join(out, "; ")
}
