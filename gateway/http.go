package gateway

import (
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
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Headers and query parameters a client may send when it opens a session.
const (
	// SessionHeader (or the query parameter "session") names the session
	// for the exposed-set store, so a client that reconnects with the same
	// name gets the same tools.
	SessionHeader = "Capbroker-Session"
	// ModeHeader (or the query parameter "mode") overrides the gateway's
	// exposure mode for the session: all, search or call.
	ModeHeader = "Capbroker-Mode"
)

// HTTPOptions configures [Gateway.Handler]. A nil *HTTPOptions has no
// bearer token.
type HTTPOptions struct {
	// Token, if set, is the bearer token every request must carry
	// ("Authorization: Bearer <token>"). [Listen] requires one on any
	// address that is not loopback.
	Token string
	// SessionTimeout closes sessions idle this long. If zero, one hour.
	SessionTimeout time.Duration
}

// Handler serves the gateway over streamable HTTP: MCP at /mcp, Prometheus
// metrics at /metrics and the upstreams' state at /status. The SDK's
// DNS-rebinding protection stays on, and cross-origin browser requests are
// refused.
func (g *Gateway) Handler(opts *HTTPOptions) http.Handler {
	var o HTTPOptions
	if opts != nil {
		o = *opts
	}
	if o.SessionTimeout <= 0 {
		o.SessionTimeout = time.Hour
	}
	probe := mcp.NewServer(&mcp.Implementation{Name: "capbroker-gateway", Version: Version}, nil)
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
		if m := firstOf(r.Header.Get(ModeHeader), r.URL.Query().Get("mode")); m != "" {
			pm, err := ParseMode(m)
			if err != nil {
				return nil
			}
			mode = pm
		}
		id := newID()
		key := firstOf(r.Header.Get(SessionHeader), r.URL.Query().Get("session"), id)
		s, err := g.newSession(r.Context(), key, id, mode)
		if err != nil {
			g.opts.Logger.Error("opening a session", "error", err)
			return nil
		}
		h.s = s
		return s.server
	}, &mcp.StreamableHTTPOptions{SessionTimeout: o.SessionTimeout, Logger: g.opts.Logger})

	mux := http.NewServeMux()
	mux.Handle("/mcp", http.NewCrossOriginProtection().Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := &holder{}
		mcpHandler.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), holderKey{}, h)))
		if h.s != nil && !hasSessions(h.s.server) {
			// The request that created the session did not connect it.
			g.dropSession(h.s)
		}
	})))
	mux.Handle("/metrics", promhttp.HandlerFor(g.opts.Metrics.Registry(), promhttp.HandlerOpts{}))
	mux.HandleFunc("/status", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(struct {
			Upstreams []Status `json:"upstreams"`
			Tools     int      `json:"tools"`
			Sessions  int      `json:"sessions"`
		}{g.Status(), len(g.catalog().names), len(g.liveSessions())})
	})
	if o.Token == "" {
		return mux
	}
	want := []byte("Bearer " + o.Token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="capbroker gateway"`)
			http.Error(w, "missing or wrong bearer token", http.StatusUnauthorized)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

type holderKey struct{}

// holder carries the session a request created between the SDK's calls to
// getServer.
type holder struct{ s *session }

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
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("listen address %q: %w", addr, err)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	if !isLoopback(host) && token == "" {
		return nil, fmt.Errorf("listening on %s: %w", addr, ErrTokenRequired)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, port))
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", addr, err)
	}
	return ln, nil
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// Serve serves h on ln until ctx is done, then shuts down within 5s.
func Serve(ctx context.Context, ln net.Listener, h http.Handler) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
		return nil
	}
}
