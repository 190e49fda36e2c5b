package replay

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/capbroker/capbroker/eval"
	"github.com/capbroker/capbroker/trace"
)

// Session is what one recorded session asked for and called.
type Session struct {
	ID string `json:"id"`
	// Task is the task the session was started with; empty when none
	// was given.
	Task string `json:"task,omitempty"`
	// Finds are its find_capability queries, in order.
	Finds []Find `json:"finds,omitempty"`
	// Calls are the tools it called that ran (the tool answered), in
	// order, each once: the first call.
	Calls []Call `json:"calls,omitempty"`
	// Tokens are the tokens of the tools exposed at the session's end,
	// as recorded (0 when the records do not say).
	Tokens int `json:"tokens"`
	// At is the time of its first record.
	At time.Time `json:"at"`
}

// Find is one recorded find_capability call.
type Find struct {
	Query string `json:"query"`
	// Matched are the tools it returned, as recorded.
	Matched []string `json:"matched,omitempty"`
	at      int      // position among the session's events
}

// Call is one recorded tool call.
type Call struct {
	Tool string `json:"tool"`
	at   int
}

// detail is the part of a record's detail replay reads (the gateway's).
type detail struct {
	NoTask  bool     `json:"no_task"`
	Matched []string `json:"matched"`
	Outcome string   `json:"outcome"`
}

