package httpapi

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/internal/httpguard"
	"github.com/capbroker/capbroker/llm"
	"github.com/capbroker/capbroker/payload"
	"github.com/capbroker/capbroker/policy"
	"github.com/capbroker/capbroker/rank"
	"github.com/capbroker/capbroker/session"
	"github.com/capbroker/capbroker/telemetry"
)

// Broker is what the API serves; *capbroker.Broker implements it.
type Broker interface {
	Select(ctx context.Context, task string, opts *policy.Options) *policy.Selection
	Find(ctx context.Context, query string, k int) *policy.FindResult
	Catalog() *card.Catalog
	Render(f payload.Format, names []string, withHatch bool) (*payload.Rendered, error)
	// Rank is the raw ranking behind Find, used by the planner and assembly.
	Rank(ctx context.Context, query string, k int) ([]rank.Hit, error)
}

// Options configures a Server. A nil *Options uses every default.
type Options struct {
	// Addr is the listen address. If empty, DefaultAddr (loopback).
	Addr string
	// Token is the bearer token clients must send. Required when Addr is
	// not a loopback address; optional (but enforced when set) otherwise.
	Token string
	// MaxBodyBytes limits request bodies. If zero, DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// Logger receives one structured line per request. If nil, slog.Default().
	Logger *slog.Logger
	// ShutdownTimeout bounds the graceful shutdown. If zero, 10s.
	ShutdownTimeout time.Duration
	// Planner is the language model behind POST /v1/plan. If nil, that
	// endpoint answers 501 not_configured.
	Planner llm.Provider
	// Router routes tasks and phases to plugin agents: POST /v1/route and
	// GET /v1/capabilities. If nil, they answer 501 not_configured.
	Router Router
	// Sessions starts, shows, resumes sessions and answers their
	// find_capability and tool calls: the /v1/sessions endpoints. It
	// should select over the same catalog as the broker. If nil, they
	// answer 501 not_configured.
	Sessions *session.Manager
	// Traces lists the trace (GET /v1/traces) and records the route
	// decisions made outside sessions. If nil, GET /v1/traces answers 501
	// not_configured and such decisions are not recorded.
	Traces TraceStore
	// StoreError, when the session database could not be opened (it is
	// corrupt), is why Sessions and Traces are nil: their endpoints answer
	// 503 unavailable with it instead of 501 not_configured.
	StoreError error
	// CatalogNote, when set, is shown at the top of the explorer page: why
	// the catalog is not the user's own (the embedded example catalog).
	CatalogNote string
	// AllowedHosts and AllowedOrigins widen the browser-safety checks
	// every request passes: by default a Host must be localhost (or a name
	// under .localhost) or an IP address, which refuses DNS rebinding, and
	// a browser page of another origin is refused (403 forbidden). See
	// internal/httpguard.
	AllowedHosts, AllowedOrigins []string
	// HeaderTimeout, ReadTimeout, WriteTimeout and IdleTimeout bound how
	// long a client may hold a connection: to send its headers (5 s), its
	// body (30 s), to take the response (60 s), and idle between requests
	// (120 s), the defaults when zero. Negative turns a bound off.
	HeaderTimeout, ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	// RouteRoots are the folders whose files POST /v1/route may read and
	// write ("project", "state", and the FLOW.md it writes into a
	// project): a path outside them, after symlinks are resolved, is
	// refused with 403 forbidden naming serve's --route-root. Empty
	// admits no path.
	RouteRoots []string
}

// Defaults.
const (
	DefaultAddr         = "127.0.0.1:8080"
	DefaultMaxBodyBytes = 1 << 20
)

// Server is the HTTP API. Create it with [New]; it is safe for concurrent use.
type Server struct {
	broker  Broker
	opts    Options
	guard   *httpguard.Guard
	mux     *http.ServeMux
	metrics *metrics
	routes  []string // registered patterns, for the OpenAPI check
}

