package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/capbroker/capbroker/store"
)

// Health and readiness for load balancers and orchestrators, and the
// drain of a replica that is told to stop.
//
//   - /healthz answers 200 while the process serves HTTP at all
//     (liveness: restart it if this fails);
//   - /readyz answers 200 when the replica should get new requests: every
//     upstream has made its first attempt, the session database (if any)
//     answers within a second, and the replica is not draining; 503 with
//     the reasons otherwise.
//
// Neither needs the bearer token, and neither says more than ready or
// not and why.

// Drain tells the gateway it is shutting down: /readyz fails from now on
// (the balancer stops sending it new sessions), a request that would
// open a new session is refused with 503 (a balancer's retry sends it to
// another replica), and requests of existing sessions are still served.
// In a fleet every session is in the database already, so another
// replica serves what comes next. Call [Gateway.Idle] to wait for the
// calls in flight.
func (g *Gateway) Drain() {
	if !g.draining.Swap(true) {
		g.opts.Metrics.drainingNow()
		g.opts.Logger.Info("draining: no new sessions; finishing the requests in flight")
	}
}

// Idle waits until no MCP request is in flight through [Gateway.Handler]
// (standalone event streams, GET, do not count), or ctx ends.
func (g *Gateway) Idle(ctx context.Context) error {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for g.inflight.Load() > 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
	return nil
}

// track counts r while it runs, unless it is a GET (an event stream that
// lasts as long as the client wants).
func (g *Gateway) track(r *http.Request) func() {
	if r.Method == http.MethodGet {
		return func() {}
	}
	g.inflight.Add(1)
	return func() { g.inflight.Add(-1) }
}

// readiness reports why the gateway is not ready, nil if it is.
func (g *Gateway) readiness(ctx context.Context) []string {
	var why []string
	if g.draining.Load() {
		why = append(why, "draining: the gateway is shutting down")
	}
	if !g.isReady() {
		why = append(why, "upstreams still starting")
	}
	if ss, ok := g.opts.Store.(*StoreSessions); ok {
		if ms, ok := ss.st.(store.MCPSessions); ok {
			ctx, cancel := context.WithTimeout(ctx, time.Second)
			defer cancel()
			if _, err := ms.MCPSession(ctx, "readyz"); err != nil && !errors.Is(err, store.ErrNotFound) {
				why = append(why, "session database unreachable")
			}
		}
	}
	return why
}

func (g *Gateway) healthRoutes(mux *http.ServeMux) {
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, r *http.Request) {
		why := g.readiness(r.Context())
		w.Header().Set("Content-Type", "application/json")
		if len(why) > 0 {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		json.NewEncoder(w).Encode(struct {
			Ready bool     `json:"ready"`
			Why   []string `json:"why,omitempty"`
		}{len(why) == 0, why})
	})
}

// healthPath reports whether path is one a balancer probes without a
// token.
func healthPath(path string) bool { return path == "/healthz" || path == "/readyz" }

// DrainFunc returns the [ServeOptions.Drain] of a gateway replica: it
// drains ([Gateway.Drain]), keeps serving the sessions' requests for
// delay so the balancer's next readiness probe sees it go (new sessions
// are refused meanwhile, with 503), then waits for the calls in flight
// ([Gateway.Idle]) until ctx ends.
func (g *Gateway) DrainFunc(delay time.Duration) func(context.Context) {
	return func(ctx context.Context) {
		g.Drain()
		if delay > 0 {
			select {
			case <-time.After(delay):
			case <-ctx.Done():
			}
		}
		if err := g.Idle(ctx); err != nil {
			g.opts.Logger.Warn("draining: calls still in flight when the drain timeout ran out", "calls", g.inflight.Load())
		}
	}
}
