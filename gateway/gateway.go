package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	srcmcp "github.com/capbroker/capbroker/source/mcp"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/dense"
	"github.com/capbroker/capbroker/internal/buildinfo"
	"github.com/capbroker/capbroker/learn"
	"github.com/capbroker/capbroker/policy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Version is reported to clients (serverInfo.version) and upstreams
// (clientInfo.version) as the gateway's version: the binary's version as
// "capbroker version" prints it (buildinfo.Info.Short: a release version,
// or devel+commit for a build from a checkout).
var Version = buildinfo.Read().Short()

// DefaultStartWait is the default [Options.StartWait]: long enough for a
// typical stdio server to start, far below the 30s a client such as
// Claude Code gives the handshake.
const DefaultStartWait = 10 * time.Second

// Mode is how much of the catalog a client session sees.
type Mode string

// The exposure modes.
const (
	// ModeAll lists every upstream tool: a plain pass-through.
	ModeAll Mode = "all"
	// ModeAuto (the default) lists the floor, find_capability and
	// call_capability; what find_capability finds is added to the
	// session's tools (with list_changed) and is also callable through
	// call_capability, so a client that refreshes its list on
	// list_changed calls found tools natively and one that ignores it
	// still reaches them.
	ModeAuto Mode = "auto"
	// ModeSearch lists the floor and find_capability; what find_capability
	// finds is added to the session's tools (with list_changed).
	ModeSearch Mode = "search"
	// ModeCall lists the floor, find_capability and call_capability; found
	// tools are called through call_capability, so the tool list never
	// changes (for clients that ignore list_changed, or to keep the
	// prompt cache stable).
	ModeCall Mode = "call"
)

// ParseMode reads a mode name; "" is ModeAuto.
func ParseMode(s string) (Mode, error) {
	switch Mode(s) {
	case ModeAll, ModeAuto, ModeSearch, ModeCall:
		return Mode(s), nil
	case "":
		return ModeAuto, nil
	}
	return "", fmt.Errorf("unknown mode %q (want auto, search, call or all)", s)
}

// listsFound reports whether found tools are added to the session's tool
// list (with list_changed).
func (m Mode) listsFound() bool { return m == ModeSearch || m == ModeAuto }

// callsThrough reports whether the session lists call_capability.
func (m Mode) callsThrough() bool { return m == ModeCall || m == ModeAuto }

