package gateway

import "slices"

// AlwaysLoadMeta is the _meta key by which a tool asks to be loaded from
// the start rather than found (Claude Code's tool search defers every
// MCP tool but those): the gateway lists such a tool in every session.
const AlwaysLoadMeta = "anthropic/alwaysLoad"

// pinned returns the tools every session lists from the start, in
// catalog order: the tools of servers with "alwaysLoad": true, tools
// whose _meta has "anthropic/alwaysLoad": true, and what Options.Always
// and the pins of the profiles the gateway serves name (a server: all
// its tools; a tool, by any name resolveName accepts). It is computed
// once per catalog.
func (g *Gateway) pinned(cat *catalog) []string {
	cat.alwaysOnce.Do(func() {
		pins := map[string]bool{}
		for _, e := range cat.sortedTools() {
			if e.up.cfg.AlwaysLoad || alwaysLoadMeta(e) {
				pins[e.name] = true
			}
		}
		for _, n := range g.resolvePins(cat, append(slices.Clone(g.opts.Always), cat.profileAlways...), true) {
			pins[n] = true
		}
		for _, e := range cat.sortedTools() {
			if pins[e.name] {
				cat.always = append(cat.always, e.name)
			}
		}
	})
	return cat.always
}

// resolvePins returns the catalog's tools that names pin, in catalog
// order: a server's name pins all its tools, a tool is named by any name
// resolveName accepts. warn logs a name that pins nothing.
func (g *Gateway) resolvePins(cat *catalog, names []string, warn bool) []string {
	servers := map[string]bool{}
	named := map[string]bool{}
	for _, a := range names {
		isServer := false
		for _, u := range g.upstreams() {
			if u.cfg.Name == a {
				servers[a], isServer = true, true
			}
		}
		if isServer {
			continue
		}
		if n, _ := cat.resolveName(a, nil); n != "" {
			named[n] = true
		} else if warn {
			g.opts.Logger.Warn("always: no server or tool of that name (yet); not pinned", "name", a)
		}
	}
	var out []string
	for _, e := range cat.sortedTools() {
		if servers[e.up.cfg.Name] || named[e.name] {
			out = append(out, e.name)
		}
	}
	return out
}

func alwaysLoadMeta(e *toolEntry) bool {
	if e.tool == nil || e.tool.Meta == nil {
		return false
	}
	v, _ := e.tool.Meta[AlwaysLoadMeta].(bool)
	return v
}
