package gateway

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/policy"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// CallName is the tool that calls a found capability in call and auto
// modes.
const CallName = "call_capability"

// session is one client session: its own MCP server, holding exactly the
// tools that session was given.
type session struct {
	g      *Gateway
	key    string
	mode   Mode
	anon   bool // the client gave no name: nothing is stored, nothing shared
	server *mcp.Server

	mu sync.Mutex
	// provisional: the selection was made before every upstream had
	// started; each sync selects again on the newer catalog, adding what
	// late upstreams offer, until they all have.
	provisional bool
	allSig      string                // all mode: the catalog listing last announced
	planTask    string                // the plan task the session was started with, if any
	finds       int                   // find_capability calls so far
	exposed     map[string]bool       // callable upstream tools (auto, search, call)
	order       []string              // exposed, in the order given: selected, then found
	listed      map[string]string     // tool name -> definition key, as listed
	initial     map[string]bool       // call mode: the tools listed from the start
	onStart     func(context.Context) // saves and traces the start; run once, when initialized
	startMu     sync.Mutex            // held while onStart runs, so no request overtakes the start
	prompts     map[string]string
	resources   map[string]string
	templates   map[string]string
}

// newSession creates the server for one client session and registers it
// (the caller drops it with dropSession when it ends). key identifies the
// session in the store and the trace; id, if set, becomes its MCP session
// ID. An anonymous session (the client gave no name) neither loads nor
// stores its tools: they end with it.
//
// Sessions of one name share what they find (see [session.share]).
func (g *Gateway) newSession(ctx context.Context, key, id string, mode Mode, anon bool, planTask string) (*session, error) {
	// cat serves the selection and the trace of the start; the tools
	// listed always come from the catalog in use (see sync).
	cat := g.catalog()
	s := &session{g: g, key: key, mode: mode, anon: anon, exposed: map[string]bool{}, listed: map[string]string{},
		initial: map[string]bool{}, prompts: map[string]string{}, resources: map[string]string{}, templates: map[string]string{}}
	caps := &mcp.ServerCapabilities{
		Logging: &mcp.LoggingCapabilities{},
		Tools:   &mcp.ToolCapabilities{ListChanged: true},
	}
	var anyPrompts, anyResources bool
	for _, u := range g.ups {
		l := u.listing()
		anyPrompts = anyPrompts || (l.caps != nil && l.caps.Prompts != nil)
		anyResources = anyResources || (l.caps != nil && l.caps.Resources != nil)
	}
	if anyPrompts {
		caps.Prompts = &mcp.PromptCapabilities{ListChanged: true}
	}
	if anyResources {
		caps.Resources = &mcp.ResourceCapabilities{ListChanged: true, Subscribe: true}
	}
	opts := &mcp.ServerOptions{
		Instructions:       g.instructions(mode),
		Logger:             g.opts.Logger,
		Capabilities:       caps,
		CompletionHandler:  s.complete,
		SubscribeHandler:   s.subscribe,
		UnsubscribeHandler: s.unsubscribe,
		InitializedHandler: func(context.Context, *mcp.InitializedRequest) { s.started() },
	}
	if id != "" {
		opts.GetSessionID = func() string { return id }
	}
	s.server = mcp.NewServer(&mcp.Implementation{Name: "capbroker-gateway", Title: "capbroker gateway", Version: Version}, opts)
	s.server.AddReceivingMiddleware(s.guard)
	s.server.AddSendingMiddleware(keepRawElicit)
	s.server.AddReceivingMiddleware(s.traceServer) // outermost: spans cover the guard's wait

	if mode != ModeAll {
		h := policy.Hatch()
		s.server.AddTool(&mcp.Tool{Name: h.Name, Description: h.Description, InputSchema: h.InputSchema,
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, Title: "Find capabilities"}}, s.find)
		if mode.callsThrough() {
			s.server.AddTool(&mcp.Tool{Name: CallName, Description: callDescription, InputSchema: json.RawMessage(callSchema),
				Annotations: &mcp.ToolAnnotations{Title: "Call a found capability"}}, s.callCapability)
		}
		s.addRouteTool()
	}

	// Registered before its tools are loaded and first synced, a session
	// misses neither a catalog refresh nor a find of another session
	// under its name that happens meanwhile.
	g.mu.Lock()
	if len(g.sessions) >= g.opts.MaxSessions {
		g.mu.Unlock()
		return nil, fmt.Errorf("opening session %s: %w (%d, the most the gateway keeps)", key, ErrTooManySessions, g.opts.MaxSessions)
	}
	g.sessions[s] = struct{}{}
	n := len(g.sessions)
	g.mu.Unlock()
	g.opts.Metrics.sessions(n)

	if mode != ModeAll {
		var (
			names []string
			ok    bool
			err   error
		)
		if !anon {
			names, ok, err = g.opts.Store.Load(ctx, key)
			if err != nil {
				g.opts.Logger.Warn("loading a session's exposed tools; starting afresh", "session", key, "error", err)
			}
		}
		// What is stored and traced waits for the client's initialized
		// notification: a request that opens a session the client then
		// drops (a version probe) leaves nothing behind.
		var onStart func(context.Context)
		provisional := false
		if !ok || err != nil {
			provisional = !g.isReady()
			var sel *policy.Selection
			rctx, note := withRankNote(ctx)
			if planTask != "" {
				if sel, err = g.planSelection(rctx, cat, planTask); err != nil {
					return nil, err
				}
			} else {
				sel = cat.broker.Select(rctx, g.opts.Task, &policy.Options{Family: g.opts.Family})
			}
			names = sel.Names()
			onStart = func(ctx context.Context) {
				// Recorded as the session holds it once upstreams have
				// started: late ones may have added to the selection.
				g.awaitStart(ctx)
				cat := g.catalog()
				s.mu.Lock()
				names := slices.Clone(s.order)
				s.mu.Unlock()
				if !anon {
					if err := g.opts.Store.Save(ctx, key, names); err != nil {
						g.opts.Logger.Warn("saving a session's exposed tools", "session", key, "error", err)
					}
				}
				g.opts.Metrics.tokensSaved(cat.fullTokens - cat.tokens(names))
				if planTask != "" {
					reason := sel.Reason
					if fresh, err := g.planSelection(ctx, cat, planTask); err == nil {
						reason = fresh.Reason // on the catalog of every upstream started
					}
					g.opts.Trace.Record(ctx, Event{Session: key, Kind: "plan", Mode: string(mode), Query: sel.Task,
						Names: names, Exposed: names, Reason: "plan task " + planTask + ": " + reason,
						TokensExposed: cat.tokens(names), TokensFull: cat.fullTokens})
				}
				g.opts.Trace.Record(ctx, Event{Session: key, Kind: "select", Mode: string(mode), Query: g.opts.Task,
					Names: names, Exposed: names, Reason: sel.Reason, Ranking: note.get(),
					TokensExposed: cat.tokens(names), TokensFull: cat.fullTokens})
			}
		} else {
			onStart = func(ctx context.Context) {
				// Judged once upstreams have started: a tool of one still
				// starting is not missing.
				g.awaitStart(ctx)
				cat := g.catalog()
				var missing []string
				for _, n := range names {
					if _, ok := cat.tools[n]; !ok {
						missing = append(missing, n)
					}
				}
				reason := fmt.Sprintf("resumed with %d exposed tools", len(names))
				ev := Event{Session: key, Kind: "resume", Mode: string(mode), Exposed: names, Reason: reason,
					TokensExposed: cat.tokens(names), TokensFull: cat.fullTokens}
				if len(missing) > 0 {
					ev.Failure = fmt.Sprintf("%d exposed tool(s) not offered now (their server is down, stopped listing them, or they are held back), kept: %s",
						len(missing), strings.Join(missing, ", "))
				}
				g.opts.Trace.Record(ctx, ev)
			}
		}
		s.mu.Lock()
		s.onStart = onStart
		s.provisional, s.planTask = provisional, planTask
		s.addLocked(names)
		for _, n := range names {
			s.initial[n] = true
		}
		s.mu.Unlock()
	}
	s.sync()
	hook(ctx, hookSessionSynced, key)
	return s, nil
}