// New returns a server for b. It fails when the options are unsafe: a
// non-loopback address without a token.
func New(b Broker, opts *Options) (*Server, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Addr == "" {
		o.Addr = DefaultAddr
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.ShutdownTimeout <= 0 {
		o.ShutdownTimeout = 10 * time.Second
	}
	if err := CheckAddr(o.Addr, o.Token); err != nil {
		return nil, err
	}
	guard, err := httpguard.New(&httpguard.Options{
		Hosts: o.AllowedHosts, Origins: o.AllowedOrigins,
		Deny: func(w http.ResponseWriter, _ *http.Request, _ int, msg string) {
			writeError(w, errorf(CodeForbidden, msg))
		},
	})
	if err != nil {
		return nil, err
	}
	s := &Server{broker: b, opts: o, guard: guard, mux: http.NewServeMux(), metrics: newMetrics()}
	s.handle("POST /v1/select", http.HandlerFunc(s.handleSelect))
	s.handle("POST /v1/find", http.HandlerFunc(s.handleFind))
	s.handle("GET /v1/cards", http.HandlerFunc(s.handleCards))
	s.handle("GET /healthz", http.HandlerFunc(s.handleHealth))
	s.handle("GET /metrics", s.metrics.handler())
	s.handle("GET /openapi.json", http.HandlerFunc(s.handleOpenAPI))
	s.handle("GET /{$}", http.HandlerFunc(s.handleExplorer))
	s.handle("GET /static/", http.HandlerFunc(s.handleStatic))
	s.handle("POST /v1/plan", http.HandlerFunc(s.handlePlan))
	s.handle("POST /v1/assemble", http.HandlerFunc(s.handleAssemble))
	s.handle("POST /v1/route", http.HandlerFunc(s.handleRoute))
	s.handle("GET /v1/capabilities", http.HandlerFunc(s.handleCapabilities))
	s.handle("POST /v1/sessions", http.HandlerFunc(s.handleSessionStart))
	s.handle("GET /v1/sessions", http.HandlerFunc(s.handleSessionList))
	s.handle("GET /v1/sessions/{id}", http.HandlerFunc(s.handleSessionShow))
	s.handle("POST /v1/sessions/{id}/find", http.HandlerFunc(s.handleSessionFind))
	s.handle("POST /v1/sessions/{id}/call", http.HandlerFunc(s.handleSessionCall))
	s.handle("POST /v1/sessions/{id}/resume", http.HandlerFunc(s.handleSessionResume))
	s.handle("GET /v1/traces", http.HandlerFunc(s.handleTraces))
	s.handle("GET /v1/activity", http.HandlerFunc(s.handleActivity))
	return s, nil
}

func (s *Server) handle(pattern string, h http.Handler) {
	s.routes = append(s.routes, pattern)
	s.mux.Handle(pattern, telemetry.Handler(pattern, s.metrics.instrument(pattern, h)))
}

// Routes returns the registered endpoint patterns.
func (s *Server) Routes() []string { return append([]string(nil), s.routes...) }

// Handler returns the API with its middleware: recovery, request
// logging, the no-framing headers, the Host and Origin checks, and
// authentication.
func (s *Server) Handler() http.Handler {
	return s.recoverer(s.logRequests(noFraming(s.guard.Wrap(s.authenticate(http.HandlerFunc(s.dispatch))))))
}

// dispatch serves r through the mux, answering unknown paths and methods
// with the API's JSON error shape rather than the mux's plain text.
func (s *Server) dispatch(w http.ResponseWriter, r *http.Request) {
	if _, pattern := s.mux.Handler(r); pattern != "" {
		s.mux.ServeHTTP(w, r)
		return
	}
	var allow []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		r2 := r.Clone(r.Context())
		r2.Method = m
		if _, pattern := s.mux.Handler(r2); pattern != "" {
			allow = append(allow, m)
		}
	}
	if len(allow) > 0 {
		w.Header().Set("Allow", strings.Join(allow, ", "))
		writeError(w, errorf(CodeMethod, fmt.Sprintf("%s %s: use %s", r.Method, r.URL.Path, strings.Join(allow, " or "))))
		return
	}
	writeError(w, errorf(CodeNotFound, fmt.Sprintf("no endpoint %s %s; see /openapi.json", r.Method, r.URL.Path)))
}