// Options configures a Gateway. A nil *Options uses every default.
type Options struct {
	// Mode is the default exposure mode; a client may choose another (see
	// [Gateway.Handler]). If empty, ModeAuto.
	Mode Mode
	// Namespace says how tool names are made unique. If empty,
	// NamespaceAlways (server__tool).
	Namespace Namespacing
	// Family chooses the floor exposed at the start of a session in auto,
	// search and call modes. If empty, policy.Coding.
	Family policy.Family
	// Floors maps a family to its floor (see policy.Options.Floors). If
	// nil, policy.DefaultFloors.
	Floors map[policy.Family][]string
	// Task, if set, selects tools for this task at the start of a session
	// in auto, search and call modes, in addition to the floor.
	Task string
	// PlanTasks, if set, starts a session that names a plan task (the
	// PlanTaskHeader over HTTP, PlanTask over stdio) with that task's
	// tools instead of the selection for Task.
	PlanTasks PlanTasks
	// PlanTask is the plan task of sessions that name none (the stdio
	// client's). Needs PlanTasks.
	PlanTask string
	// FindK is how many tools find_capability returns by default. If zero,
	// DefaultFindK.
	FindK int
	// FindBudget bounds a find_capability answer, in tokens (o200k). If
	// zero, DefaultFindBudget.
	FindBudget int
	// CallTimeout bounds each call to an upstream whose configuration sets
	// no timeout. If zero, 60s.
	CallTimeout time.Duration
	// StartTimeout bounds connecting to an upstream and listing what it
	// offers. If zero, source/mcp.DefaultTimeout (30s), as discovery.
	StartTimeout time.Duration
	// MaxListItems bounds the tools (and, each, the prompts, resources
	// and templates) read from one upstream; MaxListPages the pages of one
	// listing. A listing cut short keeps what was read, with a warning
	// and a note in Status. If zero, DefaultMaxListItems and
	// DefaultMaxListPages.
	MaxListItems, MaxListPages int
	// MaxSessions bounds the client sessions open at once; a client
	// opening one more is refused (HTTP 503) until one ends. If zero,
	// DefaultMaxSessions.
	MaxSessions int
	// StartWait bounds how long, after Start, a client's requests other
	// than initialize and ping wait for upstreams still starting (initialize
	// never waits). Upstreams that start later are added as they come. If
	// zero, DefaultStartWait; negative, no wait.
	StartWait time.Duration
	// MinBackoff and MaxBackoff bound the delay before reconnecting to an
	// upstream that dropped; it doubles after each failure. If zero, 200ms
	// and 30s.
	MinBackoff, MaxBackoff time.Duration
	// AllowIrreversible exposes irreversible tools of every upstream (a
	// server's own allowIrreversible does it for that server alone).
	AllowIrreversible bool
	// ConfirmUnasked decides an irreversible call when the client cannot
	// be asked (it has no elicitation): true runs it, false refuses it.
	ConfirmUnasked bool
	// Client names the client the gateway serves, as "capbroker client
	// add" does (see Clients; "" for none). A client that asks its user
	// before each call gets irreversible tools passed through, unasked by
	// the gateway; one with file tools of its own gets no coding floor.
	// Over HTTP a session may name its own (ClientHeader, ?client=).
	Client string
	// floors are Floors as given, before Client's kind changed them (a
	// session of another kind starts from them; see clientkind.go).
	floors map[policy.Family][]string
	// Always pins tools into every session's list from the start: server
	// names (all their tools), gateway tool names, or tool names
	// (capbroker.yaml's always:). Servers with "alwaysLoad": true and
	// tools whose _meta has "anthropic/alwaysLoad": true are pinned too.
	Always []string
	// Pins judges upstream tools against the digests a person approved
	// (an *index.Index is one). A tool whose description or input schema
	// changed since is held back: not listed, not callable, not findable,
	// until approved ("capbroker approve"); this holds for changes seen at
	// run time through an upstream's list_changed too. If nil, nothing is
	// held for this reason.
	Pins Pinner
	// PinsInterval is how often the gateway looks for approvals made
	// meanwhile (Pins.PinsModified). If zero, 2s.
	PinsInterval time.Duration
	// Store keeps each session's exposed tools. If nil, an in-memory store.
	Store ExposedStore
	// Metrics receives counters and latencies. If nil, a fresh set on its
	// own registry (see [Gateway.Metrics]).
	Metrics *Metrics
	// Trace receives selections, finds and calls. If nil, nothing is traced.
	Trace Tracer
	// Logger receives the gateway's own log. If nil, slog.Default().
	Logger *slog.Logger
	// Router, if set, adds the read-only route_capability tool next to
	// find_capability (auto, search and call modes): a task or a workflow phase
	// in, the plugin agent it is delegated to and the announcement out.
	// A *route.Cache is one. If nil, the tool is not listed.
	Router Router
	// MaxMessage bounds one JSON-RPC message from a stdio client, in
	// bytes; a longer line is answered with a parse error and skipped. If
	// zero, DefaultMaxMessage (16 MiB).
	MaxMessage int
	// InheritEnv passes the gateway's whole environment to every stdio
	// upstream. By default each gets only mcpconfig.SafeEnv and what its
	// config names (its env and inheritEnv).
	InheritEnv bool
	// Tokens holds the OAuth logins of remote upstreams (capbroker
	// login): their tokens are sent and refreshed. Nil means none.
	Tokens *srcmcp.TokenStore
	// Embedder, if set, ranks selections and find_capability by meaning
	// as well as by words (hybrid ranking, package dense): the built-in
	// sentence encoder (package encoder) or an embeddings endpoint
	// (dense.Client). Each catalog's card vectors come from EmbedCache;
	// the cards it lacks (a new upstream, a changed tool) are embedded in
	// the background while that catalog ranks by words only. Ranking
	// never fails for want of vectors: an embedder that fails while
	// embedding cards leaves the catalog lexical (and is tried again
	// after RankRetry), one that fails on a task ranks that task by
	// words; each fallback is counted ([Gateway.Ranking], /status,
	// /metrics) and traced. If nil, ranking is lexical.
	Embedder dense.Embedder
	// EmbedCache keeps card vectors by (card digest, model) across
	// catalogs and restarts. If nil, every catalog embeds its cards.
	EmbedCache *dense.Cache
	// Dense ranks by meaning alone instead of fusing with the words.
	Dense bool
	// Ranking tunes hybrid ranking (QueryTimeout, DenseWeight...); its
	// OnFallback is the gateway's own.
	Ranking dense.Options
	// RankRetry is how long after the card vectors could not be had the
	// gateway tries again. If zero, DefaultRankRetry.
	RankRetry time.Duration
	// Learn, if set, is the store whose trace records teach ranking what
	// past sessions asked for before calling each tool (package learn,
	// the usage field). It is read in the background at Start and every
	// LearnEvery; each catalog built after a reading uses it. If nil,
	// the gateway does not learn from use.
	Learn learn.Traces
	// LearnEvery is how often Learn is read again. If zero,
	// DefaultLearnEvery (a day).
	LearnEvery time.Duration
}

