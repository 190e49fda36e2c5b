package main

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"

	"github.com/capbroker/capbroker/clientconfig"
	"github.com/capbroker/capbroker/gateway"
	"github.com/capbroker/capbroker/source"
	"github.com/capbroker/capbroker/source/mcpconfig"
	"github.com/capbroker/capbroker/source/trust"
)

// upstreams are the servers the gateway fronts, with what was left out
// and why, and every place looked at.
type upstreams struct {
	servers []gateway.ServerConfig
	notes   []string // servers left out, duplicates, repaired entries
	looked  []string // "path (what was there)"
	index   string   // the index folder (pins): capbroker.yaml's, else the default
	// unapproved are the project servers left out until approved.
	unapproved []source.Unapproved
}

// mcpOptions expands variables the way the clients do.
func (m *Main) mcpOptions(home, wd string) *mcpconfig.Options {
	vars := map[string]string{"workspaceFolder": wd}
	if home != "" {
		vars["userHome"] = home
	}
	return &mcpconfig.Options{Getenv: m.Getenv, Vars: vars}
}

// explicitUpstreams reads the --config files: every server they define
// (bad ones are notes; a file that cannot be read is an error).
func (m *Main) explicitUpstreams(files []string) (*upstreams, error) {
	home := m.Getenv("HOME")
	wd, _ := os.Getwd()
	up := &upstreams{}
	var found []mcpconfig.Server
	for _, f := range files {
		servers, probs, err := mcpconfig.Load(f, m.mcpOptions(home, wd))
		if err != nil {
			return nil, err
		}
		for _, p := range probs {
			up.notes = append(up.notes, p.String())
		}
		found = append(found, servers...)
		up.looked = append(up.looked, fmt.Sprintf("%s (%d servers)", f, len(servers)))
	}
	up.add(found, func(string) clientconfig.Rank { return 0 })
	if len(up.servers) == 0 {
		return nil, fmt.Errorf("gateway: no usable MCP server in %s%s", strings.Join(files, ", "), up.why())
	}
	return up, nil
}

// discoveredUpstreams finds the servers to front when no --mcp-config is
// given (yamlPath is --config: capbroker.yaml, "" for ./capbroker.yaml): the MCP servers discovery finds (./.mcp.json and what
// ./capbroker.yaml names: mcp_configs, roots, plugin servers with
// plugin_mcp), plus the user's client configs (~/.claude.json, Claude
// Desktop, VS Code, Cursor) unless capbroker.yaml says "defaults: false".
func (m *Main) discoveredUpstreams(ctx context.Context, yamlPath string) (*upstreams, error) {
	up, err := m.plannedUpstreams(ctx, yamlPath)
	if err != nil {
		return nil, err
	}
	if len(up.servers) == 0 {
		return nil, fmt.Errorf("gateway: no MCP server found to front%s\nlooked in:\n  %s\n"+
			"give a servers file with --mcp-config FILE ({\"mcpServers\": {name: {command, args, env} | {url, headers}}}), "+
			"or name your client configs under mcp_configs in ./%s",
			up.why(), strings.Join(up.looked, "\n  "), source.ConfigName)
	}
	return up, nil
}

