package gateway

import (
	"context"
	"net/http"
	"sync"

	"github.com/capbroker/capbroker/identity"
	"github.com/capbroker/capbroker/policy"
)

// The kind of client a session serves. Options.Client names the kind of
// every session; over HTTP a session may name its own, with ClientHeader
// or ?client= (one shared gateway serving Claude Code next to an SDK
// agent), validated against [Clients]: an unknown name is refused with
// 400 naming the known ones. A session with no name is of the gateway's
// kind. Its kind decides, for that session alone:
//
//   - whether irreversible tools pass through (a client that asks its user
//     before each call) or are held (listed under find_capability's held,
//     refused with what releases them, asked through elicitation when
//     allowed): the session reads a catalog built for its kind (see
//     [catalog.forClient]), the other kind's built on first use;
//   - whether its first list has the MCP coding floor (none for a client
//     with file tools of its own).

// ClientHeader names the kind of client an HTTP session is opened by
// (also ?client=): one of [Clients]. It overrides Options.Client for that
// session.
const ClientHeader = "Capbroker-Client"

// requestClient is the client kind an HTTP request names, "" for none.
func requestClient(r *http.Request) string {
	return firstOf(r.Header.Get(ClientHeader), r.URL.Query().Get("client"))
}

// checkRequestClient says why a request's client kind cannot be served,
// "" if it can (or names none).
func checkRequestClient(r *http.Request) string {
	if _, err := ParseClient(requestClient(r)); err != nil {
		return "capbroker gateway: the " + ClientHeader + " header (or ?client=): " + err.Error()
	}
	return ""
}

// kind is the name of the client kind s serves ("" for none).
func (s *session) kind() string {
	if s.clientKind != "" {
		return s.clientKind
	}
	return s.g.opts.Client
}

// clientProfile is what the gateway knows of s's client.
func (s *session) clientProfile() ClientProfile { return Clients[s.kind()] }

// catalog is the catalog in use as s's kind of client sees it.
func (s *session) catalog() *catalog {
	return s.g.catalog().forClient(s.clientProfile().AsksEachCall)
}

// forClient returns c as a client that asks its user before each call
// (asks) or not sees it: c itself when it was built so, else the same
// snapshot built for that kind.
func (c *catalog) forClient(asks bool) *catalog {
	if asks == c.asks || c.other == nil {
		return c
	}
	return c.other()
}

// withOther gives cat, built from ups within serve for the gateway's
// kind of client, the same snapshot for the other kind, built the first
// time a session of that kind reads it (most gateways serve one kind and
// never build it). ctx bounds its background work (embedding its cards),
// as it bounds cat's.
func (g *Gateway) withOther(ctx context.Context, cat *catalog, ups []*upstream, serve []identity.Profile) {
	o := *g.opts
	o.Client = ""
	if !cat.asks {
		o.Client = kindThatAsks
	}
	cat.other = sync.OnceValue(func() *catalog {
		other, err := buildCatalog(ctx, ups, &o, g.ranking, serve)
		if err != nil {
			g.opts.Logger.Error("building the catalog for another kind of client; serving it the gateway's", "error", err)
			return cat
		}
		other.other = func() *catalog { return cat }
		return other
	})
}

// kindThatAsks is a client of [Clients] that asks before each call, for
// building a catalog that passes irreversible tools through.
const kindThatAsks = "claude-desktop"

// selectOptions are the options of s's first selection: the gateway's
// family, and, for a client whose kind differs from the gateway's in
// having file tools of its own, the floors of its kind.
func (s *session) selectOptions() *policy.Options {
	o := &policy.Options{Family: s.g.opts.Family}
	p := s.clientProfile()
	if p.FileTools == s.g.opts.client().FileTools {
		return o // the broker's own floors are this kind's
	}
	switch {
	case p.FileTools:
		o.Floors = noFileFloor(s.g.opts.floors)
	case s.g.opts.floors != nil:
		o.Floors = s.g.opts.floors
	default:
		o.Floors = policy.DefaultFloors
	}
	return o
}
