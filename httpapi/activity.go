package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/capbroker/capbroker/store"
	"github.com/capbroker/capbroker/trace"
)

// Activity listing limits and the window within which a session counts
// as live.
const (
	DefaultActivityLimit   = 20
	MaxActivityLimit       = 1000
	DefaultActivityRecords = 5000
	// LiveWindow: a session with a record this recent is live. It is the
	// gateway's default --session-idle, after which an idle HTTP session
	// ends.
	LiveWindow = 30 * time.Minute
)

// ActivityResponse is the body of GET /v1/activity: the sessions with
// the most recent trace records, newest activity first, whoever wrote
// them (capbroker gateway, this API, the CLI) into the shared database.
type ActivityResponse struct {
	Count    int               `json:"count"`
	Sessions []SessionActivity `json:"sessions"`
	// Records is how many of the newest trace records were read; Partial
	// is set when there were more, so the oldest sessions listed may lack
	// their first records.
	Records int  `json:"records"`
	Partial bool `json:"partial"`
	// LiveWindowSeconds: a session with a record that recent is live.
	LiveWindowSeconds int `json:"live_window_seconds"`
}

// SessionActivity is what one session was given, found and called, from
// its trace records (and its stored state, for a named session).
type SessionActivity struct {
	ID   string `json:"id"`
	Task string `json:"task"`
	// Gateway is set for a session of capbroker gateway; Mode is its
	// gateway mode (auto, search, call, all).
	Gateway bool   `json:"gateway"`
	Mode    string `json:"mode,omitempty"`
	// Stored is set for a session stored by name (resumable); a gateway
	// client that gave no name is anonymous and only traced.
	Stored bool `json:"stored"`
	// Live is set when the last record is within the live window and
	// the session has not ended.
	Live bool `json:"live"`
	// Ended is set when the session's last record says it ended (its
	// client closed it, it idled out, the gateway stopped): EndedAt is
	// when, EndReason how. A session that ended and came back (a client
	// reconnecting under its name) is not ended.
	Ended     bool       `json:"ended"`
	EndedAt   *time.Time `json:"ended_at,omitempty"`
	EndReason string     `json:"end_reason,omitempty"`
	FirstAt   time.Time  `json:"first_at"`
	LastAt    time.Time  `json:"last_at"`
	Records   int        `json:"records"`
	// Given are the tools the session was first given; Found those
	// find_capability added, in order; Exposed all it may call now.
	Given   []string `json:"given"`
	Found   []string `json:"found"`
	Exposed []string `json:"exposed"`
	// Called counts the tool calls by tool and outcome.
	Called []CallCount `json:"called"`
	// Held are the held-back tools the session met: matched by a find,
	// or called and refused.
	Held      []HeldTool `json:"held"`
	FindCalls int        `json:"find_capability_calls"`
	// Failures counts the records that carry a failure.
	Failures int `json:"failures"`
	// Tokens are the exposed tools' tokens against the full catalog's,
	// at the last record.
	Tokens trace.Tokens `json:"tokens"`
}

// CallCount is how many calls of a tool ended one way.
type CallCount struct {
	Tool     string `json:"tool"`
	Upstream string `json:"upstream,omitempty"`
	// Outcome is the gateway's (ok, tool_error, error, timeout, denied,
	// cancelled, not_exposed, unknown, held), or for an API session
	// "allowed" or "refused".
	Outcome string `json:"outcome"`
	Count   int    `json:"count"`
}

// HeldTool is a held-back tool a session met.
type HeldTool struct {
	Name string `json:"name"`
	// Why is the gateway's reason when a call was refused, else the
	// find query that matched it.
	Why string `json:"why"`
	// Refused counts the calls refused.
	Refused int `json:"refused"`
}

// gatewayDetail is the part of a trace record's detail the gateway
// writes (see gateway.Record).
type gatewayDetail struct {
	Gateway  bool     `json:"gateway"`
	Mode     string   `json:"mode"`
	Upstream string   `json:"upstream"`
	Outcome  string   `json:"outcome"`
	Held     []string `json:"held"`
}

// sessionLister is the part of a store.Store the activity reads stored
// sessions with.
type sessionLister interface {
	Sessions(ctx context.Context, q *store.SessionQuery) ([]store.Session, error)
}

// handleActivity answers GET /v1/activity?limit=&records=.
func (s *Server) handleActivity(w http.ResponseWriter, r *http.Request) {
	if s.opts.Traces == nil {
		if s.opts.StoreError != nil {
			writeError(w, errorf(CodeUnavailable, "session activity is unavailable: "+s.opts.StoreError.Error()))
			return
		}
		writeError(w, errorf(CodeNotConfigured, "session activity is not configured on this server (capbroker serve reads it from --db)"))
		return
	}
	q := r.URL.Query()
	limit, records := DefaultActivityLimit, DefaultActivityRecords
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxActivityLimit {
			writeError(w, errorf(CodeInvalid, fmt.Sprintf("limit %q: want 1 to %d sessions", v, MaxActivityLimit)))
			return
		}
		limit = n
	}
	if v := q.Get("records"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxTraceLimit {
			writeError(w, errorf(CodeInvalid, fmt.Sprintf("records %q: want 1 to %d trace records", v, MaxTraceLimit)))
			return
		}
		records = n
	}
	recs, err := s.opts.Traces.Traces(r.Context(), &store.TraceQuery{Limit: records, Newest: true})
	if err != nil {
		writeError(w, errorf(CodeUnavailable, err.Error()))
		return
	}
	var stored []store.Session
	if sl, ok := s.opts.Traces.(sessionLister); ok {
		if stored, err = sl.Sessions(r.Context(), &store.SessionQuery{Limit: limit}); err != nil {
			writeError(w, errorf(CodeUnavailable, err.Error()))
			return
		}
	}
	out := summarize(recs, stored, time.Now(), limit)
	out.Records, out.Partial = len(recs), len(recs) == records
	writeJSON(w, http.StatusOK, out)
}

