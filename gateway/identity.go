package gateway

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/time/rate"

	"github.com/capbroker/capbroker/identity"
	"github.com/capbroker/capbroker/policy"
)

// Identities ([HTTPOptions.Identities]): each bearer token maps to an
// identity (package identity), whose name the gateway records — on the
// session in the database, in every trace record (detail "identity"),
// in /metrics — and never the token. Each identity may have
//
//   - a session quota: the MCP sessions it keeps open at once; in a fleet
//     counted in the database, across every replica; a new session past
//     it is refused with 429;
//   - a request rate (and burst): past it a request is refused with 429
//     and Retry-After; in a fleet on PostgreSQL the bucket is the
//     fleet's (see ratelimit.go), else this process's;
//   - a profile: the servers and tool patterns it may see and call; a
//     tool outside it is neither listed, nor found, nor callable.
//
// A session belongs to the identity that opened it: a request of another
// identity (or none) for it is refused with 403, on every replica.

type identityKey struct{}

// requestIdentity is the identity a request was authenticated as, nil
// without identities (or with the shared token).
func requestIdentity(ctx context.Context) *identity.Identity {
	id, _ := ctx.Value(identityKey{}).(*identity.Identity)
	return id
}

func identityName(id *identity.Identity) string {
	if id == nil {
		return ""
	}
	return id.Name
}

// authenticate returns the handler that admits a request with a known
// token, with its identity in the context: one of set's, or, for the
// shared token, none. Health probes need no token.
func (g *Gateway) authenticate(set *identity.Set, shared string, next http.Handler) http.Handler {
	limits := &limiters{m: map[string]*rate.Limiter{}}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if healthPath(r.URL.Path) {
			next.ServeHTTP(w, r)
			return
		}
		token, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		id, ok := set.Lookup(token)
		if !ok && !(shared != "" && constantEqual(token, shared)) {
			g.opts.Metrics.identityRequest("", "unauthorized")
			w.Header().Set("WWW-Authenticate", `Bearer realm="capbroker gateway"`)
			http.Error(w, "missing or wrong bearer token", http.StatusUnauthorized)
			return
		}
		if id != nil {
			if !g.allow(r.Context(), limits, id) {
				g.opts.Metrics.identityRequest(id.Name, "rate_limited")
				w.Header().Set("Retry-After", strconv.Itoa(max(1, int(1/id.Rate+0.5))))
				http.Error(w, fmt.Sprintf("capbroker gateway: identity %s sends more than %g requests a second (burst %d); slow down", id.Name, id.Rate, id.Burst), http.StatusTooManyRequests)
				return
			}
			g.opts.Metrics.identityRequest(id.Name, "ok")
			r = r.WithContext(context.WithValue(r.Context(), identityKey{}, id))
		}
		next.ServeHTTP(w, r)
	})
}

// limiters are the request buckets of the identities, made on first use:
// this process's (rate.Limiter) and its share of the fleet's.
type limiters struct {
	mu    sync.Mutex
	m     map[string]*rate.Limiter
	fleet map[string]*fleetBucket
}

// of returns id's bucket in this process, for a fleet of n replicas
// sharing its rate (the rate and burst divided by n).
func (l *limiters) of(id *identity.Identity, n int) *rate.Limiter {
	l.mu.Lock()
	defer l.mu.Unlock()
	n = max(n, 1)
	r, b := rate.Limit(id.Rate/float64(n)), max(1, (max(1, id.Burst)+n-1)/n)
	lim := l.m[id.Name]
	if lim == nil {
		lim = rate.NewLimiter(r, b)
		l.m[id.Name] = lim
	} else if lim.Limit() != r || lim.Burst() != b {
		lim.SetLimit(r)
		lim.SetBurst(b)
	}
	return lim
}

// bucket returns the identity's share of the fleet's bucket.
func (l *limiters) bucket(name string) *fleetBucket {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fleet == nil {
		l.fleet = map[string]*fleetBucket{}
	}
	b := l.fleet[name]
	if b == nil {
		b = &fleetBucket{}
		l.fleet[name] = b
	}
	return b
}

// overQuota says why id may not open another session, "" if it may. In a
// fleet the database counts its sessions on every replica; otherwise the
// sessions open here.
func (g *Gateway) overQuota(ctx context.Context, f *fleet, id *identity.Identity) string {
	if id == nil || id.Sessions <= 0 {
		return ""
	}
	n := 0
	if f != nil {
		c, err := f.st.CountMCPSessions(ctx, id.Name)
		if err != nil {
			g.opts.Logger.Warn("counting an identity's sessions; not bounding it", "identity", id.Name, "error", err)
			return ""
		}
		n = c
	} else {
		for _, s := range g.liveSessions() {
			if s.identity == id.Name {
				n++
			}
		}
	}
	if n < id.Sessions {
		return ""
	}
	return fmt.Sprintf("capbroker gateway: identity %s has %d MCP sessions open, its quota; end one (DELETE) or let one idle out", id.Name, n)
}