const callDescription = "Call a capability that find_capability returned. Give its name and its arguments (an object matching the input schema find_capability showed)."

const callSchema = `{"type":"object","properties":{"name":{"type":"string","description":"The capability's name, as find_capability returned it."},"arguments":{"type":"object","description":"The arguments, matching its input schema."}},"required":["name"]}`

func (g *Gateway) instructions(mode Mode) string {
	switch mode {
	case ModeSearch:
		return "Only a few tools are listed. When none fits, call find_capability with what you need in plain words: the tools it finds are added to your tool list."
	case ModeCall:
		return "Only a few tools are listed. When none fits, call find_capability with what you need in plain words, then call what it found with call_capability(name, arguments)."
	case ModeAuto:
		return "Only a few tools are listed. When none fits, call find_capability with what you need in plain words: the tools it finds are added to your tool list. Call them by name, or, if your tool list does not show them, with call_capability(name, arguments)."
	}
	return ""
}

func (g *Gateway) dropSession(s *session) {
	g.mu.Lock()
	delete(g.sessions, s)
	n := len(g.sessions)
	g.mu.Unlock()
	g.opts.Metrics.sessions(n)
}

// started runs once the client has initialized the session: it saves
// and traces the session's start.
//
// A request that arrives while the start is being recorded (the client's
// initialized notification and its first request are handled
// concurrently) waits for it, so the start always precedes the session's
// finds and calls in the store and the trace.
func (s *session) started() {
	s.startMu.Lock()
	defer s.startMu.Unlock()
	s.mu.Lock()
	f := s.onStart
	s.onStart = nil
	s.mu.Unlock()
	if f != nil {
		f(context.Background())
	}
}