// summarize builds the activity of the sessions in recs (oldest first)
// and stored, newest activity first, at most limit of them.
func summarize(recs []trace.Record, stored []store.Session, now time.Time, limit int) ActivityResponse {
	byID := map[string]*SessionActivity{}
	get := func(id string) *SessionActivity {
		a := byID[id]
		if a == nil {
			a = &SessionActivity{ID: id, Given: []string{}, Found: []string{}, Exposed: []string{}, Called: []CallCount{}, Held: []HeldTool{}}
			byID[id] = a
		}
		return a
	}
	for i := range recs {
		rec := &recs[i]
		if rec.SessionID == "" {
			continue // a route decision outside any session
		}
		a := get(rec.SessionID)
		var d gatewayDetail
		if len(rec.Detail) > 0 {
			json.Unmarshal(rec.Detail, &d) // another shape: no gateway details
		}
		if a.Records == 0 {
			a.FirstAt = rec.At
		}
		a.Records++
		a.LastAt = rec.At
		if d.Gateway {
			a.Gateway = true
		}
		if d.Mode != "" {
			a.Mode = d.Mode
		}
		if a.Task == "" && rec.Task != "" {
			a.Task = rec.Task
		}
		if len(rec.Failures) > 0 {
			a.Failures++
		}
		a.FindCalls = max(a.FindCalls, rec.FindCapabilityCalls)
		a.Ended, a.EndedAt, a.EndReason = false, nil, ""
		if rec.Kind == trace.KindEnd {
			at := rec.At
			a.Ended, a.EndedAt, a.EndReason = true, &at, rec.CapabilityReason
			continue // what it had exposed stays as the last records say
		}
		a.Exposed = nonNil(slices.Clone(rec.SelectedTools))
		a.Tokens = rec.Tokens
		switch rec.Kind {
		case trace.KindSelect:
			if len(a.Given) == 0 {
				a.Given = nonNil(slices.Clone(rec.SelectedTools))
			}
		case trace.KindFind:
			a.Found = appendNew(a.Found, rec.Found...)
			for _, h := range d.Held {
				addHeld(a, h, "matched find_capability "+strconv.Quote(rec.Query), false)
			}
		case trace.KindCall:
			outcome := d.Outcome
			if outcome == "" {
				outcome = "allowed"
				if len(rec.Failures) > 0 {
					outcome = "refused"
				}
			}
			if outcome == "held" {
				why := ""
				if len(rec.Failures) > 0 {
					why = rec.Failures[0].Message
				}
				addHeld(a, rec.Tool, why, true)
			}
			addCall(a, rec.Tool, d.Upstream, outcome)
		}
	}
	for i := range stored {
		st := &stored[i]
		a := get(st.ID)
		a.Stored = true
		if a.Task == "" {
			a.Task = st.Task
		}
		if len(st.Selected) > 0 {
			a.Given = slices.Clone(st.Selected)
		}
		if len(st.Exposed) > 0 {
			a.Exposed = slices.Clone(st.Exposed)
			a.Found = appendNew(a.Found, without(st.Exposed, a.Given)...)
		}
		a.FindCalls = max(a.FindCalls, st.FindCalls)
		if a.Records == 0 {
			a.FirstAt, a.LastAt = st.CreatedAt, st.UpdatedAt
		}
		if st.UpdatedAt.After(a.LastAt) {
			a.LastAt = st.UpdatedAt
		}
	}
	list := make([]SessionActivity, 0, len(byID))
	for _, a := range byID {
		a.Live = !a.Ended && now.Sub(a.LastAt) < LiveWindow
		list = append(list, *a)
	}
	sort.Slice(list, func(i, j int) bool {
		if !list[i].LastAt.Equal(list[j].LastAt) {
			return list[i].LastAt.After(list[j].LastAt)
		}
		return list[i].ID < list[j].ID
	})
	if len(list) > limit {
		list = list[:limit]
	}
	return ActivityResponse{Count: len(list), Sessions: list, LiveWindowSeconds: int(LiveWindow / time.Second)}
}

func addCall(a *SessionActivity, tool, upstream, outcome string) {
	for i := range a.Called {
		c := &a.Called[i]
		if c.Tool == tool && c.Outcome == outcome {
			c.Count++
			if c.Upstream == "" {
				c.Upstream = upstream
			}
			return
		}
	}
	a.Called = append(a.Called, CallCount{Tool: tool, Upstream: upstream, Outcome: outcome, Count: 1})
}

func addHeld(a *SessionActivity, name, why string, refused bool) {
	for i := range a.Held {
		h := &a.Held[i]
		if h.Name == name {
			if refused {
				h.Refused++
				if why != "" {
					h.Why = why // the gateway's reason beats the query
				}
			}
			return
		}
	}
	h := HeldTool{Name: name, Why: why}
	if refused {
		h.Refused = 1
	}
	a.Held = append(a.Held, h)
}

// appendNew appends the names list lacks, in order.
func appendNew(list []string, names ...string) []string {
	for _, n := range names {
		if !slices.Contains(list, n) {
			list = append(list, n)
		}
	}
	return list
}

// without returns the names of list not in drop.
func without(list, drop []string) []string {
	var out []string
	for _, n := range list {
		if !slices.Contains(drop, n) {
			out = append(out, n)
		}
	}
	return out
}

// nonNil makes an empty list print as [] rather than null.
func nonNil(list []string) []string {
	if list == nil {
		return []string{}
	}
	return list
}
