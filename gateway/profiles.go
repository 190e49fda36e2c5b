package gateway

import (
	"context"
	"fmt"
	"net/http"
	"slices"

	"github.com/capbroker/capbroker/identity"
)

// Profiles (package identity's named profiles) narrow what the gateway
// serves, at three levels:
//
//   - the gateway's own ([Profiles.Serve]: "gateway --profile NAME", the
//     one a client's entry names, and the one a project's capbroker.yaml
//     chooses): a tool must be allowed by each; the tools of other
//     servers, and tools outside the patterns, are not in the catalog at
//     all (neither listed, found nor callable); their pins are listed in
//     every session;
//   - an identity's ("profile: NAME" or inline, see identity.go) and a
//     request's (the Capbroker-Profile header or ?profile=, naming a
//     profile of [Profiles.Named]): they keep one session within them, on
//     top of the gateway's, and their pins join that session's list.
//
// A profile only narrows: no level widens what another allows.
// [Gateway.SetProfiles] applies edits while the gateway runs: the
// catalog is rebuilt, new pins join the sessions' lists, and every
// session whose list or profile changed gets list_changed.
type Profiles struct {
	// Serve are the profiles every session is kept within; ServeNames
	// name them, for logs and errors.
	Serve      []identity.Profile
	ServeNames []string
	// Named are the profiles identities and requests may name.
	Named *identity.Profiles
}

// ProfileHeader names a profile an HTTP session keeps within (also
// ?profile=); an unknown name is refused with 400.
const ProfileHeader = "Capbroker-Profile"

// SetProfiles replaces the profiles the gateway serves (see [Profiles]).
// Before Start it only sets them.
func (g *Gateway) SetProfiles(ps Profiles) {
	g.mu.Lock()
	old := g.profiles
	g.profiles = ps
	started := !g.startedAt.IsZero()
	g.mu.Unlock()
	if !started {
		return
	}
	g.opts.Logger.Info("profiles changed", "serving", ps.ServeNames)
	// Sessions kept within a named profile whose definition changed hear
	// of it even when their list is the same.
	for _, s := range g.liveSessions() {
		for _, ref := range s.limitRefs() {
			if ref.name == "" {
				continue
			}
			a, _ := old.Named.Get(ref.name)
			b, _ := ps.Named.Get(ref.name)
			if !slices.Equal(a.Servers, b.Servers) || !slices.Equal(a.Tools, b.Tools) || !slices.Equal(a.Deny, b.Deny) {
				s.touchTools()
				break
			}
		}
	}
	g.changed(nil)
}

func (g *Gateway) currentProfiles() Profiles {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.profiles
}

// serves reports whether the gateway's own profiles allow the tool named
// name (its gateway name) of server; name "" asks about the server.
func serves(profiles []identity.Profile, server, name string) bool {
	for i := range profiles {
		if !profiles[i].AllowsServer(server) {
			return false
		}
		if name != "" && !profiles[i].Allows(server, name) {
			return false
		}
	}
	return true
}

// profileRef is a profile a session keeps within: inline (an identity's
// own), or by name, resolved on every use.
type profileRef struct {
	name   string
	inline *identity.Profile
	from   string // "identity ci-bot", "the request: Capbroker-Profile or ?profile="
}

// resolve returns the profile, and false when its name is no longer
// defined (the session then gets nothing: a profile only narrows).
func (g *Gateway) resolve(r profileRef) (identity.Profile, bool) {
	if r.inline != nil {
		return *r.inline, true
	}
	return g.currentProfiles().Named.Get(r.name)
}

// limitAllows reports whether every profile the session keeps within
// allows the tool, and if not, why.
func (g *Gateway) limitAllows(refs []profileRef, server, name string) (bool, string) {
	for _, r := range refs {
		p, ok := g.resolve(r)
		if !ok {
			return false, fmt.Sprintf("profile %s (of %s) is no longer defined", r.name, r.from)
		}
		if !p.Allows(server, name) {
			what := "this identity's profile"
			if r.name != "" {
				what = fmt.Sprintf("profile %s (of %s)", r.name, r.from)
			}
			return false, what + " (its servers and tool patterns)"
		}
	}
	return true, ""
}

