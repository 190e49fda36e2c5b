package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/capbroker/capbroker/store"
)

// A fleet is the MCP sessions one HTTP handler serves when the gateway's
// session store keeps MCP sessions ([store.MCPSessions]: SQLite or
// PostgreSQL through [StoreSessions]). Every session opened here is
// written to the database before its initialize is answered; a request
// that carries an Mcp-Session-Id this handler does not hold is served by
// rebuilding the session from the database (its server, its tools, the
// client's initialize replayed to the SDK), so any replica sharing the
// database serves any request of any session, with no affinity.
//
// What a session finds is in the database before the find is answered
// (a named session's in its store.Session, an anonymous one's in its
// mcp_sessions row); a replica holding a copy reads it back when the
// client lists its tools or calls one the copy lacks, so a tool found on
// one replica is listed and callable on the next.
type fleet struct {
	g    *Gateway
	st   store.MCPSessions
	idle time.Duration // sessions untouched this long expire from the database

	mu      sync.Mutex
	byID    map[string]*session      // sessions held here, by MCP session ID
	ids     map[*session]string      // and back
	rebuilt map[*session]bool        // rebuilt here: their replayed initialize stores nothing
	pending map[string]chan struct{} // rebuilds under way, closed when done
	touched map[string]time.Time     // when each session was last touched in the database
	bus     store.Notifier           // nil: replicas learn of changes when a request comes
	events  *fleetEvents             // nil: streams are not stored
	self    string                   // names this fleet's messages, which it does not act on
}

// fleetState is the gateway's part of a stored MCP session
// (store.MCPSession.State).
type fleetState struct {
	Mode     Mode   `json:"mode"`
	PlanTask string `json:"plan_task,omitempty"`
	// Client is the kind of client the session serves (ClientHeader), ""
	// for the gateway's.
	Client string `json:"client,omitempty"`
	// Init is the client's initialize request, with the protocol version
	// the gateway agreed to: replayed to rebuild the session.
	Init *mcp.InitializeParams `json:"init"`
	// Initial are the tools an anonymous session was listed from the
	// start (what call mode lists).
	Initial []string `json:"initial,omitempty"`
}

// newFleet returns the fleet of g's store, or nil if the store does not
// keep MCP sessions (in memory, or a store of another kind): sessions
// then live in this process only.
func newFleet(g *Gateway, idle time.Duration) *fleet {
	ss, ok := g.opts.Store.(*StoreSessions)
	if !ok {
		return nil
	}
	ms, ok := ss.st.(store.MCPSessions)
	if !ok {
		return nil
	}
	g.fleetIdle.Store(int64(idle))
	f := &fleet{g: g, st: ms, idle: idle, byID: map[string]*session{}, ids: map[*session]string{},
		rebuilt: map[*session]bool{}, pending: map[string]chan struct{}{}, touched: map[string]time.Time{}}
	f.bus, _ = ss.st.(store.Notifier)
	f.self = newID()[:12]
	g.subscribeFleet(f.hear)
	return f
}

// attach registers s, just created with MCP session ID id, and adds the
// middleware that stores and refreshes it.
func (f *fleet) attach(s *session, id string, rebuilt bool) {
	f.mu.Lock()
	f.byID[id], f.ids[s] = s, id
	if rebuilt {
		f.rebuilt[s] = true
	}
	f.mu.Unlock()
	s.server.AddReceivingMiddleware(f.middleware(s, id))
}

// dropped forgets s, which ended here (it may live on elsewhere).
func (f *fleet) dropped(s *session) {
	f.mu.Lock()
	defer f.mu.Unlock()
	id, ok := f.ids[s]
	if !ok {
		return
	}
	delete(f.ids, s)
	delete(f.rebuilt, s)
	if f.byID[id] == s {
		delete(f.byID, id)
		delete(f.touched, id)
	}
}

// holds reports whether the session id is held and connected here.
func (f *fleet) holds(id string) bool {
	f.mu.Lock()
	s := f.byID[id]
	f.mu.Unlock()
	return s != nil && hasSessions(s.server)
}