// isHatch reports whether name is one of the gateway's own tools in mode.
func isHatch(mode Mode, name string) bool {
	return mode != ModeAll && (name == policy.HatchName || (mode.callsThrough() && name == CallName))
}

// sync brings the session's server up to date with the catalog in use:
// tools (by mode), prompts, resources and templates. The SDK sends
// list_changed for what changed. The catalog is read under the session's
// lock, so of two syncs racing, the later one applies the newer catalog.
func (s *session) sync() {
	s.mu.Lock()
	defer s.mu.Unlock()
	ready := s.g.isReady() // before the catalog: once ready, the catalog read holds every upstream
	cat := s.g.catalog()
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
		sel = cat.broker.Select(context.Background(), g.opts.Task, &policy.Options{Family: g.opts.Family})
	}
	added := s.addLocked(sel.Names())
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
	tools := s.g.catalog().allTools()
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
	e, ok := s.g.catalog().tools[name]
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

// guard answers calls to tools this session was not given with an error
// that names find_capability (auto, search and call modes), and calls to tools
// held back (irreversible, changed since approved, new) with why and what
// releases them (every mode).
func (s *session) guard(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "initialize" && method != "ping" && !strings.HasPrefix(method, "notifications/") {
			// Answered at once, initialize never waits for upstreams; the
			// requests after it do, up to Options.StartWait after Start.
			s.g.awaitStart(ctx)
		}
		if method != "initialize" && method != "server/discover" {
			// The session is in use (clients of protocol 2026-07-28 and
			// later send no initialized notification).
			s.started()
		}
		if s.mode == ModeAll && method == "tools/list" {
			return s.listAll(req)
		}
		if method != "tools/call" {
			return next(ctx, method, req)
		}
		p, ok := req.GetParams().(*mcp.CallToolParamsRaw)
		if !ok {
			return next(ctx, method, req)
		}
		if s.mode == ModeAll {
			// Every offered tool is listed; a held one gets told why.
			if h, held := s.g.catalog().heldTool(p.Name); held {
				s.traceRefused(p.Name, "held", h.Why)
				return errorResult(h.Why), nil
			}
			s.registerAll(p.Name)
			return next(ctx, method, req)
		}
		s.mu.Lock()
		_, listed := s.listed[p.Name]
		s.mu.Unlock()
		if listed || isHatch(s.mode, p.Name) || s.routes(p.Name) {
			return next(ctx, method, req)
		}
		return s.notExposed(p.Name), nil
	}
}