func (o *Options) resolved() *Options {
	r := &Options{}
	if o != nil {
		*r = *o
	}
	if r.Mode == "" {
		r.Mode = ModeAuto
	}
	if r.Namespace == "" {
		r.Namespace = NamespaceAlways
	}
	if r.Family == "" {
		r.Family = policy.Coding
	}
	if r.FindK <= 0 {
		r.FindK = DefaultFindK
	}
	r.floors = r.Floors
	if r.client().FileTools {
		r.Floors = noFileFloor(r.Floors)
	}
	if r.CallTimeout <= 0 {
		r.CallTimeout = 60 * time.Second
	}
	if r.StartTimeout <= 0 {
		r.StartTimeout = srcmcp.DefaultTimeout
	}
	if r.MaxListItems <= 0 {
		r.MaxListItems = DefaultMaxListItems
	}
	if r.MaxListPages <= 0 {
		r.MaxListPages = DefaultMaxListPages
	}
	if r.MaxSessions <= 0 {
		r.MaxSessions = DefaultMaxSessions
	}
	if r.StartWait == 0 {
		r.StartWait = DefaultStartWait
	}
	if r.MinBackoff <= 0 {
		r.MinBackoff = 200 * time.Millisecond
	}
	if r.MaxBackoff <= 0 {
		r.MaxBackoff = 30 * time.Second
	}
	if r.MaxBackoff < r.MinBackoff {
		r.MaxBackoff = r.MinBackoff
	}
	if r.Store == nil {
		r.Store = NewMemoryStore()
	}
	if r.RankRetry <= 0 {
		r.RankRetry = DefaultRankRetry
	}
	if r.LearnEvery <= 0 {
		r.LearnEvery = DefaultLearnEvery
	}
	if r.PinsInterval <= 0 {
		r.PinsInterval = 2 * time.Second
	}
	if r.Metrics == nil {
		r.Metrics = NewMetrics(nil)
	}
	if r.Trace == nil {
		r.Trace = nopTracer{}
	}
	if r.Logger == nil {
		r.Logger = slog.Default()
	}
	return r
}

// Pinner judges MCP tool cards (as package source/mcp makes them: named
// server__tool, Source the server, Meta["server"] set) against the
// digests a person approved. *index.Index implements it. Methods must be
// safe for concurrent use.
type Pinner interface {
	// Hold returns the cards to keep and those held back because they
	// changed since approved, recording the held ones for approval. keep
	// and held are valid even when err is not nil.
	Hold(cards []card.Card) (keep, held []card.Card, err error)
	// PinsModified reports whether approvals may have changed since the
	// last Hold. It is polled, so it must be cheap.
	PinsModified() bool
}