// requestProfile is the profile an HTTP request names, "" for none.
func requestProfile(r *http.Request) string {
	return firstOf(r.Header.Get(ProfileHeader), r.URL.Query().Get("profile"))
}

// checkRequestProfile says why a request's profile cannot be served, ""
// if it can (or names none).
func (g *Gateway) checkRequestProfile(r *http.Request) string {
	name := requestProfile(r)
	if name == "" {
		return ""
	}
	if _, err := g.currentProfiles().Named.Lookup(name, "capbroker gateway: the "+ProfileHeader+" header (or ?profile=)"); err != nil {
		return err.Error()
	}
	return ""
}

// keepWithin keeps s within the profiles refs (see profileMiddleware) and
// lists their pins.
func (g *Gateway) keepWithin(s *session, refs ...profileRef) {
	if len(refs) == 0 {
		return
	}
	s.mu.Lock()
	first := len(s.limits) == 0
	s.limits = append(s.limits, refs...)
	s.mu.Unlock()
	if first {
		s.server.AddReceivingMiddleware(g.profileMiddleware(s))
	}
	s.addPins(s.catalog())
	s.sync()
}

// sessionPins are the tools pinned in s's list: the gateway's pins and
// those of the profiles s keeps within, each allowed by all of them.
func (g *Gateway) sessionPins(s *session, cat *catalog, refs []profileRef) []string {
	pins := slices.Clone(g.pinned(cat))
	for _, r := range refs {
		if p, ok := g.resolve(r); ok && len(p.Always) > 0 {
			pins = merge(pins, g.resolvePins(cat, p.Always, false))
		}
	}
	if len(refs) == 0 {
		return pins
	}
	kept := pins[:0:0]
	for _, n := range pins {
		e, ok := cat.tools[n]
		if !ok {
			continue
		}
		if ok, _ := g.limitAllows(refs, e.up.cfg.Name, n); ok {
			kept = append(kept, n)
		}
	}
	return kept
}

// addPins lists the pins s has not been given yet (a pin added to a
// profile, a pinned server started late) and saves the session's tools.
func (s *session) addPins(cat *catalog) {
	if s.mode == ModeAll {
		return
	}
	refs := s.limitRefs()
	pins := s.g.sessionPins(s, cat, refs)
	s.mu.Lock()
	if s.pinSeen == nil {
		s.pinSeen = map[string]bool{}
	}
	var fresh []string
	for _, n := range pins {
		if !s.pinSeen[n] {
			s.pinSeen[n] = true
			fresh = append(fresh, n)
		}
	}
	added := s.addLocked(fresh)
	for _, n := range added {
		s.initial[n] = true
	}
	save := len(added) > 0 && !s.anon && s.onStart == nil
	all := slices.Clone(s.order)
	s.mu.Unlock()
	if save {
		go func() {
			if err := s.g.opts.Store.Save(context.Background(), s.key, all); err != nil {
				s.g.opts.Logger.Warn("saving a session's exposed tools", "session", s.key, "error", err)
			}
		}()
	}
}

// limitRefs are the profiles s keeps within beyond the gateway's.
// withinLimits says which gateway tool names of cat the session may
// reach: those all the profiles it keeps within allow. It is nil when the
// session keeps within none (everything is allowed).
func (s *session) withinLimits(cat *catalog) func(string) bool {
	refs := s.limitRefs()
	if len(refs) == 0 {
		return nil
	}
	return func(name string) bool {
		ok, _ := s.g.limitAllows(refs, cat.serverOf(name), name)
		return ok
	}
}

func (s *session) limitRefs() []profileRef {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.limits)
}

// touchTools makes the session's client hear list_changed though its
// list may be the same (a profile it keeps within changed: the client
// should list again).
func (s *session) touchTools() {
	if s.mode == ModeAll {
		s.mu.Lock()
		s.allSig = ""
		s.mu.Unlock()
		s.sync()
		return
	}
	s.server.AddTool(s.g.hatchTool(), s.find)
}