func (s *session) notExposed(name string) *mcp.CallToolResult {
	how := "call find_capability with what you need; the tools it finds become callable"
	switch s.mode {
	case ModeCall:
		how = "call find_capability with what you need, then call what it finds with call_capability"
	case ModeAuto:
		how = "call find_capability with what you need, then call what it finds by name or with call_capability"
	}
	cat := s.g.catalog()
	if h, ok := cat.heldTool(name); ok {
		s.traceRefused(name, "held", h.Why)
		return errorResult(h.Why)
	}
	if _, ok := cat.tools[name]; !ok {
		msg := fmt.Sprintf("unknown tool %q: no server offers it; %s", name, how)
		s.traceRefused(name, "unknown", msg)
		return errorResult(msg)
	}
	msg := fmt.Sprintf("tool %q is not exposed in this session; %s", name, how)
	s.traceRefused(name, "not_exposed", msg)
	return errorResult(msg)
}

// traceRefused records a call the gateway refused without reaching an
// upstream.
func (s *session) traceRefused(name, outcome, msg string) {
	cat := s.g.catalog()
	exposed := s.exposedNames(cat)
	s.g.opts.Trace.Record(context.Background(), Event{Session: s.key, Kind: "call", Mode: string(s.mode), Tool: name,
		Outcome: outcome, Failure: msg, Exposed: exposed, TokensExposed: cat.tokens(exposed), TokensFull: cat.fullTokens,
		Finds: s.findCount()})
}

// exposedNames are the upstream tools the session may call now: every
// tool in ModeAll, else what it was given and found.
func (s *session) exposedNames(cat *catalog) []string {
	if s.mode == ModeAll {
		return slices.Clone(cat.names)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.order)
}

func errorResult(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
}

// callTool proxies a listed tool.
func (s *session) callTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return s.g.callTool(ctx, s, req.Session, req.Params.Name, req.Params.Arguments, req.Params.Meta)
}

// findArgs are find_capability's arguments.
type findArgs struct {
	Query string `json:"query"`
	K     int    `json:"k"`
}

// found is one result of find_capability, as the model reads it.
type found struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
	Risk        card.Risk       `json:"risk"`
	Confidence  string          `json:"confidence"`
	// Reason says what matched: the words, and the meaning when ranked
	// hybrid ("similarity 0.62").
	Reason string `json:"reason,omitempty"`
}

// heldFound is a held-back tool that matched a find_capability query.
type heldFound struct {
	Name        string    `json:"name"`
	Description string    `json:"description"`
	Risk        card.Risk `json:"risk"`
	Held        string    `json:"held"` // the kind of hold: irreversible, changed, new, distrust
	Why         string    `json:"why"`
}

func (s *session) find(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var a findArgs
	if len(req.Params.Arguments) > 0 {
		if err := json.Unmarshal(req.Params.Arguments, &a); err != nil {
			return errorResult("find_capability: arguments must be {\"query\": string, \"k\": integer}: " + err.Error()), nil
		}
	}
	if strings.TrimSpace(a.Query) == "" {
		return errorResult("find_capability: give a query: what the capability should do, in plain words"), nil
	}
	k := a.K
	if k <= 0 {
		k = s.g.opts.FindK
	}
	k = min(k, 20)
	cat := s.g.catalog()
	start := time.Now()
	rctx, note := withRankNote(ctx)
	res := cat.broker.Find(rctx, a.Query, k)
	out := struct {
		Query   string  `json:"query"`
		Reason  string  `json:"reason"`
		Matches []found `json:"matches"`
		Next    string  `json:"next,omitempty"`
		// Held are matching tools the gateway holds back, with why and
		// what releases them: held is not absent.
		Held []heldFound `json:"held,omitempty"`
	}{Query: a.Query, Reason: res.Reason, Matches: []found{}}
	var names []string
	for _, m := range res.Matches {
		if isHatch(s.mode, m.Name) {
			continue
		}
		out.Matches = append(out.Matches, found{Name: m.Name, Description: m.Description, InputSchema: m.InputSchema, Risk: m.Risk, Confidence: m.Confidence, Reason: m.Reason})
		names = append(names, m.Name)
	}
	if cat.heldBroker != nil {
		for _, m := range cat.heldBroker.Find(ctx, a.Query, k).Matches {
			if h, ok := cat.heldTool(m.Name); ok {
				out.Held = append(out.Held, heldFound{Name: m.Name, Description: m.Description, Risk: m.Risk, Held: h.Kind, Why: h.Why})
			}
		}
		switch {
		case len(out.Held) == 0:
		case len(names) == 0:
			out.Reason = fmt.Sprintf("no capability available in this session matches %q, but %d held-back tool(s) do: see held for why each is held and what releases it", a.Query, len(out.Held))
		default:
			out.Reason += fmt.Sprintf("; %d more matching tool(s) are held back: see held", len(out.Held))
		}
	}
	if len(names) > 0 {
		switch s.mode {
		case ModeCall:
			out.Next = "call one with call_capability(name, arguments)"
		case ModeAuto:
			out.Next = "these tools are now in your tool list; call them by name, or with call_capability(name, arguments) if your tool list does not show them yet"
		default:
			out.Next = "these tools are now in your tool list; call them by name"
		}
	}
	hook(ctx, hookFindSearched, s.key)
	s.mu.Lock()
	added := s.addLocked(names)
	s.finds++
	finds := s.finds
	s.mu.Unlock()
	if len(added) > 0 {
		s.share(ctx)
	}
	all := s.exposedNames(cat)
	s.g.opts.Metrics.find(len(names))
	var held []string
	for _, h := range out.Held {
		held = append(held, h.Name)
	}
	s.g.opts.Trace.Record(ctx, Event{Session: s.key, Kind: "find", Mode: string(s.mode), Query: a.Query, Names: names,
		Found: added, Held: held, Exposed: all, Reason: out.Reason, TokensFound: cat.tokens(names),
		TokensExposed: cat.tokens(all), TokensFull: cat.fullTokens, DurationMS: ms(time.Since(start)), Finds: finds,
		Ranking: note.get()})
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return nil, err
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil
}