// Gateway is one MCP server in front of many. Create it with [New], start
// it with [Gateway.Start], then serve clients over stdio
// ([Gateway.ServeStdio]) or streamable HTTP ([Gateway.Handler]).
type Gateway struct {
	opts   *Options
	sdkLog *slog.Logger // opts.Logger for the SDK's servers: see sdkLogger
	ups    []*upstream

	mu       sync.Mutex
	cat      *catalog
	gen      uint64                // refreshes started
	catGen   uint64                // the refresh that built cat
	sessions map[*session]struct{} // every session set up and not ended
	// noted are the catalog notes logged: each once, not at every
	// rebuild (key: server, name and message).
	noted sync.Map
	// ready is closed once every upstream made its first attempt and the
	// catalog holds them; startedAt is when Start ran.
	ready     chan struct{}
	startedAt time.Time
	cancel    context.CancelFunc
	wg        sync.WaitGroup
	rebuild   chan struct{}
	ranking   *ranking
	// upsMu guards ups, runCtx and stops: Reconcile replaces upstreams
	// while the gateway runs (see reconcile.go).
	upsMu  sync.RWMutex
	runCtx context.Context
	stops  map[*upstream]context.CancelFunc
	// fleetIdle is the idle timeout (ns) after which sessions expire from
	// the database (see fleet.go); draining is set by Drain.
	fleetIdle atomic.Int64
	// streamRetention (ns) and streamEvents bound the stored stream
	// events (see events.go); zero: none are stored.
	streamRetention, streamEvents atomic.Int64
	draining                      atomic.Bool
	inflight                      atomic.Int64 // MCP requests in flight, but GETs (see Idle)
	// identities maps a session key to the identity that opened it, for
	// the trace (see identity.go).
	identities sync.Map
	byID       sync.Map // MCP session ID -> *session, of the sessions held
	// fleetSubs hear what other replicas tell (see fleet.go), and
	// fleetListening are called each time the replica starts listening.
	fleetMu        sync.Mutex
	fleetSubs      []func(string)
	fleetListening []func()
	// shared is what the fleet shares beyond sessions (see shared.go);
	// nil without a store that keeps it. sharedSubs hear items of other
	// kinds (OnShared).
	shared     *shared
	sharedMu   sync.Mutex
	sharedSubs map[string][]func(string, json.RawMessage)
	// profiles are the profiles served (see profiles.go), under mu.
	profiles Profiles
	// closing is set by Close (see sessionend.go).
	closing atomic.Bool
}

// New returns a gateway over the servers of cfg. It starts nothing.
func New(cfg *Config, opts *Options) (*Gateway, error) {
	o := opts.resolved()
	if _, err := ParseMode(string(o.Mode)); err != nil {
		return nil, err
	}
	if _, err := ParseNamespacing(string(o.Namespace)); err != nil {
		return nil, err
	}
	g := &Gateway{opts: o, sdkLog: sdkLogger(o.Logger), sessions: map[*session]struct{}{}, rebuild: make(chan struct{}, 1), ready: make(chan struct{})}
	o.Trace = identityTracer{next: o.Trace, g: g}
	g.ranking = newRanking(o, func() { g.changed(nil) })
	o.Metrics.rankingReady(func() bool {
		cr := g.catalog().ranker
		return cr != nil && cr.auto.Ready()
	})
	if cfg != nil {
		for _, s := range cfg.Servers {
			g.ups = append(g.ups, newUpstream(s, o, g))
		}
	}
	cat, err := buildCatalog(context.Background(), nil, o, g.ranking, nil)
	if err != nil {
		return nil, err
	}
	g.cat = cat
	return g, nil
}

// Start connects to every upstream in the background and returns at once:
// clients are served (initialize is answered) while upstreams start, and
// each upstream's tools are added as it comes (sessions get list_changed).
// A client's other requests wait for upstreams still starting, up to
// [Options.StartWait] after Start, so a client that reads its tool list
// once sees every upstream that starts within it. [Gateway.Ready] waits
// until every upstream has made its first attempt. Failed upstreams keep
// retrying in the background. The upstreams run until ctx is done or
// Close is called.
func (g *Gateway) Start(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	g.cancel = cancel
	g.mu.Lock()
	g.startedAt = time.Now()
	g.mu.Unlock()
	if g.shared = newShared(g); g.shared != nil {
		// Before the upstreams list tools: the first catalog judges them
		// by the fleet's pins.
		g.shared.start(ctx)
		g.ranking.learnt = g.shared.publishLearnt
		g.wg.Add(1)
		go func() {
			defer g.wg.Done()
			g.shared.loop(ctx)
		}()
	}
	g.upsMu.Lock()
	g.runCtx = ctx
	firsts := make([]chan struct{}, len(g.ups))
	for i, u := range g.ups {
		firsts[i] = make(chan struct{})
		g.startUpstream(ctx, u, firsts[i])
	}
	g.upsMu.Unlock()
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		g.rebuilder(ctx)
	}()
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		g.sweepFleet(ctx)
	}()
	if g.opts.Learn != nil {
		g.wg.Add(1)
		go func() {
			defer g.wg.Done()
			g.ranking.learnLoop(ctx)
		}()
	}
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		for _, f := range firsts {
			select {
			case <-f:
			case <-ctx.Done():
				return
			}
		}
		// Every upstream has connected or failed once: the catalog built
		// now holds every upstream that started.
		if err := g.refresh(ctx); err != nil && ctx.Err() == nil {
			g.opts.Logger.Error("building the catalog", "error", err)
		}
		close(g.ready)
	}()
	return nil
}