// Run listens on the configured address and serves until ctx ends, then
// shuts down gracefully. ready, if non-nil, receives the bound address
// once listening (useful with port 0).
func (s *Server) Run(ctx context.Context, ready func(addr string)) error {
	ln, err := net.Listen("tcp", s.opts.Addr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", s.opts.Addr, err)
	}
	srv := httpguard.Timeouts{Header: s.opts.HeaderTimeout, Read: s.opts.ReadTimeout, Write: s.opts.WriteTimeout, Idle: s.opts.IdleTimeout}.Server(s.Handler())
	srv.ErrorLog = slog.NewLogLogger(s.opts.Logger.Handler(), slog.LevelWarn)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	s.opts.Logger.Info("serving", "addr", ln.Addr().String(), "auth", s.opts.Token != "")
	if ready != nil {
		ready(ln.Addr().String())
	}
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), s.opts.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutting down: %w", err)
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// CheckAddr says whether the server may listen on addr with this token
// (any non-loopback address needs one), before anything else is done.
func CheckAddr(addr, token string) error {
	loop, err := isLoopback(addr)
	if err != nil {
		return err
	}
	if _, port, _ := net.SplitHostPort(addr); port != "" {
		if _, err := net.LookupPort("tcp", port); err != nil {
			return fmt.Errorf("listen address %q: bad port: %w", addr, err)
		}
	}
	if !loop && token == "" {
		return fmt.Errorf("refusing to serve on %s without a bearer token: set --token (or CAPBROKER_TOKEN), or bind 127.0.0.1", addr)
	}
	return nil
}

// isLoopback reports whether addr's host is a loopback address or
// "localhost". An empty host (all interfaces) is not loopback.
func isLoopback(addr string) (bool, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false, fmt.Errorf("listen address %q: %w", addr, err)
	}
	if host == "localhost" {
		return true, nil
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback(), nil
}

func (s *Server) authenticate(next http.Handler) http.Handler {
	if s.opts.Token == "" {
		return next
	}
	want := []byte("Bearer " + s.opts.Token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if public(r) {
			next.ServeHTTP(w, r)
			return
		}
		got := []byte(r.Header.Get("Authorization"))
		if subtle.ConstantTimeCompare(got, want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="capbroker"`)
			msg := "missing bearer token"
			if len(got) > 0 {
				msg = "wrong bearer token"
			}
			writeError(w, errorf(CodeUnauthorized, msg))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// public reports whether r asks for what needs no token: the health
// check, and the explorer page and its files, which hold no data (the page
// asks for the token and sends it with each API call).
func public(r *http.Request) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	return r.URL.Path == "/healthz" || r.URL.Path == "/" || strings.HasPrefix(r.URL.Path, "/static/")
}

// statusWriter records the status code for logs.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

func (s *Server) logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(sw, r)
		s.opts.Logger.LogAttrs(r.Context(), slog.LevelInfo, "request",
			slog.String("method", r.Method), slog.String("path", r.URL.Path),
			slog.Int("status", sw.status), slog.Duration("took", time.Since(start)))
	})
}

func (s *Server) recoverer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.opts.Logger.Error("panic serving request", "path", r.URL.Path, "panic", fmt.Sprint(v))
				writeError(w, errorf(CodeInternal, "internal error"))
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// decode reads a JSON request body into v: size-limited, unknown fields
// refused, one value only.
func (s *Server) decode(w http.ResponseWriter, r *http.Request, v any) error {
	if ct := r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(ct, "application/json") {
		return errorf(CodeInvalid, fmt.Sprintf("content type %q: send application/json", ct))
	}
	body := http.MaxBytesReader(w, r.Body, s.opts.MaxBodyBytes)
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var tooBig *http.MaxBytesError
		var syn *json.SyntaxError
		var typ *json.UnmarshalTypeError
		switch {
		case errors.As(err, &tooBig):
			return errorf(CodeTooLarge, fmt.Sprintf("request body exceeds %d bytes", tooBig.Limit))
		case errors.Is(err, io.EOF):
			return errorf(CodeInvalid, "request body is empty; send a JSON object")
		case errors.As(err, &syn):
			return errorf(CodeInvalid, fmt.Sprintf("bad JSON at byte %d: %v", syn.Offset, err))
		case errors.As(err, &typ):
			return errorf(CodeInvalid, fmt.Sprintf("field %q: want %s, got %s", typ.Field, typ.Type, typ.Value))
		case strings.HasPrefix(err.Error(), "json: unknown field"):
			return errorf(CodeInvalid, strings.TrimPrefix(err.Error(), "json: ")+" in the request")
		}
		return errorf(CodeInvalid, "bad JSON: "+err.Error())
	}
	if dec.More() {
		return errorf(CodeInvalid, "request body holds more than one JSON value")
	}
	return nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}

func writeError(w http.ResponseWriter, err error) {
	e := asAPIError(err)
	writeJSON(w, e.Code.Status(), errorBody{Error: e})
}