// addLocked adds names to the exposed tools, in order, and returns those
// that were not exposed yet. s.mu is held.
func (s *session) addLocked(names []string) []string {
	var added []string
	for _, n := range names {
		if !s.exposed[n] {
			s.exposed[n] = true
			s.order = append(s.order, n)
			added = append(added, n)
		}
	}
	return added
}

// share makes the session's exposed tools those of its name: it adds them
// to the stored set (a union, whatever order concurrent saves land in),
// reads back that set (which holds what other sessions of the name found,
// through this gateway or another one sharing the store) and gives it to
// every live session of the name, listing it in auto and search modes. An anonymous
// session only lists its own.
func (s *session) share(ctx context.Context) {
	if s.anon {
		if s.mode.listsFound() {
			s.sync()
		}
		return
	}
	g := s.g
	s.mu.Lock()
	all := slices.Clone(s.order)
	s.mu.Unlock()
	if err := g.opts.Store.Save(ctx, s.key, all); err != nil {
		g.opts.Logger.Warn("saving a session's exposed tools", "session", s.key, "error", err)
	}
	if stored, ok, err := g.opts.Store.Load(ctx, s.key); err != nil {
		g.opts.Logger.Warn("reading back a session's exposed tools", "session", s.key, "error", err)
	} else if ok {
		all = merge(all, stored)
	}
	for _, o := range g.liveSessions() {
		if o.key != s.key || o.anon {
			continue
		}
		o.mu.Lock()
		added := o.addLocked(all)
		o.mu.Unlock()
		if (len(added) > 0 || o == s) && o.mode.listsFound() {
			o.sync()
		}
	}
}

func (s *session) findCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.finds
}

func (s *session) callCapability(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var a struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if len(req.Params.Arguments) > 0 {
		if err := json.Unmarshal(req.Params.Arguments, &a); err != nil {
			return errorResult("call_capability: arguments must be {\"name\": string, \"arguments\": object}: " + err.Error()), nil
		}
	}
	if a.Name == "" {
		return errorResult("call_capability: give the name of a capability find_capability returned"), nil
	}
	s.mu.Lock()
	ok := s.exposed[a.Name]
	s.mu.Unlock()
	if !ok || isHatch(s.mode, a.Name) {
		return s.notExposed(a.Name), nil
	}
	return s.g.callTool(ctx, s, req.Session, a.Name, a.Arguments, req.Params.Meta)
}

