package gateway

// AlwaysLoadMeta is the _meta key by which a tool asks to be loaded from
// the start rather than found (Claude Code's tool search defers every
// MCP tool but those): the gateway lists such a tool in every session.
const AlwaysLoadMeta = "anthropic/alwaysLoad"

// pinned returns the tools every session lists from the start, in
// catalog order: the tools of servers with "alwaysLoad": true, tools
// whose _meta has "anthropic/alwaysLoad": true, and what Options.Always
// names (a server: all its tools; a tool, by any name resolveName
// accepts). It is computed once per catalog.
func (g *Gateway) pinned(cat *catalog) []string {
	cat.alwaysOnce.Do(func() {
		servers := map[string]bool{}
		named := map[string]bool{}
		for _, a := range g.opts.Always {
			isServer := false
			for _, u := range g.ups {
				if u.cfg.Name == a {
					servers[a], isServer = true, true
				}
			}
			if isServer {
				continue
			}
			if n, _ := cat.resolveName(a); n != "" {
				named[n] = true
			} else {
				g.opts.Logger.Warn("always: no server or tool of that name (yet); not pinned", "name", a)
			}
		}
		for _, e := range cat.sortedTools() {
			if e.up.cfg.AlwaysLoad || servers[e.up.cfg.Name] || named[e.name] || alwaysLoadMeta(e) {
				cat.always = append(cat.always, e.name)
			}
		}
	})
	return cat.always
}

func alwaysLoadMeta(e *toolEntry) bool {
	if e.tool == nil || e.tool.Meta == nil {
		return false
	}
	v, _ := e.tool.Meta[AlwaysLoadMeta].(bool)
	return v
}
