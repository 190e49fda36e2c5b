package gateway

import (
	"context"
	"encoding/base64"
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/capbroker/capbroker/policy"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sync brings the session's server up to date with the catalog in use:
// tools (by mode), prompts, resources and templates. The SDK sends
// list_changed for what changed. The catalog is read under the session's
// lock, so of two syncs racing, the later one applies the newer catalog.
func (s *session) sync() {
	s.mu.Lock()
	defer s.mu.Unlock()
	ready := s.g.isReady() // before the catalog: once ready, the catalog read holds every upstream
	cat := s.catalog()
	if s.provisional {
		s.reselectLocked(cat, ready)
	}
	if s.mode == ModeAll {
		// Listed from the catalog's shared list (listAll); when it
		// changes, re-adding the marker makes the SDK send list_changed.
		if s.allSig != cat.listSig {
			s.allSig = cat.listSig
			s.server.AddTool(&mcp.Tool{Name: allMarker, Description: "Not listed: marks the gateway's tool list.",
				InputSchema: map[string]any{"type": "object"}}, s.callTool)
		}
	} else {
		s.syncToolsLocked(cat)
	}
	s.syncOthersLocked(cat)
}

// syncToolsLocked lists the session's tools (search and call modes) as
// the catalog has them. s.mu is held.
func (s *session) syncToolsLocked(cat *catalog) {
	want := map[string]*toolEntry{}
	for _, e := range cat.sortedTools() {
		if isHatch(s.mode, e.name) {
			continue
		}
		switch s.mode {
		case ModeAll:
			want[e.name] = e
		case ModeSearch, ModeAuto:
			if s.exposed[e.name] {
				want[e.name] = e
			}
		case ModeCall:
			if s.initial[e.name] {
				want[e.name] = e
			}
		}
	}
	reconcile(s.listed, want, func(e *toolEntry) string { return e.key }, s.server.RemoveTools,
		func(_ string, e *toolEntry) bool {
			if err := addTool(s.server, e, s.callTool); err != nil {
				s.g.opts.Logger.Warn("not listing a tool", "tool", e.name, "server", e.up.cfg.Name, "error", err)
				return false
			}
			return true
		})
}

// syncOthersLocked lists prompts, resources and templates as the catalog
// has them. s.mu is held.
func (s *session) syncOthersLocked(cat *catalog) {
	reconcile(s.prompts, cat.prompts, func(e *promptEntry) string { return e.key }, s.server.RemovePrompts,
		func(_ string, e *promptEntry) bool {
			p := *e.prompt
			p.Name = e.name
			s.server.AddPrompt(&p, s.getPrompt)
			return true
		})
	reconcile(s.resources, cat.resources, func(e *resourceEntry) string { return e.key }, s.server.RemoveResources,
		func(uri string, e *resourceEntry) bool {
			if err := catchPanic(func() { s.server.AddResource(e.res, s.readResource) }); err != nil {
				s.g.opts.Logger.Warn("not listing a resource", "uri", uri, "server", e.up.cfg.Name, "error", err)
				return false
			}
			return true
		})
	reconcile(s.templates, cat.templates, func(e *templateEntry) string { return e.key }, s.server.RemoveResourceTemplates,
		func(tmpl string, e *templateEntry) bool {
			if err := catchPanic(func() { s.server.AddResourceTemplate(e.tmpl, s.readResource) }); err != nil {
				s.g.opts.Logger.Warn("not listing a resource template", "template", tmpl, "server", e.up.cfg.Name, "error", err)
				return false
			}
			return true
		})
}

// reselectLocked selects again for a session whose selection was made
// while upstreams were starting, adding what the newer catalog selects
// (the floor tools of a server that came late); nothing is removed. Once
// every upstream has started, the selection is final. s.mu is held.
func (s *session) reselectLocked(cat *catalog, ready bool) {
	g := s.g
	if ready {
		s.provisional = false
	}
	var sel *policy.Selection
	if s.planTask != "" {
		var err error
		if sel, err = g.planSelection(context.Background(), cat, s.planTask); err != nil {
			return
		}
	} else {
		sel = cat.broker.Select(context.Background(), g.opts.Task, s.selectOptions())
	}
	added := s.addLocked(merge(g.pinned(cat), sel.Names()))
	if len(added) == 0 {
		return
	}
	for _, n := range added {
		s.initial[n] = true
	}
	if s.anon || s.onStart != nil {
		return // nothing stored, or the start, still to come, saves it all
	}
	all := slices.Clone(s.order)
	go func() {
		if err := g.opts.Store.Save(context.Background(), s.key, all); err != nil {
			g.opts.Logger.Warn("saving a session's exposed tools", "session", s.key, "error", err)
		}
	}()
}

// reconcile makes listed (name -> key of the definition listed) match
// want: it removes, in one call, the names whose entry is gone or has
// changed, then adds the missing ones in name order. add reports false
// for an entry it could not list, which stays unlisted.
func reconcile[E any](listed map[string]string, want map[string]E, key func(E) string, remove func(...string), add func(string, E) bool) {
	var gone []string
	for name, k := range listed {
		if e, ok := want[name]; !ok || key(e) != k {
			gone = append(gone, name)
		}
	}
	if len(gone) > 0 {
		sort.Strings(gone)
		remove(gone...)
		for _, n := range gone {
			delete(listed, n)
		}
	}
	for _, name := range sortedKeys(want) {
		if _, ok := listed[name]; ok {
			continue
		}
		if e := want[name]; add(name, e) {
			listed[name] = key(e)
		}
	}
}

// addTool lists e on server under its gateway name.
func addTool(server *mcp.Server, e *toolEntry, h mcp.ToolHandler) error {
	return catchPanic(func() { server.AddTool(listedTool(e), h) })
}

// listedTool is e as the gateway lists it: under its gateway name, and a
// schema without "type" given type "object", as MCP requires.
func listedTool(e *toolEntry) *mcp.Tool {
	t := *e.tool
	t.Name = e.name
	if m, ok := t.InputSchema.(map[string]any); ok {
		if _, has := m["type"]; !has {
			m = maps.Clone(m)
			m["type"] = "object"
			t.InputSchema = m
		}
	} else if t.InputSchema == nil {
		t.InputSchema = map[string]any{"type": "object"}
	}
	return &t
}

// All mode shares one list of tools among sessions (catalog.allTools):
// tools/list is answered from it, a tool is registered on the session's
// server only when first called (so the SDK dispatches the call), and
// the session's server holds a marker tool, re-added when the catalog's
// tools change so the SDK sends list_changed.
const (
	allMarker   = "capbroker_gateway_listing"
	allPageSize = 1000
)

// listAll answers tools/list in all mode from the catalog's shared list.
// The cursor is the last name of the page before.
func (s *session) listAll(req mcp.Request) (mcp.Result, error) {
	tools := s.catalog().allTools()
	start := 0
	if p, ok := req.GetParams().(*mcp.ListToolsParams); ok && p != nil && p.Cursor != "" {
		after, err := base64.RawURLEncoding.DecodeString(p.Cursor)
		if err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("invalid cursor %q", p.Cursor)}
		}
		start = sort.Search(len(tools), func(i int) bool { return tools[i].Name > string(after) })
	}
	end := min(start+allPageSize, len(tools))
	res := &mcp.ListToolsResult{Tools: append([]*mcp.Tool{}, tools[start:end]...)}
	if end < len(tools) {
		res.NextCursor = base64.RawURLEncoding.EncodeToString([]byte(tools[end-1].Name))
	}
	res.CacheScope = "public" // as the SDK's own listing says
	return res, nil
}

// registerAll registers the named tool on an all-mode session's server
// before its first call, so the SDK can dispatch it.
func (s *session) registerAll(name string) {
	e, ok := s.catalog().tools[name]
	if !ok {
		return // the SDK answers: unknown tool
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, done := s.listed[name]; done {
		return
	}
	if err := addTool(s.server, e, s.callTool); err != nil {
		s.g.opts.Logger.Warn("not serving a tool", "tool", e.name, "server", e.up.cfg.Name, "error", err)
		return
	}
	s.listed[name] = e.key
}

func catchPanic(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	f()
	return nil
}