// callTool runs the named gateway tool on its upstream, asking first when
// it is irreversible.
func (g *Gateway) callTool(ctx context.Context, s *session, ss *mcp.ServerSession, name string, args json.RawMessage, meta mcp.Meta) (*mcp.CallToolResult, error) {
	start := time.Now()
	cat := g.catalog()
	e, ok := cat.tools[name]
	if !ok {
		if h, held := cat.heldTool(name); held {
			s.traceRefused(name, "held", h.Why)
			return errorResult(h.Why), nil
		}
		msg := fmt.Sprintf("tool %q is no longer offered: its server stopped listing it", name)
		s.traceRefused(name, "unknown", msg)
		return errorResult(msg), nil
	}
	u := e.up
	exposed := s.exposedNames(cat)
	ev := Event{Session: s.key, Kind: "call", Mode: string(s.mode), Tool: name, ToolDigest: e.card.Digest, Upstream: u.cfg.Name,
		Exposed: exposed, TokensExposed: cat.tokens(exposed), TokensFull: cat.fullTokens, Finds: s.findCount()}
	record := func(outcome string) {
		ev.Outcome, ev.DurationMS = outcome, ms(time.Since(start))
		g.opts.Metrics.call(u.cfg.Name, outcome, time.Since(start))
		g.opts.Trace.Record(ctx, ev)
	}
	if e.card.Risk == card.RiskIrreversible {
		if msg := g.confirm(ctx, ss, e, args); msg != "" {
			record("denied")
			return errorResult(msg), nil
		}
	}
	var res *mcp.CallToolResult
	err := u.do(ctx, ss, meta, func(ctx context.Context, cs *mcp.ClientSession, m mcp.Meta) error {
		var a any
		if len(args) > 0 {
			a = args
		}
		var err error
		res, err = cs.CallTool(ctx, &mcp.CallToolParams{Meta: m, Name: e.tool.Name, Arguments: a})
		return err
	})
	if err != nil {
		if ctx.Err() != nil {
			record("cancelled")
			return nil, ctx.Err()
		}
		var werr *jsonrpc.Error
		if errors.As(err, &werr) {
			record("error")
			return nil, werr
		}
		outcome := "error"
		if errors.Is(err, context.DeadlineExceeded) {
			outcome = "timeout"
		}
		record(outcome)
		return errorResult(u.redact(g.explain(u, e.tool.Name, err))), nil
	}
	if res.IsError {
		record("tool_error")
	} else {
		record("ok")
	}
	return res, nil
}

// explain turns a failure to reach an upstream into a message a model and
// a person can act on.
func (g *Gateway) explain(u *upstream, tool string, err error) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("capbroker gateway: server %q did not answer %s within %s; the call was cancelled (%v)", u.cfg.Name, tool, u.timeout, err)
	case errors.Is(err, ErrUpstreamDown):
		return fmt.Sprintf("capbroker gateway: server %q is not connected and is being restarted; try again shortly (%v)", u.cfg.Name, err)
	case errors.Is(err, mcp.ErrConnectionClosed), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Sprintf("capbroker gateway: server %q closed the connection during %s (it is being restarted; try again): %v", u.cfg.Name, tool, err)
	}
	return fmt.Sprintf("capbroker gateway: calling %s on server %q failed: %v", tool, u.cfg.Name, err)
}

// do runs f on the upstream's session within its timeout, with the call
// registered so what the upstream sends meanwhile reaches ss. A progress
// token in meta is replaced by one unique to the gateway and mapped back.
func (u *upstream) do(ctx context.Context, ss *mcp.ServerSession, meta mcp.Meta, f func(context.Context, *mcp.ClientSession, mcp.Meta) error) error {
	ctx, cancel := context.WithTimeout(ctx, u.timeout)
	defer cancel()
	for attempt := 0; ; attempt++ {
		cs, err := u.session(ctx)
		if err != nil {
			return err
		}
		err = u.doOn(ctx, cs, ss, meta, f)
		if attempt == 0 && errors.Is(err, mcp.ErrConnectionClosed) && ctx.Err() == nil {
			// The connection was already closing: the request never left,
			// so it is safe to send it again on the restarted one.
			u.dead(cs)
			continue
		}
		return err
	}
}

func (u *upstream) doOn(ctx context.Context, cs *mcp.ClientSession, ss *mcp.ServerSession, meta mcp.Meta, f func(context.Context, *mcp.ClientSession, mcp.Meta) error) error {
	var token any
	if meta != nil {
		token = meta["progressToken"]
	}
	c, end := u.begin(ctx, ss, token)
	defer end()
	m := forwardMeta(meta)
	if token != nil {
		m["progressToken"] = progressToken(u.cfg.Name, c.id)
	}
	return f(ctx, cs, m)
}

