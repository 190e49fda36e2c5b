package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/capbroker/capbroker/policy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// session is one client session: its own MCP server, holding exactly the
// tools that session was given. What it holds beyond the server's own
// listing is its [sessionState], guarded by mu.
type session struct {
	g      *Gateway
	key    string
	mode   Mode
	anon   bool // the client gave no name: nothing is stored, nothing shared
	server *mcp.Server
	client string // who opened it over HTTP (clientIdentity); "" over stdio
	// clientKind is the kind of client it serves ([Clients]; see
	// clientkind.go), "" for the gateway's.
	clientKind string
	// id is the MCP session ID (HTTP), identity the name of the identity
	// that opened the session, if any (see identity.go).
	id, identity string

	mu sync.Mutex
	sessionState
	listed    map[string]string     // tool name -> definition key, as listed
	onStart   func(context.Context) // saves and traces the start; run once, when initialized
	startMu   sync.Mutex            // held while onStart runs, so no request overtakes the start
	prompts   map[string]string     // prompt name -> definition key, as listed
	resources map[string]string     // resource URI -> definition key, as listed
	templates map[string]string     // template URI -> definition key, as listed
	// limits are the profiles the session keeps within beyond the
	// gateway's (an identity's, a request's); pinSeen the pins it was
	// given (see profiles.go).
	limits  []profileRef
	pinSeen map[string]bool
	ended   sync.Once   // the end is recorded once (sessionend.go)
	inited  atomic.Bool // the client sent initialized
}

// newSession creates the server for one client session and registers it
// (the caller drops it with dropSession when it ends). key identifies the
// session in the store and the trace; id, if set, becomes its MCP session
// ID. An anonymous session (the client gave no name) neither loads nor
// stores its tools: they end with it.
//
// Sessions of one name share what they find (see [session.share]).
func (g *Gateway) newSession(ctx context.Context, key, id string, mode Mode, anon bool, planTask string) (*session, error) {
	return g.newClientSession(ctx, "", key, id, mode, anon, planTask)
}

// newClientSession is newSession for a client of kind ([Clients]; "" for
// the gateway's, Options.Client).
func (g *Gateway) newClientSession(ctx context.Context, kind, key, id string, mode Mode, anon bool, planTask string) (*session, error) {
	s := &session{g: g, key: key, id: id, mode: mode, anon: anon, clientKind: kind, sessionState: sessionState{exposed: map[string]bool{}, initial: map[string]bool{}},
		listed: map[string]string{}, prompts: map[string]string{}, resources: map[string]string{}, templates: map[string]string{}}
	// cat serves the selection and the trace of the start; the tools
	// listed always come from the catalog in use (see sync).
	cat := s.catalog()
	caps := &mcp.ServerCapabilities{
		Logging: &mcp.LoggingCapabilities{},
		Tools:   &mcp.ToolCapabilities{ListChanged: true},
	}
	var anyPrompts, anyResources bool
	for _, u := range g.upstreams() {
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
		Logger:             g.sdkLog,
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
		s.server.AddTool(g.hatchTool(), s.find)
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
	if id != "" {
		g.byID.Store(id, s)
	}
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
		var planNames []string
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
				sel = cat.broker.Select(rctx, g.opts.Task, s.selectOptions())
			}
			names = merge(g.pinned(cat), sel.Names())
			if planTask != "" {
				for _, p := range sel.Tools {
					if !p.Floor {
						planNames = append(planNames, p.Name)
					}
				}
			}
			onStart = func(ctx context.Context) {
				// Recorded as the session holds it once upstreams have
				// started: late ones may have added to the selection.
				g.awaitStart(ctx)
				cat := s.catalog()
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
				cat := s.catalog()
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
		s.provisional, s.planTask, s.planNames = provisional, planTask, planNames
		s.addLocked(names)
		for _, n := range names {
			s.initial[n] = true
		}
		s.pinSeen = map[string]bool{}
		for _, n := range g.pinned(cat) {
			s.pinSeen[n] = true
		}
		s.mu.Unlock()
	}
	s.sync()
	hook(ctx, hookSessionSynced, key)
	return s, nil
}
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
	g.byID.CompareAndDelete(s.id, s)
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
	s.inited.Store(true)
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