// errNoSession: the database holds no session of the ID either.
var errNoSession = errors.New("session not found")

// ensure makes sure the session id is held here, rebuilding it from the
// database if it is not; rebuilt says this call rebuilt it (the client's
// initialized notification, replayed, is then not to be sent again).
// serve is the handler of /mcp requests that carry a holder (see
// Gateway.Handler). Concurrent requests of one session rebuild it once.
func (f *fleet) ensure(ctx context.Context, r *http.Request, id string, serve func(http.ResponseWriter, *http.Request, *holder)) (rebuilt bool, err error) {
	for {
		if f.holds(id) {
			return false, nil
		}
		f.mu.Lock()
		wait, busy := f.pending[id]
		if !busy {
			wait = make(chan struct{})
			f.pending[id] = wait
		}
		f.mu.Unlock()
		if busy {
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return false, ctx.Err()
			}
		}
		err := f.rebuild(ctx, r, id, serve)
		f.mu.Lock()
		delete(f.pending, id)
		f.mu.Unlock()
		close(wait)
		return err == nil, err
	}
}

// isInitialized reports whether r carries the client's initialized
// notification (alone), leaving r's body to be read again.
func isInitialized(r *http.Request) bool {
	if r.Method != http.MethodPost || r.Body == nil {
		return false
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, 1<<16))
	r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(b), r.Body))
	if err != nil {
		return false
	}
	var msg struct {
		Method string `json:"method"`
		ID     any    `json:"id"`
	}
	return json.Unmarshal(b, &msg) == nil && msg.Method == "notifications/initialized" && msg.ID == nil
}

