package gateway

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/capbroker/capbroker/identity"
	"github.com/capbroker/capbroker/internal/httpguard"
)

// Headers and query parameters a client may send when it opens a session.
const (
	// SessionHeader (or the query parameter "session") names the session
	// for the exposed-set store, so a client that reconnects with the same
	// name gets the same tools, and clients connected under one name share
	// what they find. A session without a name is anonymous: its tools are
	// kept only while it lasts and never stored (it is traced under its
	// MCP session ID).
	SessionHeader = "Capbroker-Session"
	// ModeHeader (or the query parameter "mode") overrides the gateway's
	// exposure mode for the session: auto, search, call or all.
	ModeHeader = "Capbroker-Mode"
	// ClientHeader (or the query parameter "client", see clientkind.go)
	// names the kind of client the session serves, overriding
	// Options.Client.

	// PlanTaskHeader (or the query parameter "plan_task") names the plan
	// task whose tools the session starts with (see [Options.PlanTasks]).
	PlanTaskHeader = "Capbroker-Plan-Task"
)

// HTTPOptions configures [Gateway.Handler]. A nil *HTTPOptions has no
// bearer token.
type HTTPOptions struct {
	// Token, if set, is the bearer token every request must carry
	// ("Authorization: Bearer <token>"). [Listen] requires one on any
	// address that is not loopback.
	Token string
	// SessionTimeout closes sessions idle this long. If zero,
	// DefaultSessionTimeout.
	SessionTimeout time.Duration
	// AllowedHosts and AllowedOrigins widen the Host and Origin checks
	// every request passes (see internal/httpguard): by default only
	// localhost names and IP addresses, and no page of another origin.
	AllowedHosts, AllowedOrigins []string
	// MaxClientSessions bounds the sessions one client keeps open at
	// once (its session key, else its bearer token, else its address):
	// past it, a new session is refused with 429 naming
	// --max-client-sessions. Zero means DefaultMaxClientSessions;
	// negative, no bound but Options.MaxSessions.
	MaxClientSessions int
	// Identities, if set, maps bearer tokens to identities (package
	// identity): each request must carry one of their tokens (or Token);
	// see identity.go for what an identity bounds.
	Identities *identity.Set
	// StreamRetention and StreamEvents bound the server-sent events kept
	// for resuming streams on another replica (with a session store that
	// keeps them, PostgreSQL): events older than StreamRetention
	// ([DefaultStreamRetention] if zero) are dropped, and so are a
	// session's oldest past StreamEvents ([DefaultStreamEvents] if zero;
	// negative: none are stored, and streams cannot be resumed).
	StreamRetention time.Duration
	StreamEvents    int
	// Replica, if set, names this gateway in a fleet: every response
	// carries it in the Capbroker-Replica header, so an operator (or a
	// test) sees which replica served a request.
	Replica string
}