// plannedUpstreams finds the servers discoveredUpstreams fronts, and the
// project servers left out until approved, starting nothing.
func (m *Main) plannedUpstreams(ctx context.Context, yamlPath string) (*upstreams, error) {
	home := m.Getenv("HOME")
	opts, indexDir, err := m.sourceOptions(&discoveryFlags{config: yamlPath})
	if err != nil {
		return nil, err
	}
	wd := opts.WorkDir
	up := &upstreams{}
	defaults := true
	p := yamlPath
	if p == "" {
		p = filepath.Join(wd, source.ConfigName)
	}
	if fileExists(p) {
		cfg, err := source.LoadConfig(p)
		if err != nil {
			return nil, err
		}
		defaults = cfg.UseDefaults()
		up.looked = append(up.looked, p+" (mcp_configs, roots)")
	} else {
		up.looked = append(up.looked, p+" (not found)")
	}
	up.index = indexDir

	env := clientconfig.Env{Home: home, WorkDir: wd, AppData: m.Getenv("APPDATA"), GOOS: runtime.GOOS, Getenv: m.Getenv}
	rank := map[string]clientconfig.Rank{}
	var known []clientconfig.File
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
	}
	for _, f := range append(slices.Clone(opts.MCPConfigs), opts.ProjectMCPConfigs...) {
		if _, ok := rank[f]; !ok {
			rank[f] = clientconfig.RankNamed
		}
	}

	pl := source.Plan(ctx, opts)
	var found []mcpconfig.Server
	perFile := map[string]int{}
	for _, s := range pl.Sources {
		if srv, ok := source.MCPServer(s); ok {
			found = append(found, srv)
			perFile[srv.File]++
		}
	}
	for _, u := range pl.Unapproved {
		perFile[u.Path]++
	}
	up.unapproved = pl.Unapproved
	if n := len(pl.Unapproved); n > 0 {
		var names []string
		for _, u := range pl.Unapproved {
			names = append(names, fmt.Sprintf("%s (%s: %s)", u.Name, u.Path, u.CommandLine))
		}
		up.notes = append(up.notes, fmt.Sprintf("%d project MCP servers not started until approved: %s; review and approve them with: %s",
			n, strings.Join(names, ", "), trust.Fix))
		for _, u := range pl.Unapproved {
			if !strings.Contains(u.Reason, trust.Fix) {
				up.notes = append(up.notes, u.String())
			}
		}
	}
	for _, s := range append(pl.Skipped, pl.Warnings...) {
		if _, ok := rank[s.Path]; ok || clientconfig.IsConfigName(s.Path) {
			up.notes = append(up.notes, s.String())
		}
	}

	// ~/.claude.json: Claude Code's user servers and this project's own.
	if p := clientconfig.ClaudeJSON(env); defaults && p != "" {
		local, user, probs, state := clientconfig.ClaudeServers(p, wd, m.mcpOptions(home, wd))
		up.looked = append(up.looked, p+" ("+state+")")
		for _, pr := range probs {
			up.notes = append(up.notes, pr.String())
		}
		for _, s := range local {
			rank[s.File] = clientconfig.RankLocal
		}
		found = append(found, local...)
		found = append(found, user...)
		rank[p] = clientconfig.RankUser
		// Codex's TOML and Zed's context_servers: named, not read.
		for _, pr := range clientconfig.Unsupported(env) {
			up.notes = append(up.notes, pr.String())
			up.looked = append(up.looked, pr.Path+" (not supported)")
		}
	}
	for _, c := range known {
		state := "not found"
		if fileExists(c.Path) {
			state = fmt.Sprintf("%d servers", perFile[c.Path])
		}
		up.looked = append(up.looked, fmt.Sprintf("%s (%s: %s)", c.Path, c.Label, state))
	}
	for _, f := range append(slices.Clone(opts.MCPConfigs), opts.ProjectMCPConfigs...) {
		if !slices.ContainsFunc(known, func(c clientconfig.File) bool { return c.Path == f }) {
			up.looked = append(up.looked, fmt.Sprintf("%s (capbroker.yaml: %d servers)", f, perFile[f]))
		}
	}
	if !defaults {
		up.looked = append(up.looked, "(the default places are off: capbroker.yaml says defaults: false)")
	}
	up.add(found, func(file string) clientconfig.Rank {
		if r, ok := rank[file]; ok {
			return r
		}
		if strings.HasPrefix(file, wd+string(filepath.Separator)) {
			return clientconfig.RankProject
		}
		return clientconfig.RankNamed
	})
	return up, nil
}

// add turns the definitions into upstreams: the gateway itself is left
// out (it would start itself again, and again), and of two definitions
// with one name the one with the lowest rank (then file name) wins; an
// identical copy is dropped silently, a different one is noted.
func (up *upstreams) add(found []mcpconfig.Server, rank func(file string) clientconfig.Rank) {
	sort.SliceStable(found, func(i, j int) bool {
		ri, rj := rank(found[i].File), rank(found[j].File)
		if ri != rj {
			return ri < rj
		}
		return found[i].File < found[j].File
	})
	kept := map[string]mcpconfig.Server{}
	for _, s := range found {
		where := s.File
		if s.Line > 0 {
			where = fmt.Sprintf("%s:%d", s.File, s.Line)
		}
		if isGatewayItself(s) {
			up.notes = append(up.notes, fmt.Sprintf("%s: server %s runs capbroker gateway itself; left out", where, s.Name))
			continue
		}
		if prev, ok := kept[s.Name]; ok {
			if !sameServer(prev, s) {
				up.notes = append(up.notes, fmt.Sprintf("%s: server %s is also defined in %s, which wins; left out", where, s.Name, prev.File))
			}
			continue
		}
		c, err := gateway.FromMCPConfig(s)
		if err != nil {
			up.notes = append(up.notes, fmt.Sprintf("%s: %v; left out", where, err))
			continue
		}
		kept[s.Name] = s
		up.servers = append(up.servers, c)
	}
	sort.Slice(up.servers, func(i, j int) bool { return up.servers[i].Name < up.servers[j].Name })
}

// why lists the notes, for an error.
func (up *upstreams) why() string {
	if len(up.notes) == 0 {
		return ""
	}
	return "\n  " + strings.Join(up.notes, "\n  ")
}

func sameServer(a, b mcpconfig.Server) bool {
	return a.Transport == b.Transport && a.Command == b.Command && slices.Equal(a.Args, b.Args) &&
		maps.Equal(a.Env, b.Env) && a.Dir == b.Dir && a.URL == b.URL && maps.Equal(a.Headers, b.Headers)
}

// isGatewayItself reports whether a server definition runs "capbroker
// gateway": the capbroker command (by name, or this very executable)
// with gateway among its arguments.
func isGatewayItself(s mcpconfig.Server) bool {
	if s.Command == "" || !slices.Contains(s.Args, "gateway") {
		return false
	}
	base := strings.TrimSuffix(strings.ToLower(filepath.Base(s.Command)), ".exe")
	if base == "capbroker" {
		return true
	}
	self, err := os.Executable()
	if err != nil {
		return false
	}
	p, err := exec.LookPath(s.Command)
	if err != nil {
		return false
	}
	a, err1 := os.Stat(self)
	b, err2 := os.Stat(p)
	return err1 == nil && err2 == nil && os.SameFile(a, b)
}