// rebuild makes the session id from its record: a session with its
// stored mode, name, plan task and tools, connected to the SDK by
// replaying the client's initialize and initialized under the session's
// ID.
func (f *fleet) rebuild(ctx context.Context, r *http.Request, id string, serve func(http.ResponseWriter, *http.Request, *holder)) error {
	g := f.g
	m, err := f.st.MCPSession(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return errNoSession
	}
	if err != nil {
		return fmt.Errorf("reading session %s from the database: %w", id, err)
	}
	var st fleetState
	if err := json.Unmarshal(m.State, &st); err != nil || st.Init == nil {
		return fmt.Errorf("session %s: its stored state is unreadable (%v)", id, err)
	}
	if _, err := ParseMode(string(st.Mode)); err != nil {
		return fmt.Errorf("session %s: stored mode: %w", id, err)
	}
	if _, err := ParseClient(st.Client); err != nil {
		return fmt.Errorf("session %s: stored client: %w", id, err)
	}
	anon := m.Key == ""
	key := m.Key
	if anon {
		key = id
	}
	s, err := g.newClientSession(context.WithoutCancel(ctx), st.Client, key, id, st.Mode, anon, st.PlanTask)
	if err != nil {
		return fmt.Errorf("rebuilding session %s: %w", id, err)
	}
	s.mu.Lock()
	s.onStart = nil // its start was recorded where it opened
	s.provisional = false
	if anon && st.Mode != ModeAll {
		// An anonymous session's tools are those of its record, not a
		// new selection.
		s.exposed, s.order, s.initial = map[string]bool{}, nil, map[string]bool{}
		s.addLocked(m.Exposed)
		initial := st.Initial
		if initial == nil {
			initial = m.Exposed
		}
		for _, n := range initial {
			s.initial[n] = true
		}
	}
	s.mu.Unlock()
	s.sync()
	if m.Identity != "" {
		s.identity = m.Identity
		f.g.identities.Store(s.key, m.Identity)
		if p := requestIdentity(r.Context()); p != nil && p.Name == m.Identity {
			if ref, ok := identityProfile(p); ok {
				g.keepWithin(s, ref)
			}
		}
	}
	if name := requestProfile(r); name != "" {
		g.keepWithin(s, profileRef{name: name, from: "the request: " + ProfileHeader + " or ?profile="})
	}
	f.attach(s, id, true)

	h := &holder{s: s}
	init, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": st.Init})
	if err != nil {
		g.dropSession(s)
		f.dropped(s)
		return err
	}
	res := replay(r, serve, h, "", init)
	if res.Code != http.StatusOK || res.Header().Get("Mcp-Session-Id") != id {
		g.dropSession(s)
		f.dropped(s)
		return fmt.Errorf("rebuilding session %s: replaying initialize: %d %s", id, res.Code, bytes.TrimSpace(res.Body.Bytes()))
	}
	res = replay(r, serve, &holder{}, id, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}`))
	if res.Code/100 != 2 {
		return fmt.Errorf("rebuilding session %s: replaying initialized: %d %s", id, res.Code, bytes.TrimSpace(res.Body.Bytes()))
	}
	g.opts.Metrics.fleetRebuilt()
	return nil
}

// replayKey marks the context of a replayed request: what it sends is
// read by no client, and not stored for resumption.
type replayKey struct{}

// replay sends one JSON-RPC message to serve as if the client of r had
// sent it, and returns the response.
func replay(r *http.Request, serve func(http.ResponseWriter, *http.Request, *holder), h *holder, id string, body []byte) *httptest.ResponseRecorder {
	ctx := context.WithValue(context.WithoutCancel(r.Context()), replayKey{}, true)
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, r.URL.Path, bytes.NewReader(body))
	req.Host = r.Host
	req.RemoteAddr = r.RemoteAddr
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if id != "" {
		req.Header.Set("Mcp-Session-Id", id)
	}
	w := httptest.NewRecorder()
	serve(w, req, h)
	return w
}

// forget removes the session id from the database (the client ended it).
func (f *fleet) forget(ctx context.Context, id string) {
	if _, err := f.st.DeleteMCPSession(context.WithoutCancel(ctx), id); err != nil {
		f.g.opts.Logger.Warn("deleting an ended session from the database", "session", id, "error", err)
	}
	if f.events != nil {
		if err := f.events.st.DropMCPEvents(context.WithoutCancel(ctx), id); err != nil {
			f.g.opts.Logger.Warn("deleting an ended session's stream events", "session", id, "error", err)
		}
	}
	f.tell(ctx, "ended", id)
}

// middleware stores the session when the client initializes it, keeps
// what an anonymous session finds in the database, and reads back what
// other replicas found before listing tools or calling one this copy
// lacks.
func (f *fleet) middleware(s *session, id string) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			called := ""
			if s.mode != ModeAll {
				switch method {
				case "tools/list":
					f.refresh(ctx, s, id)
				case "tools/call":
					called = calledTool(req)
					if called != "" && !isHatch(s.mode, called) && !s.isExposed(called) {
						f.refresh(ctx, s, id)
					}
				}
			}
			before := 0
			if method == "tools/call" {
				s.mu.Lock()
				before = len(s.order)
				s.mu.Unlock()
			}
			res, err := next(ctx, method, req)
			switch {
			case method == "initialize" && err == nil:
				if err := f.store(ctx, s, id, req, res); err != nil {
					// Not stored, the session could not be served by
					// another replica: refuse it rather than promise it.
					f.g.opts.Logger.Error("storing a new session", "session", id, "error", err)
					return nil, fmt.Errorf("capbroker gateway: the session could not be stored in the database, try again: %w", err)
				}
			case method == "tools/call" && s.mode != ModeAll:
				// What the call added (a find, a tool called by name) is
				// stored before the client hears of it (a named
				// session's by share), and the other replicas are told.
				s.mu.Lock()
				var names []string
				if len(s.order) > before {
					names = slices.Clone(s.order)
				}
				s.mu.Unlock()
				switch {
				case names == nil:
				case s.anon:
					if _, err := f.st.AddMCPExposed(context.WithoutCancel(ctx), id, names); err != nil {
						f.g.opts.Logger.Warn("storing a session's found tools", "session", id, "error", err)
					}
					f.tell(ctx, "tools", id)
				default:
					f.tell(ctx, "key", s.key)
				}
			}
			f.touch(id)
			return res, err
		}
	}
}

// store writes a session the client just initialized here.
func (f *fleet) store(ctx context.Context, s *session, id string, req mcp.Request, res mcp.Result) error {
	f.mu.Lock()
	rebuilt := f.rebuilt[s]
	f.mu.Unlock()
	if rebuilt {
		return nil
	}
	ip, ok := req.GetParams().(*mcp.InitializeParams)
	if !ok || ip == nil {
		return nil
	}
	p := *ip
	if r, ok := res.(*mcp.InitializeResult); ok && r.ProtocolVersion != "" {
		p.ProtocolVersion = r.ProtocolVersion
	}
	st := fleetState{Mode: s.mode, PlanTask: s.planTask, Client: s.clientKind, Init: &p}
	m := &store.MCPSession{ID: id, Identity: s.identity}
	s.mu.Lock()
	if !s.anon {
		m.Key = s.key
	} else {
		m.Exposed = slices.Clone(s.order)
		for _, n := range s.order {
			if s.initial[n] {
				st.Initial = append(st.Initial, n)
			}
		}
		if st.Initial == nil {
			st.Initial = []string{}
		}
	}
	s.mu.Unlock()
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	m.State = b
	err = f.st.PutMCPSession(context.WithoutCancel(ctx), m)
	if errors.Is(err, store.ErrExists) {
		return nil // a retried initialize
	}
	if err == nil {
		f.mu.Lock()
		f.touched[id] = time.Now()
		f.mu.Unlock()
	}
	return err
}

// refresh adds to s what the database holds for it: what other replicas
// (or other sessions of its name) found.
func (f *fleet) refresh(ctx context.Context, s *session, id string) {
	var names []string
	if s.anon {
		m, err := f.st.MCPSession(ctx, id)
		if err != nil {
			if !errors.Is(err, store.ErrNotFound) {
				f.g.opts.Logger.Warn("reading a session's tools back", "session", id, "error", err)
			}
			return
		}
		names = m.Exposed
	} else {
		stored, ok, err := f.g.opts.Store.Load(ctx, s.key)
		if err != nil {
			f.g.opts.Logger.Warn("reading a session's tools back", "session", s.key, "error", err)
		}
		if !ok {
			return
		}
		names = stored
	}
	s.mu.Lock()
	added := s.addLocked(names)
	s.mu.Unlock()
	if len(added) > 0 && s.mode.listsFound() {
		s.sync()
	}
}

// touch records, at most every quarter of the idle timeout, that the
// session is in use, so no replica expires it while any serves it.
func (f *fleet) touch(id string) {
	now := time.Now()
	f.mu.Lock()
	last, ok := f.touched[id]
	due := !ok || now.Sub(last) >= f.idle/4
	if due {
		f.touched[id] = now
	}
	f.mu.Unlock()
	if !due {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := f.st.TouchMCPSession(ctx, id, now); err != nil {
			f.g.opts.Logger.Warn("touching a session in the database", "session", id, "error", err)
		}
	}()
}

// sweepFleet expires, every minute or so, the sessions of the database
// no replica touched within the idle timeout. Every replica sweeps; a
// sweep deletes at most what the others would.
func (g *Gateway) sweepFleet(ctx context.Context) {
	ss, ok := g.opts.Store.(*StoreSessions)
	if !ok {
		return
	}
	ms, ok := ss.st.(store.MCPSessions)
	if !ok {
		return
	}
	if bus, ok := ss.st.(store.Notifier); ok {
		done := make(chan struct{})
		go func() {
			defer close(done)
			g.listenFleet(ctx, bus)
		}()
		defer func() { <-done }()
	}
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		idle := time.Duration(g.fleetIdle.Load())
		if idle <= 0 {
			continue
		}
		n, err := ms.ExpireMCPSessions(ctx, time.Now().Add(-idle))
		if err != nil && ctx.Err() == nil {
			g.opts.Logger.Warn("expiring idle sessions from the database", "error", err)
		}
		if n > 0 {
			g.opts.Logger.Debug("expired idle sessions from the database", "sessions", n)
		}
		if ev, ok := ss.st.(store.MCPEvents); ok && g.streamEvents.Load() > 0 {
			n, err := ev.TrimMCPEvents(ctx, int(g.streamEvents.Load()), time.Now().Add(-time.Duration(g.streamRetention.Load())))
			if err != nil && ctx.Err() == nil {
				g.opts.Logger.Warn("dropping old stream events from the database", "error", err)
			}
			if n > 0 {
				g.opts.Logger.Debug("dropped old stream events from the database", "events", n)
			}
		}
	}
}

// calledTool is the gateway tool a tools/call request names: the name
// given to call_capability, or the tool called.
func calledTool(req mcp.Request) string {
	p, ok := req.GetParams().(*mcp.CallToolParamsRaw)
	if !ok {
		return ""
	}
	if p.Name != CallName {
		return p.Name
	}
	var a struct {
		Name string `json:"name"`
	}
	if json.Unmarshal(p.Arguments, &a) != nil {
		return ""
	}
	return a.Name
}

// isExposed reports whether name is among s's exposed tools.
func (s *session) isExposed(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.exposed[name]
}

// fleetChannel is the channel replicas tell each other of session changes
// on (store.Notifier).
const fleetChannel = "capbroker_fleet"

// tell the other replicas that something of a session changed: "tools"
// (an anonymous session's tools grew; arg is its ID), "key" (a named
// session's; arg is its name) or "ended" (arg is its ID). A replica that
// misses it reads the database at the session's next request anyway.
func (f *fleet) tell(ctx context.Context, kind, arg string) {
	if f.bus == nil {
		return
	}
	if err := f.bus.Notify(context.WithoutCancel(ctx), fleetChannel, kind+" "+f.self+" "+arg); err != nil {
		f.g.opts.Logger.Warn("telling the other replicas of a session change", "change", kind, "error", err)
	}
}

// hear acts on what another replica told: a session whose tools grew is
// read back (its client gets list_changed on the stream it holds here),
// one that ended is closed here too.
func (f *fleet) hear(msg string) {
	kind, rest, _ := strings.Cut(msg, " ")
	from, arg, ok := strings.Cut(rest, " ")
	if !ok || from == f.self {
		return
	}
	var affected []*session
	f.mu.Lock()
	switch kind {
	case "tools", "ended":
		if s := f.byID[arg]; s != nil {
			affected = append(affected, s)
		}
	case "key":
		for _, s := range f.byID {
			if !s.anon && s.key == arg {
				affected = append(affected, s)
			}
		}
	}
	f.mu.Unlock()
	for _, s := range affected {
		if kind == "ended" {
			for ss := range s.server.Sessions() {
				ss.Close()
			}
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		f.refresh(ctx, s, f.idOf(s))
		cancel()
	}
}

func (f *fleet) idOf(s *session) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ids[s]
}

// subscribeFleet adds fn to what hears the other replicas (see
// listenFleet).
func (g *Gateway) subscribeFleet(fn func(string)) {
	g.fleetMu.Lock()
	g.fleetSubs = append(g.fleetSubs, fn)
	g.fleetMu.Unlock()
}

// onFleetListen adds fn to what is called each time the replica starts
// listening (at first, and after a lost connection): what it may have
// missed is to be read from the database.
func (g *Gateway) onFleetListen(fn func()) {
	g.fleetMu.Lock()
	g.fleetListening = append(g.fleetListening, fn)
	g.fleetMu.Unlock()
}

// listenFleet hears the other replicas until ctx ends, if the session
// store carries messages (PostgreSQL).
func (g *Gateway) listenFleet(ctx context.Context, bus store.Notifier) {
	bus.Listen(ctx, fleetChannel, func(msg string) {
		g.fleetMu.Lock()
		subs := slices.Clone(g.fleetSubs)
		g.fleetMu.Unlock()
		for _, fn := range subs {
			fn(msg)
		}
	}, func() {
		g.fleetMu.Lock()
		fns := slices.Clone(g.fleetListening)
		g.fleetMu.Unlock()
		for _, fn := range fns {
			go fn()
		}
	})
}