// claim gives s to the identity of the request that opened it: the
// identity is recorded for its trace, and the session refuses requests
// of another, and sees only the tools id's profile allows.
func (g *Gateway) claim(s *session, id *identity.Identity) {
	if id == nil {
		return
	}
	s.identity = id.Name
	g.identities.Store(s.key, id.Name)
	if ref, ok := identityProfile(id); ok {
		g.keepWithin(s, ref)
	}
}

// identityProfile is the profile id keeps within, if any: inline, or
// named ("profile: NAME").
func identityProfile(id *identity.Identity) (profileRef, bool) {
	if id == nil || id.Profile.Empty() {
		return profileRef{}, false
	}
	if id.Profile.Name != "" {
		return profileRef{name: id.Profile.Name, from: "identity " + id.Name}, true
	}
	p := id.Profile
	return profileRef{inline: &p, from: "identity " + id.Name}, true
}

// profileMiddleware keeps a session within profiles: tools/list and
// find_capability show only tools all of them allow, and a call of
// another is refused, saying which profile.
func (g *Gateway) profileMiddleware(s *session) mcp.Middleware {
	check := func(name string) (bool, string) {
		e, ok := s.catalog().tools[name]
		if !ok {
			return true, "" // not a tool of an upstream: the gateway's own, or unknown (refused later)
		}
		return g.limitAllows(s.limitRefs(), e.up.cfg.Name, name)
	}
	allows := func(name string) bool {
		ok, _ := check(name)
		return ok
	}
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/call" {
				if name := calledTool(req); name != "" {
					if ok, why := check(name); !ok {
						return errorResult(fmt.Sprintf("capbroker gateway: %s is outside %s", name, why)), nil
					}
				}
			}
			res, err := next(ctx, method, req)
			if err != nil {
				return res, err
			}
			switch r := res.(type) {
			case *mcp.ListToolsResult:
				kept := r.Tools[:0:0]
				for _, t := range r.Tools {
					if allows(t.Name) {
						kept = append(kept, t)
					}
				}
				c := *r
				c.Tools = kept
				return &c, nil
			case *mcp.CallToolResult:
				if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok && p.Name == policy.HatchName {
					return filterFound(r, allows), nil
				}
			}
			return res, nil
		}
	}
}

// filterFound removes from a find_capability result the matches a
// profile does not allow.
func filterFound(r *mcp.CallToolResult, allows func(string) bool) *mcp.CallToolResult {
	if len(r.Content) != 1 {
		return r
	}
	tc, ok := r.Content[0].(*mcp.TextContent)
	if !ok {
		return r
	}
	// find_capability's own answer: filtered and written back in its
	// order (name first in each match), as compact as it came.
	var ans findAnswer
	dec := json.NewDecoder(strings.NewReader(tc.Text))
	dec.DisallowUnknownFields()
	if dec.Decode(&ans) == nil {
		n, h := len(ans.Matches), len(ans.Held)
		ans.Matches = slices.DeleteFunc(ans.Matches, func(f found) bool { return !allows(f.Name) })
		ans.Held = slices.DeleteFunc(ans.Held, func(f heldFound) bool { return !allows(f.Name) })
		if len(ans.Matches) == n && len(ans.Held) == h {
			return r
		}
		if ans.Matches == nil {
			ans.Matches = []found{}
		}
		b, err := json.Marshal(ans)
		if err != nil {
			return r
		}
		c := *r
		c.Content = []mcp.Content{&mcp.TextContent{Text: string(b)}}
		return &c
	}
	var out map[string]json.RawMessage
	if json.Unmarshal([]byte(tc.Text), &out) != nil {
		return r
	}
	changed := false
	for _, field := range []string{"matches", "held"} {
		var list []map[string]json.RawMessage
		if json.Unmarshal(out[field], &list) != nil {
			continue
		}
		kept := list[:0:0]
		for _, m := range list {
			var name string
			json.Unmarshal(m["name"], &name)
			if allows(name) {
				kept = append(kept, m)
			}
		}
		if len(kept) != len(list) {
			changed = true
			b, _ := json.Marshal(kept)
			out[field] = b
		}
	}
	if !changed {
		return r
	}
	b, err := json.Marshal(out)
	if err != nil {
		return r
	}
	c := *r
	c.Content = []mcp.Content{&mcp.TextContent{Text: string(b)}}
	return &c
}

// identityTracer adds to each event the identity of its session.
type identityTracer struct {
	next Tracer
	g    *Gateway
}

func (t identityTracer) Record(ctx context.Context, e Event) {
	if e.Identity == "" {
		if v, ok := t.g.identities.Load(e.Session); ok {
			e.Identity = v.(string)
		}
	}
	t.next.Record(ctx, e)
}

func constantEqual(a, b string) bool {
	return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

// owns reports whether the request's identity may use the session id:
// the identity that opened it (none for none). A session held here is
// judged by its own record; one of the fleet, by the database's.
func (g *Gateway) owns(f *fleet, r *http.Request, id string) bool {
	who := identityName(requestIdentity(r.Context()))
	if v, ok := g.byID.Load(id); ok {
		return v.(*session).identity == who
	}
	if f == nil {
		return true // unknown here: the SDK answers 404
	}
	m, err := f.st.MCPSession(r.Context(), id)
	if err != nil {
		return true // not stored (404 follows) or unreadable (the rebuild says so)
	}
	return m.Identity == who
}
