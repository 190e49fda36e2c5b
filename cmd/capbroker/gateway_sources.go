package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/capbroker/capbroker/clientconfig"
	"github.com/capbroker/capbroker/gateway"
	"github.com/capbroker/capbroker/source"
	"github.com/capbroker/capbroker/source/mcpconfig"
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
	// kept are the definitions fronted, by serverKey.
	kept map[string]bool
	// watch are the files the servers were read from (and those that
	// would add servers when created): the gateway re-reads them when one
	// changes (gateway_watch.go).
	watch []string
	// profiles are the user's profiles and those the gateway serves
	// (gateway_profiles.go); nil for commands other than the gateway.
	profiles *gateway.Profiles
}

// mcpOptions expands variables the way the clients do.
func (m *Main) mcpOptions(home, wd string) *mcpconfig.Options {
	vars := map[string]string{"workspaceFolder": wd}
	if home != "" {
		vars["userHome"] = home
	}
	return &mcpconfig.Options{Getenv: m.Getenv, Vars: vars}
}

// explicitUpstreams reads the --mcp-config files: every server they
// define (bad ones are notes; a file that cannot be read is an error).
// yamlPath is --config, for the index folder.
func (m *Main) explicitUpstreams(ctx context.Context, files []string, yamlPath string) (*upstreams, error) {
	set, err := m.sources(ctx, &discoveryFlags{mcpConfigs: files, config: yamlPath})
	if err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	if len(set.servers) == 0 {
		// Files that define no server at all, as "client add" leaves when
		// it had none to move, or only disabled ones: the gateway may
		// front none until "capbroker server add" or "server enable"
		// changes them (errFrontsNone).
		if len(set.notes) == 0 {
			return &set.upstreams, fmt.Errorf("gateway: %w in %s", errFrontsNone, strings.Join(files, ", "))
		}
		if m.allDisabled(files) {
			return &set.upstreams, fmt.Errorf("gateway: %w: every server in %s is disabled (capbroker server enable NAME)", errFrontsNone, strings.Join(files, ", "))
		}
		return nil, fmt.Errorf("gateway: no usable MCP server in %s%s", strings.Join(files, ", "), set.why())
	}
	return &set.upstreams, nil
}

// allDisabled reports whether the servers files define servers and every
// one is disabled ("capbroker server disable"): the user's choice, which
// "server enable" undoes while the gateway runs.
func (m *Main) allDisabled(files []string) bool {
	disabled := false
	for _, f := range files {
		servers, probs, err := mcpconfig.Load(f, m.mcpOptions(m.Getenv("HOME"), ""))
		if err != nil || len(servers) > 0 {
			return false
		}
		for _, p := range probs {
			if p.Skipped && !p.Disabled {
				return false
			}
			disabled = disabled || p.Disabled
		}
	}
	return disabled
}

// errFrontsNone: the --mcp-config files define no server (yet), or only
// disabled ones.
var errFrontsNone = errors.New("no MCP server to front")

// discoveredUpstreams finds the servers to front when no --mcp-config is
// given (yamlPath is --config: capbroker.yaml, "" for ./capbroker.yaml):
// what [Main.sources] decides, as for every other command.
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
	set, err := m.sources(ctx, &discoveryFlags{config: yamlPath})
	if err != nil {
		return nil, err
	}
	return &set.upstreams, nil
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
		if up.kept == nil {
			up.kept = map[string]bool{}
		}
		up.kept[serverKey(s)] = true
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
// with gateway among its arguments, or the entry "client add --shared"
// writes (named capbroker, a URL: the shared gateway itself).
func isGatewayItself(s mcpconfig.Server) bool {
	if s.Name == clientconfig.EntryName && s.Command == "" && s.URL != "" {
		return true
	}
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