// hopMeta are the _meta keys that describe the client's own connection
// (protocol 2026-07-28 and later send them with every request): they
// belong to the hop between the client and the gateway, and an upstream
// that speaks another version refuses requests that carry them.
var hopMeta = []string{mcp.MetaKeyProtocolVersion, mcp.MetaKeyClientInfo, mcp.MetaKeyClientCapabilities, mcp.MetaKeyLogLevel}

// forwardMeta returns a copy of a downstream request's _meta to send
// upstream, without the hop's own keys; nil stays nil.
func forwardMeta(meta mcp.Meta) mcp.Meta {
	if meta == nil {
		return nil
	}
	m := maps.Clone(meta)
	for _, k := range hopMeta {
		delete(m, k)
	}
	if len(m) == 0 && meta["progressToken"] == nil {
		return nil
	}
	return m
}

func (s *session) getPrompt(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	e, ok := s.g.catalog().prompts[req.Params.Name]
	if !ok {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown prompt %q", req.Params.Name)}
	}
	var res *mcp.GetPromptResult
	err := e.up.do(ctx, req.Session, req.Params.Meta, func(ctx context.Context, cs *mcp.ClientSession, m mcp.Meta) error {
		p := *req.Params
		p.Meta, p.Name = m, e.prompt.Name
		var err error
		res, err = cs.GetPrompt(ctx, &p)
		return err
	})
	return res, s.g.protocolError(e.up, "prompts/get", err)
}

func (s *session) readResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	u := s.g.catalog().resourceOwner(req.Params.URI)
	if u == nil {
		return nil, mcp.ResourceNotFoundError(req.Params.URI)
	}
	var res *mcp.ReadResourceResult
	err := u.do(ctx, req.Session, req.Params.Meta, func(ctx context.Context, cs *mcp.ClientSession, m mcp.Meta) error {
		p := *req.Params
		p.Meta = m
		var err error
		res, err = cs.ReadResource(ctx, &p)
		return err
	})
	return res, s.g.protocolError(u, "resources/read", err)
}

func (s *session) complete(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	empty := &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{}}}
	if req.Params == nil || req.Params.Ref == nil {
		return empty, nil
	}
	cat := s.g.catalog()
	p := *req.Params
	ref := *p.Ref
	var u *upstream
	switch ref.Type {
	case "ref/prompt":
		if e, ok := cat.prompts[ref.Name]; ok {
			u, ref.Name = e.up, e.prompt.Name
		}
	case "ref/resource":
		u = cat.resourceOwner(ref.URI)
		if u == nil {
			if t, ok := cat.templates[ref.URI]; ok {
				u = t.up
			}
		}
	}
	if u == nil {
		return empty, nil
	}
	if l := u.listing(); l.caps == nil || l.caps.Completions == nil {
		return empty, nil
	}
	p.Ref = &ref
	var res *mcp.CompleteResult
	err := u.do(ctx, req.Session, p.Meta, func(ctx context.Context, cs *mcp.ClientSession, m mcp.Meta) error {
		p.Meta = m
		var err error
		res, err = cs.Complete(ctx, &p)
		return err
	})
	return res, s.g.protocolError(u, "completion/complete", err)
}

func (s *session) subscribe(ctx context.Context, req *mcp.SubscribeRequest) error {
	u := s.g.catalog().resourceOwner(req.Params.URI)
	if u == nil {
		return mcp.ResourceNotFoundError(req.Params.URI)
	}
	return s.g.protocolError(u, "resources/subscribe", u.subscribe(ctx, req.Params.URI))
}

func (s *session) unsubscribe(ctx context.Context, req *mcp.UnsubscribeRequest) error {
	u := s.g.catalog().resourceOwner(req.Params.URI)
	if u == nil {
		return nil
	}
	return s.g.protocolError(u, "resources/unsubscribe", u.unsubscribe(ctx, req.Params.URI))
}

// protocolError passes an upstream's JSON-RPC error through unchanged and
// explains any other failure.
func (g *Gateway) protocolError(u *upstream, method string, err error) error {
	if err == nil {
		return nil
	}
	var werr *jsonrpc.Error
	if errors.As(err, &werr) {
		return werr
	}
	if errors.Is(err, context.Canceled) {
		return err
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: g.explain(u, method, err)}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