// Ready waits until every upstream has connected or failed its first
// attempt and the catalog holds those that connected, or ctx is done.
func (g *Gateway) Ready(ctx context.Context) error {
	select {
	case <-g.ready:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (g *Gateway) isReady() bool {
	select {
	case <-g.ready:
		return true
	default:
		return false
	}
}

// awaitStart waits, for a client request, until every upstream has made
// its first attempt, at most until Options.StartWait after Start.
func (g *Gateway) awaitStart(ctx context.Context) {
	if g.isReady() {
		return
	}
	g.mu.Lock()
	started := g.startedAt
	g.mu.Unlock()
	if started.IsZero() {
		return // not started
	}
	left := g.opts.StartWait - time.Since(started)
	if left <= 0 {
		return
	}
	t := time.NewTimer(left)
	defer t.Stop()
	select {
	case <-g.ready:
	case <-t.C:
	case <-ctx.Done():
	}
}

// Close stops every upstream and waits for them.
func (g *Gateway) Close() error {
	if !g.closing.Swap(true) && !g.draining.Load() {
		// A draining replica's sessions go on on another replica.
		for _, s := range g.liveSessions() {
			g.endSession(s, "the gateway stopped")
		}
	}
	if g.cancel != nil {
		g.cancel()
	}
	g.wg.Wait()
	return nil
}

// Status reports each upstream's state.
func (g *Gateway) Status() []Status {
	ups := g.upstreams()
	out := make([]Status, len(ups))
	for i, u := range ups {
		out[i] = u.status()
	}
	return out
}

// Warnings reports what building the catalog renamed, held back or left
// out (irreversible tools, colliding names and URIs).
func (g *Gateway) Warnings() []card.Warning {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append(append([]card.Warning(nil), g.cat.held...), g.cat.warnings...)
}

// Held reports the tools held back (irreversible, changed since approved,
// new, pins lost), each with why and what releases it, in name order.
func (g *Gateway) Held() []Held {
	return append([]Held(nil), g.catalog().heldList...)
}

// Tools returns the names of every tool the gateway can expose, in order.
func (g *Gateway) Tools() []string {
	return append([]string(nil), g.catalog().names...)
}

// Metrics returns the gateway's metrics.
func (g *Gateway) Metrics() *Metrics { return g.opts.Metrics }

func (g *Gateway) catalog() *catalog {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.cat
}

// changed implements hooks: an upstream's listing changed.
func (g *Gateway) changed(*upstream) {
	select {
	case g.rebuild <- struct{}{}:
	default:
	}
}

func (g *Gateway) rebuilder(ctx context.Context) {
	var poll <-chan time.Time
	if g.opts.Pins != nil {
		t := time.NewTicker(g.opts.PinsInterval)
		defer t.Stop()
		poll = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-poll:
			if !g.opts.Pins.PinsModified() {
				continue
			}
			g.opts.Logger.Info("pinned tool digests changed (an approval?); rebuilding the catalog")
			if err := g.refresh(ctx); err != nil && ctx.Err() == nil {
				g.opts.Logger.Error("rebuilding the catalog", "error", err)
			}
		case <-g.rebuild:
			if err := g.refresh(ctx); err != nil && ctx.Err() == nil {
				g.opts.Logger.Error("rebuilding the catalog", "error", err)
			}
		}
	}
}

// refresh rebuilds the catalog and brings every session up to date.
// Refreshes may run at the same time (Start's, the rebuilder's); each is
// numbered when it starts reading the upstreams' listings, and a catalog
// is only put in place if no refresh that started later already put its
// own: an older catalog never replaces a newer one.
func (g *Gateway) refresh(ctx context.Context) error {
	g.mu.Lock()
	g.gen++
	gen := g.gen
	g.mu.Unlock()
	ups, serve := g.upstreams(), g.currentProfiles().Serve
	cat, err := buildCatalog(ctx, ups, g.opts, g.ranking, serve)
	if err != nil {
		return err
	}
	g.withOther(ctx, cat, ups, serve)
	hook(ctx, hookRefreshBuilt, "")
	if g.shared != nil {
		// Building it may have pinned tools, or found an approval.
		g.shared.publishPins(ctx)
	}
	g.mu.Lock()
	if gen < g.catGen {
		g.mu.Unlock()
		g.opts.Logger.Debug("catalog built from older listings than the one in use; dropped", "generation", gen, "in use", g.catGen)
		return nil
	}
	g.cat, g.catGen = cat, gen
	sessions := make([]*session, 0, len(g.sessions))
	for s := range g.sessions {
		sessions = append(sessions, s)
	}
	g.mu.Unlock()
	for _, w := range cat.held {
		if _, dup := g.noted.LoadOrStore(w.Source+"\x00"+w.Name+"\x00"+w.Message, true); !dup {
			g.opts.Logger.Info("catalog", "tool", w.Name, "server", w.Source, "note", w.Message)
		}
	}
	for _, w := range cat.warnings {
		if _, dup := g.noted.LoadOrStore(w.Source+"\x00"+w.Name+"\x00"+w.Message, true); !dup {
			g.opts.Logger.Warn("catalog", "name", w.Name, "server", w.Source, "warning", w.Message)
		}
	}
	g.opts.Metrics.catalogSize(len(cat.names))
	// Each sync reads the catalog in use then, so a session synced here
	// after a newer refresh still ends up with the newest catalog.
	for _, s := range sessions {
		s.addPins(s.catalog())
		s.sync()
	}
	return nil
}

// resourceUpdated implements hooks.
func (g *Gateway) resourceUpdated(ctx context.Context, _ *upstream, p *mcp.ResourceUpdatedNotificationParams) {
	for _, s := range g.liveSessions() {
		if err := s.server.ResourceUpdated(ctx, p); err != nil {
			g.opts.Logger.Debug("forwarding resources/updated", "error", err)
		}
	}
}

// broadcastLog implements hooks.
func (g *Gateway) broadcastLog(ctx context.Context, _ *upstream, p *mcp.LoggingMessageParams) {
	for _, s := range g.liveSessions() {
		for ss := range s.server.Sessions() {
			ss.Log(ctx, p)
		}
	}
}

func (g *Gateway) liveSessions() []*session {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]*session, 0, len(g.sessions))
	for s := range g.sessions {
		out = append(out, s)
	}
	return out
}

