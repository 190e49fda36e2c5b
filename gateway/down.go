package gateway

import (
	"fmt"
	"strings"
)

// A find says which servers are down. When an upstream a session could
// use is not connected (still starting, failed to start, unreachable,
// restarting after it stopped), its tools may be missing from what
// find_capability ranks, so the answer names it in a compact "down"
// field; when every server is up the field is absent and the answer is
// byte for byte what it was. A server outside the gateway's or the
// session's profiles is never named: the session could not use it.

// maxDown is how many down servers a find names; the note counts the
// rest.
const maxDown = 4

// downAnswer is find_capability's "down" field.
type downAnswer struct {
	Servers []downServer `json:"servers"`
	Note    string       `json:"note"`
}

// downServer is one server not connected, and why, in a few words.
type downServer struct {
	Name  string `json:"name"`
	State string `json:"state"`
}

// downNote says what a down server means for the answer.
const downNote = "not connected now: their tools may be missing from matches, and a call to one fails until it is back; the gateway retries them"

// upstreamState says in a few words why an upstream that is not
// connected is not, and its last error ("" when it has none).
func upstreamState(u *upstream, st Status) (string, string) {
	why := ""
	if st.Error != "" {
		why = clip(u.redact(st.Error), 120)
	}
	switch {
	case st.Error == "":
		return "starting", ""
	case st.Restarts > 0:
		return "restarting after it stopped", why
	case u.cfg.URL != "":
		return "unreachable", why
	}
	return "failed to start", why
}

// couldUse reports whether session s could use server's tools: the
// gateway's profiles serve it, and so do those s keeps within.
func (s *session) couldUse(server string) bool {
	if !serves(s.g.currentProfiles().Serve, server, "") {
		return false
	}
	for _, r := range s.limitRefs() {
		p, ok := s.g.resolve(r)
		if !ok || !p.AllowsServer(server) {
			return false
		}
	}
	return true
}

// downServers are the servers s could use that are not connected, in
// the gateway's order; nil when all are up.
func (s *session) downServers() *downAnswer {
	var out *downAnswer
	more := 0
	for _, u := range s.g.upstreams() {
		st := u.status()
		if st.Connected || !s.couldUse(u.cfg.Name) {
			continue
		}
		if out == nil {
			out = &downAnswer{Note: downNote}
		}
		if len(out.Servers) == maxDown {
			more++
			continue
		}
		state, why := upstreamState(u, st)
		if why != "" {
			state += " (" + why + ")"
		}
		out.Servers = append(out.Servers, downServer{Name: u.cfg.Name, State: state})
	}
	if more > 0 {
		out.Note = fmt.Sprintf("%s; %d more server(s) are down too", out.Note, more)
	}
	return out
}

// shorten drops the errors from d's states, keeping the few words.
func (d *downAnswer) shorten() {
	for i := range d.Servers {
		if state, _, ok := strings.Cut(d.Servers[i].State, " ("); ok {
			d.Servers[i].State = state
		}
	}
}