// Sessions groups recs (in any order) into sessions, in the order of
// their first record. Records outside a session (a one-off select or
// plan) are left out, and so are calls that did not run: refused ones
// (a failure recorded) and those whose outcome was not ok or
// tool_error.
func Sessions(recs []trace.Record) []Session {
	recs = slices.Clone(recs)
	slices.SortStableFunc(recs, func(a, b trace.Record) int {
		if c := a.At.Compare(b.At); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	index := make(map[string]int)
	var out []Session
	events := make(map[string]int)
	for i := range recs {
		r := &recs[i]
		if r.SessionID == "" {
			continue
		}
		j, ok := index[r.SessionID]
		if !ok {
			j = len(out)
			index[r.SessionID] = j
			out = append(out, Session{ID: r.SessionID, At: r.At})
		}
		s := &out[j]
		var d detail
		if len(r.Detail) > 0 {
			_ = decodeDetail(r.Detail, &d)
		}
		if r.Task != "" && !d.NoTask && (r.Kind == trace.KindSelect || s.Task == "") {
			s.Task = r.Task
		}
		s.Tokens = max(s.Tokens, r.Tokens.Exposed)
		n := events[r.SessionID]
		events[r.SessionID] = n + 1
		switch r.Kind {
		case trace.KindFind:
			if r.Query == "" {
				continue
			}
			matched := d.Matched
			if len(matched) == 0 {
				matched = r.Found
			}
			s.Finds = append(s.Finds, Find{Query: r.Query, Matched: slices.Clone(matched), at: n})
		case trace.KindCall:
			if r.Tool == "" || r.Failed("") || (d.Outcome != "" && d.Outcome != "ok" && d.Outcome != "tool_error") {
				continue
			}
			if slices.ContainsFunc(s.Calls, func(c Call) bool { return c.Tool == r.Tool }) {
				continue
			}
			s.Calls = append(s.Calls, Call{Tool: r.Tool, at: n})
		}
	}
	return out
}

// Queries turns sessions into benchmark queries: each session with a
// task and at least one call is a query (its ID the session's), its text
// the task, its gold the tools the session called.
func Queries(sessions []Session) []eval.Query {
	var qs []eval.Query
	for _, s := range sessions {
		if strings.TrimSpace(s.Task) == "" || len(s.Calls) == 0 {
			continue
		}
		q := eval.Query{ID: s.ID, Text: s.Task}
		for _, c := range s.Calls {
			q.Gold = append(q.Gold, c.Tool)
		}
		qs = append(qs, q)
	}
	return qs
}

// Exposer is what today's broker would have given a session.
type Exposer interface {
	// Select returns the tools exposed up front for a task.
	Select(ctx context.Context, task string) ([]string, error)
	// Find returns the tools a find_capability query returns.
	Find(ctx context.Context, query string) ([]string, error)
	// Tokens returns the tokens of the tools' definitions as the agent
	// is given them.
	Tokens(names []string) int
	// Has reports whether the catalog has the tool today.
	Has(name string) bool
}

// What a call or a find would be today.
const (
	UpFront = "up front" // exposed by the session's selection
	Found   = "found"    // found by one of the session's finds made before it
	Lost    = "lost"     // neither
	Gone    = "gone"     // the tool is no longer in the catalog
	NoCall  = "no call"  // a find that led to no call
)

// Outcome is what one call or find would be today.
type Outcome struct {
	// Tool is the call's tool; Query the find's query.
	Tool  string `json:"tool,omitempty"`
	Query string `json:"query,omitempty"`
	// Then says how it went in the recording: for a call, "up front" or
	// "found" (whether the session's selection had exposed it); for a
	// find, whether it had returned what the session then called.
	Then string `json:"then"`
	// Now says how it would go today.
	Now string `json:"now"`
	// By is the find that finds the call today.
	By string `json:"by,omitempty"`
}

// SessionReport is one session replayed.
type SessionReport struct {
	ID   string `json:"id"`
	Task string `json:"task,omitempty"`
	// UpFront are the tools today's selection exposes for the task.
	UpFront []string  `json:"up_front"`
	Calls   []Outcome `json:"calls"`
	Finds   []Outcome `json:"finds"`
	// TokensThen are the tokens exposed at the session's end as
	// recorded; TokensNow those of what today exposes up front and what
	// the session's finds return today.
	TokensThen int `json:"tokens_then"`
	TokensNow  int `json:"tokens_now"`
}

// Totals counts calls and finds by how they would go today.
type Totals struct {
	Sessions int            `json:"sessions"`
	Calls    map[string]int `json:"calls"`
	Finds    map[string]int `json:"finds"`
	// Changed counts the calls whose way to the agent changed: exposed up
	// front then and not now, or the other way, or lost.
	Regressed int `json:"regressed"`
	Improved  int `json:"improved"`
	// TokensThen and TokensNow sum the sessions'.
	TokensThen int `json:"tokens_then"`
	TokensNow  int `json:"tokens_now"`
}

// Report is a replay: each session and the totals.
type Report struct {
	Sessions []SessionReport `json:"sessions"`
	Totals   Totals          `json:"totals"`
}

// Run replays sessions against ex.
func Run(ctx context.Context, ex Exposer, sessions []Session) (*Report, error) {
	rep := &Report{Totals: Totals{Calls: map[string]int{}, Finds: map[string]int{}}}
	for _, s := range sessions {
		sr, err := replaySession(ctx, ex, &s)
		if err != nil {
			return nil, fmt.Errorf("replaying session %s: %w", s.ID, err)
		}
		t := &rep.Totals
		t.Sessions++
		for _, c := range sr.Calls {
			t.Calls[c.Now]++
			switch {
			case c.Now == Lost || c.Now == Gone || (c.Then == UpFront && c.Now != UpFront):
				t.Regressed++
			case c.Then != UpFront && c.Now == UpFront:
				t.Improved++
			}
		}
		for _, f := range sr.Finds {
			t.Finds[f.Now]++
		}
		t.TokensThen += sr.TokensThen
		t.TokensNow += sr.TokensNow
		rep.Sessions = append(rep.Sessions, *sr)
	}
	return rep, nil
}

func replaySession(ctx context.Context, ex Exposer, s *Session) (*SessionReport, error) {
	sr := &SessionReport{ID: s.ID, Task: s.Task, TokensThen: s.Tokens, UpFront: []string{}, Calls: []Outcome{}, Finds: []Outcome{}}
	if strings.TrimSpace(s.Task) != "" {
		names, err := ex.Select(ctx, s.Task)
		if err != nil {
			return nil, fmt.Errorf("selecting for the task: %w", err)
		}
		sr.UpFront = names
	}
	exposed := slices.Clone(sr.UpFront)
	found := make([][]string, len(s.Finds))
	for i, f := range s.Finds {
		names, err := ex.Find(ctx, f.Query)
		if err != nil {
			return nil, fmt.Errorf("finding %q: %w", f.Query, err)
		}
		found[i] = names
		for _, n := range names {
			if !slices.Contains(exposed, n) {
				exposed = append(exposed, n)
			}
		}
	}
	// Then: a call was up front when no find made before it had
	// returned it.
	for _, c := range s.Calls {
		o := Outcome{Tool: c.Tool, Then: UpFront}
		for _, f := range s.Finds {
			if f.at < c.at && slices.Contains(f.Matched, c.Tool) {
				o.Then = Found
				break
			}
		}
		switch {
		case !ex.Has(c.Tool):
			o.Now = Gone
		case slices.Contains(sr.UpFront, c.Tool):
			o.Now = UpFront
		default:
			o.Now = Lost
			for i, f := range s.Finds {
				if f.at < c.at && slices.Contains(found[i], c.Tool) {
					o.Now, o.By = Found, f.Query
					break
				}
			}
		}
		sr.Calls = append(sr.Calls, o)
	}
	for i, f := range s.Finds {
		o := Outcome{Query: f.Query}
		var led []string // what the session called after this find returned it
		for _, c := range s.Calls {
			if c.at > f.at && slices.Contains(f.Matched, c.Tool) {
				led = append(led, c.Tool)
			}
		}
		if len(led) == 0 {
			o.Then, o.Now = NoCall, NoCall
			sr.Finds = append(sr.Finds, o)
			continue
		}
		o.Then = Found
		switch {
		case allIn(led, sr.UpFront):
			o.Now = UpFront
		case allIn(led, append(slices.Clone(sr.UpFront), found[i]...)):
			o.Now = Found
		default:
			o.Now = Lost
		}
		sr.Finds = append(sr.Finds, o)
	}
	sr.TokensNow = ex.Tokens(exposed)
	return sr, nil
}

func allIn(names, in []string) bool {
	for _, n := range names {
		if !slices.Contains(in, n) {
			return false
		}
	}
	return true
}
