package gateway

import (
	"context"
	"slices"
)

// endSession records, once, that s ended and why ("end" in the trace):
// its client closed it or disconnected, it idled out, or the gateway
// stopped. A session whose client never initialized it (a version probe)
// left nothing behind and records nothing. A draining replica records
// no end: its sessions go on on another replica. (In a fleet, a DELETE
// that reaches a replica not holding the session records no end either,
// and a replica's copy that idles out while another replica serves the
// session records one that the session's next record overrides.)
func (g *Gateway) endSession(s *session, why string) {
	s.ended.Do(func() {
		s.mu.Lock()
		pending := s.onStart != nil
		exposed := slices.Clone(s.order)
		finds := s.finds
		s.mu.Unlock()
		if pending || !s.inited.Load() {
			return
		}
		cat := s.catalog()
		e := Event{Session: s.key, Kind: "end", Mode: string(s.mode), Reason: "session ended: " + why,
			Exposed: exposed, TokensExposed: cat.tokens(exposed), TokensFull: cat.fullTokens, Identity: s.identity, Finds: finds}
		if s.mode == ModeAll {
			e.Exposed, e.TokensExposed = nil, 0
		}
		g.opts.Trace.Record(context.Background(), e)
	})
}
