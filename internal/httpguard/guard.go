package httpguard

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// Options configures a [Guard]. A nil *Options accepts only loopback and
// IP-address hosts, and same-origin browser requests.
type Options struct {
	// Hosts are the host names, beside IP addresses, "localhost" and
	// names under ".localhost", that requests may name in their Host
	// header, without the port ("capbroker.internal"). A leading "*."
	// accepts every name under a domain.
	Hosts []string
	// Origins are the browser origins, beside the server's own, allowed to
	// send requests ("https://tools.example.com").
	Origins []string
	// Deny writes a refusal. If nil, a plain-text http.Error.
	Deny func(w http.ResponseWriter, r *http.Request, status int, msg string)
}

// Guard checks the Host and Origin of requests. Create it with [New]; it
// is safe for concurrent use.
type Guard struct {
	hosts   map[string]bool
	domains []string // from "*.example.com": ".example.com"
	origins map[string]bool
	cop     *http.CrossOriginProtection
	deny    func(w http.ResponseWriter, r *http.Request, status int, msg string)
}

// New returns a guard; it fails on a malformed origin.
func New(opts *Options) (*Guard, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	g := &Guard{hosts: map[string]bool{}, origins: map[string]bool{}, cop: http.NewCrossOriginProtection(), deny: o.Deny}
	if g.deny == nil {
		g.deny = func(w http.ResponseWriter, _ *http.Request, status int, msg string) { http.Error(w, msg, status) }
	}
	for _, h := range o.Hosts {
		h = strings.ToLower(strings.TrimSpace(h))
		switch {
		case h == "":
		case strings.HasPrefix(h, "*."):
			g.domains = append(g.domains, h[1:])
		default:
			g.hosts[strings.TrimSuffix(h, ".")] = true
		}
	}
	for _, s := range o.Origins {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if err := g.cop.AddTrustedOrigin(s); err != nil {
			return nil, fmt.Errorf("allowed origin %q: %w", s, err)
		}
		g.origins[strings.ToLower(s)] = true
	}
	g.cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.deny(w, r, http.StatusForbidden, fmt.Sprintf("cross-origin %s request refused (from %s): capbroker answers only its own pages; allow an origin with --allow-origin", r.Method, firstOf(r.Header.Get("Origin"), "another site")))
	}))
	return g, nil
}

// Wrap returns next behind the guard.
func (g *Guard) Wrap(next http.Handler) http.Handler {
	checked := g.cop.Handler(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !g.HostAllowed(r.Host) {
			g.deny(w, r, http.StatusForbidden, fmt.Sprintf("Host %q refused: capbroker answers requests for localhost and IP addresses only, so that a web page cannot reach it by DNS rebinding; allow a name with --allow-host", r.Host))
			return
		}
		if origin := r.Header.Get("Origin"); origin != "" && !g.originAllowed(origin, r.Host) {
			g.deny(w, r, http.StatusForbidden, fmt.Sprintf("cross-origin request refused (Origin %q): capbroker answers only its own pages; allow an origin with --allow-origin", origin))
			return
		}
		checked.ServeHTTP(w, r)
	})
}

// HostAllowed reports whether a Host header value (with or without a
// port) is accepted. An empty Host (HTTP/1.0) is: no browser sends one.
func (g *Guard) HostAllowed(hostport string) bool {
	if hostport == "" {
		return true
	}
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if net.ParseIP(host) != nil || host == "localhost" || strings.HasSuffix(host, ".localhost") || g.hosts[host] {
		return true
	}
	for _, d := range g.domains {
		if strings.HasSuffix(host, d) {
			return true
		}
	}
	return false
}

// originAllowed reports whether a request from a page of origin may reach
// the server named host: the same host and port, or an allowed origin.
// "null" (a sandboxed or file: page) is another origin.
func (g *Guard) originAllowed(origin, host string) bool {
	if g.origins[strings.ToLower(origin)] {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	return strings.EqualFold(u.Host, host)
}

func firstOf(xs ...string) string {
	for _, x := range xs {
		if x != "" {
			return x
		}
	}
	return ""
}