func (g *Gateway) upstream(name string) *upstream {
	for _, u := range g.upstreams() {
		if u.cfg.Name == name {
			return u
		}
	}
	return nil
}

// ServeStdio serves one client over in and out (newline-delimited JSON-RPC)
// until the client disconnects or ctx is done. A line that is not one
// JSON-RPC message (malformed JSON, longer than [Options.MaxMessage], a
// batch) is answered with a JSON-RPC error and the session goes on. key names the session for
// the exposed-set store and the trace; "" makes an anonymous session
// (traced as "stdio-" and a random ID), whose tools are not stored.
func (g *Gateway) ServeStdio(ctx context.Context, in io.ReadCloser, out io.WriteCloser, key string) error {
	anon := key == ""
	if anon {
		key = "stdio-" + newID()
	}
	s, err := g.newSession(ctx, key, "", g.opts.Mode, anon, g.opts.PlanTask)
	if err != nil {
		return err
	}
	w := &lockedWriter{w: out}
	f := newStdioFilter(in, w, g.opts.MaxMessage, g.opts.Logger)
	// The filter enforces the bound; the SDK's own would end the session.
	err = s.server.Run(ctx, &mcp.IOTransport{Reader: f, Writer: w, MaxLineLength: -1})
	why := "its client disconnected"
	if ctx.Err() != nil {
		why = "the gateway stopped"
	}
	g.endSession(s, why)
	g.dropSession(s)
	if errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// testHook, set only by tests, is called at the points where a concurrent
// change could be missed, to make that change happen there.
var testHook atomic.Pointer[func(ctx context.Context, point, session string)]

// The points testHook is called at.
const (
	hookRefreshBuilt  = "refresh built"  // a catalog is built, not yet in use
	hookSessionSynced = "session synced" // a new session had its first sync
	hookFindSearched  = "find searched"  // find_capability searched, exposed nothing yet
)

func hook(ctx context.Context, point, session string) {
	if f := testHook.Load(); f != nil {
		(*f)(ctx, point, session)
	}
}