// Handler serves the gateway over streamable HTTP: MCP at /mcp, Prometheus
// metrics at /metrics and the upstreams' state at /status. Every path
// refuses a Host that is not localhost or an IP address (DNS rebinding)
// and browser requests from another origin, before the bearer token is
// checked; a malformed allowed origin makes every request fail with 500.
func (g *Gateway) Handler(opts *HTTPOptions) http.Handler {
	var o HTTPOptions
	if opts != nil {
		o = *opts
	}
	if o.SessionTimeout <= 0 {
		o.SessionTimeout = DefaultSessionTimeout
	}
	quota := &clientQuota{max: o.MaxClientSessions}
	if quota.max == 0 {
		quota.max = DefaultMaxClientSessions
	}
	probe := mcp.NewServer(&mcp.Implementation{Name: "capbroker-gateway", Version: Version}, nil)
	f := newFleet(g, o.SessionTimeout) // nil: sessions live in this process only
	var events mcp.EventStore          // nil: streams cannot be resumed
	var ev *fleetEvents
	if f != nil && o.StreamEvents >= 0 {
		if ev = newFleetEvents(g); ev != nil {
			events, f.events = ev, ev
			g.streamRetention.Store(int64(cmp.Or(o.StreamRetention, DefaultStreamRetention)))
			g.streamEvents.Store(int64(cmp.Or(o.StreamEvents, DefaultStreamEvents)))
		}
	}
	mcpHandler := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		h, _ := r.Context().Value(holderKey{}).(*holder)
		if h == nil {
			return nil
		}
		if h.s != nil {
			return h.s.server
		}
		if r.Header.Get("Mcp-Session-Id") != "" {
			return probe // only consulted for its protocol versions
		}
		mode := g.opts.Mode
		if m := requestMode(r); m != "" {
			pm, err := ParseMode(m)
			if err != nil {
				return nil // refused before (see below)
			}
			mode = pm
		}
		id := newID()
		key := firstOf(r.Header.Get(SessionHeader), r.URL.Query().Get("session"))
		anon := key == ""
		if anon {
			key = id
		}
		s, err := g.newClientSession(r.Context(), requestClient(r), key, id, mode, anon, requestPlanTask(r, g.opts.PlanTask))
		if err != nil {
			g.opts.Logger.Error("opening a session", "error", err)
			return nil
		}
		s.client = clientIdentity(r)
		h.s = s
		g.claim(s, requestIdentity(r.Context()))
		if name := requestProfile(r); name != "" {
			g.keepWithin(s, profileRef{name: name, from: "the request: " + ProfileHeader + " or ?profile="})
		}
		if f != nil {
			f.attach(s, id, false)
		}
		return s.server
	}, &mcp.StreamableHTTPOptions{SessionTimeout: o.SessionTimeout, Logger: g.sdkLog, EventStore: events})

	// serve hands a request to the SDK with h, which carries the session
	// the request creates (or, replaying a rebuilt session's initialize,
	// the session rebuilt), and drops that session from memory when it
	// ends.
	serve := func(w http.ResponseWriter, r *http.Request, h *holder) {
		mcpHandler.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), holderKey{}, h)))
		if h.s == nil {
			h.done()
			return
		}
		drop := func() {
			if !g.draining.Load() && !g.closing.Load() {
				// A draining replica's sessions go on on another (and
				// Close records its own ends).
				g.endSession(h.s, "closed by its client, or idle past the gateway's --session-idle")
			}
			g.dropSession(h.s)
			if f != nil {
				f.dropped(h.s)
			}
			h.done()
		}
		connected := false
		for ss := range h.s.server.Sessions() {
			// The session lives on after this request: drop it when it
			// ends (the client deletes it, or it stays idle past
			// SessionTimeout), whatever the client sent meanwhile.
			connected = true
			go func() {
				ss.Wait()
				drop()
			}()
		}
		if !connected {
			// The request that created the session did not connect it.
			drop()
		}
	}

	mux := http.NewServeMux()
	mux.Handle("/mcp", http.NewCrossOriginProtection().Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if m := requestMode(r); m != "" {
			if _, err := ParseMode(m); err != nil {
				http.Error(w, fmt.Sprintf("%s header or mode parameter: %v", ModeHeader, err), http.StatusBadRequest)
				return
			}
		}
		if why := g.checkRequestProfile(r); why != "" && r.Header.Get("Mcp-Session-Id") == "" {
			http.Error(w, why, http.StatusBadRequest)
			return
		}
		if why := checkRequestClient(r); why != "" && r.Header.Get("Mcp-Session-Id") == "" {
			http.Error(w, why, http.StatusBadRequest)
			return
		}
		if ref := requestPlanTask(r, ""); ref != "" && r.Header.Get("Mcp-Session-Id") == "" {
			if err := g.checkPlanTask(r.Context(), ref); err != nil {
				http.Error(w, fmt.Sprintf("%s header or plan_task parameter: %v", PlanTaskHeader, err), http.StatusBadRequest)
				return
			}
		}
		defer g.track(r)()
		id := r.Header.Get("Mcp-Session-Id")
		if r.Method == http.MethodPost && id == "" && g.draining.Load() {
			w.Header().Set("Retry-After", "1")
			http.Error(w, "capbroker gateway: this replica is shutting down and opens no new session; another replica will (the sessions it serves go on there)", http.StatusServiceUnavailable)
			return
		}
		if r.Method == http.MethodPost && id == "" && g.sessionsFull() {
			w.Header().Set("Retry-After", "10")
			http.Error(w, fmt.Sprintf("capbroker gateway: %d MCP sessions are open, the most it keeps (--max-sessions); try again when one ends (idle sessions end after --session-idle)", g.opts.MaxSessions), http.StatusServiceUnavailable)
			return
		}
		if r.Method == http.MethodPost && id == "" {
			if why := g.overQuota(r.Context(), f, requestIdentity(r.Context())); why != "" {
				g.opts.Metrics.identityRequest(identityName(requestIdentity(r.Context())), "session_quota")
				w.Header().Set("Retry-After", "10")
				http.Error(w, why, http.StatusTooManyRequests)
				return
			}
		}
		if id != "" && !g.owns(f, r, id) {
			http.Error(w, "capbroker gateway: this session belongs to another identity", http.StatusForbidden)
			return
		}
		if f != nil && id != "" {
			// A session of the fleet: served here whichever replica
			// opened it.
			if !ev.resumable(w, r, id) {
				return
			}
			if r.Method == http.MethodDelete {
				f.forget(r.Context(), id)
				if !f.holds(id) {
					w.WriteHeader(http.StatusNoContent)
					return
				}
			} else if rebuilt, err := f.ensure(r.Context(), r, id, serve); err != nil && !errors.Is(err, errNoSession) {
				g.opts.Logger.Error("serving a session of the fleet", "session", id, "error", err)
				w.Header().Set("Retry-After", "1")
				http.Error(w, "capbroker gateway: "+err.Error(), http.StatusServiceUnavailable)
				return
			} else if rebuilt && isInitialized(r) {
				// Replayed already: the client's own would be a second.
				w.WriteHeader(http.StatusAccepted)
				return
			}
		}
		h := &holder{}
		if id == "" {
			who := clientIdentity(r)
			if !quota.reserve(who) {
				w.Header().Set("Retry-After", "10")
				http.Error(w, fmt.Sprintf("capbroker gateway: this client (%s) has %d MCP sessions open, the most one client keeps (--max-client-sessions); end one or try again when one ends", strings.SplitN(who, " ", 2)[0], quota.max), http.StatusTooManyRequests)
				return
			}
			var once sync.Once
			h.release = func() { once.Do(func() { quota.release(who) }) }
		}
		serve(w, r, h)
	})))
	g.healthRoutes(mux)
	mux.Handle("/metrics", promhttp.HandlerFor(g.opts.Metrics.Registry(), promhttp.HandlerOpts{}))
	mux.HandleFunc("/status", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(struct {
			Upstreams []Status `json:"upstreams"`
			Tools     int      `json:"tools"`
			Sessions  int      `json:"sessions"`
			Held      []Held   `json:"held"` // tools held back, why, and what releases each
			// Ranking: lexical or hybrid, by meaning yet or why not, fallbacks.
			Ranking RankingStatus `json:"ranking"`
			// Profiles the gateway serves (--profile, capbroker.yaml's).
			Profiles []string `json:"profiles"`
		}{g.Status(), len(g.catalog().names), len(g.liveSessions()), nonNil(g.Held()), g.Ranking(), nonNil(g.currentProfiles().ServeNames)})
	})
	guard, err := httpguard.New(&httpguard.Options{Hosts: o.AllowedHosts, Origins: o.AllowedOrigins})
	if err != nil {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "gateway: "+err.Error(), http.StatusInternalServerError)
		})
	}
	var top http.Handler = mux
	if o.Replica != "" {
		top = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Capbroker-Replica", o.Replica)
			mux.ServeHTTP(w, r)
		})
	}
	if o.Identities != nil {
		return guard.Wrap(g.authenticate(o.Identities, o.Token, top))
	}
	if o.Token == "" {
		return guard.Wrap(top)
	}
	want := []byte("Bearer " + o.Token)
	return guard.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !healthPath(r.URL.Path) && subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="capbroker gateway"`)
			http.Error(w, "missing or wrong bearer token", http.StatusUnauthorized)
			return
		}
		top.ServeHTTP(w, r)
	}))
}

// requestMode is the mode a request asks for, "" if none.
func requestMode(r *http.Request) string {
	return firstOf(r.Header.Get(ModeHeader), r.URL.Query().Get("mode"))
}

type holderKey struct{}

// holder carries the session a request created between the SDK's calls to
// getServer.
type holder struct {
	s *session
	// release, if set, gives back the client's quota slot this request
	// reserved for the session it opens.
	release func()
}

// done gives back the quota slot h holds, if any.
func (h *holder) done() {
	if h.release != nil {
		h.release()
	}
}

func hasSessions(s *mcp.Server) bool {
	for range s.Sessions() {
		return true
	}
	return false
}

func firstOf(xs ...string) string {
	for _, x := range xs {
		if x = strings.TrimSpace(x); x != "" {
			return x
		}
	}
	return ""
}

func newID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// ErrTokenRequired is returned by [Listen] for an address that is not
// loopback when no bearer token is given.
var ErrTokenRequired = errors.New("a bearer token is required to listen on an address that is not loopback")

// Listen opens addr for the gateway's HTTP transport. An address without a
// host (":8080") binds loopback (127.0.0.1). Any other address needs a
// bearer token.
func Listen(addr, token string) (net.Listener, error) {
	hostPort, err := listenAddr(addr, token)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", hostPort)
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", addr, err)
	}
	return ln, nil
}

// CheckAddr reports what [Listen] would refuse in addr and token without
// listening: a malformed address, or one that is not loopback without a
// token.
func CheckAddr(addr, token string) error {
	_, err := listenAddr(addr, token)
	return err
}

func listenAddr(addr, token string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("listen address %q: %w", addr, err)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	if !isLoopback(host) && token == "" {
		return "", fmt.Errorf("listening on %s: %w", addr, ErrTokenRequired)
	}
	return net.JoinHostPort(host, port), nil
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// ServeOptions bounds the connections [Serve] holds. Zero fields take the
// defaults: 10 s to read a request's headers, 30 s to read its body, 120 s
// for an idle keep-alive connection, and no bound on writing (a reply
// streams for as long as a tool call runs). A negative field turns that
// bound off.
type ServeOptions struct {
	ReadHeaderTimeout, ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	// Drain, if set, runs when ctx is done, before the server shuts down,
	// with a context that ends after DrainTimeout: [Gateway.DrainFunc]
	// refuses new sessions and waits for the calls in flight.
	Drain func(context.Context)
	// DrainTimeout bounds the shutdown (Drain, then closing the
	// connections). If zero, 5s.
	DrainTimeout time.Duration
}

// Serve serves h on ln until ctx is done, then shuts down within 5s. opts
// may be nil.
func Serve(ctx context.Context, ln net.Listener, h http.Handler, opts *ServeOptions) error {
	var o ServeOptions
	if opts != nil {
		o = *opts
	}
	if o.ReadHeaderTimeout == 0 {
		o.ReadHeaderTimeout = 10 * time.Second
	}
	if o.WriteTimeout == 0 {
		o.WriteTimeout = -1
	}
	srv := httpguard.Timeouts{Header: o.ReadHeaderTimeout, Read: o.ReadTimeout, Write: o.WriteTimeout, Idle: o.IdleTimeout}.Server(h)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		grace := o.DrainTimeout
		if grace <= 0 {
			grace = 5 * time.Second
		}
		sctx, cancel := context.WithTimeout(context.Background(), grace)
		defer cancel()
		if o.Drain != nil {
			o.Drain(sctx)
			// What is left are event streams (GET) and idle connections:
			// a moment to flush the last responses, then close them.
			fctx, fcancel := context.WithTimeout(sctx, time.Second)
			defer fcancel()
			sctx = fctx
		}
		if srv.Shutdown(sctx) != nil {
			srv.Close()
		}
		return nil
	}
}

// requestPlanTask returns the plan task a request names, or def.
func requestPlanTask(r *http.Request, def string) string {
	return firstOf(r.Header.Get(PlanTaskHeader), r.URL.Query().Get("plan_task"), def)
}

// nonNil makes an empty list [] in JSON, not null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
