package gateway

import (
	"context"
	"encoding/json"
	"io"
	"sync"
	"time"
)

// Event is one traced decision or call of a session.
type Event struct {
	Time    time.Time `json:"time"`
	Session string    `json:"session"`
	// Identity names who opened the session (HTTPOptions.Identities).
	Identity string `json:"identity,omitempty"`
	// Kind is "select" (a session's first tools), "plan" (before the
	// select of a session started from a plan task), "resume" (a session
	// reopened under a stored name), "find", "call" or "end" (the session
	// ended; Reason says how).
	Kind  string `json:"kind"`
	Mode  string `json:"mode,omitempty"`
	Query string `json:"query,omitempty"`
	// Names are the tools selected (select) or found (find).
	Names []string `json:"names,omitempty"`
	// Found are the tools a find newly exposed.
	Found []string `json:"found,omitempty"`
	// Held are the held-back tools a find matched (not exposed; see Held).
	Held []string `json:"held,omitempty"`
	// Exposed are the upstream tools the session may call after the event,
	// in the order given (selected, then found); every tool in mode all.
	Exposed []string `json:"exposed,omitempty"`
	// Reason explains a selection or a find; for a call, how the tool
	// was reached when not from the session's list ("called by name").
	Reason string `json:"reason,omitempty"`
	// Ranking says why a selection or find was ranked by words only
	// (hybrid ranking's card vectors not ready, the task not embedded);
	// empty when it ranked as configured.
	Ranking string `json:"ranking,omitempty"`
	Tool    string `json:"tool,omitempty"`
	// ToolDigest is the called tool's card digest (learning from use
	// starts over for a tool that changed).
	ToolDigest string `json:"tool_digest,omitempty"`
	Upstream   string `json:"upstream,omitempty"`
	// Outcome of a call: ok, tool_error, error, timeout, denied,
	// cancelled; or, for calls refused without reaching a server,
	// bad_arguments, unknown (no tool by that name, even forgivingly) or
	// held. A call's Reason is "called by name" when it reached a tool
	// the session did not list (Found names it then).
	Outcome    string  `json:"outcome,omitempty"`
	DurationMS float64 `json:"duration_ms,omitempty"`
	// Failure says what went wrong: why a call was refused, which exposed
	// tools a resumed session no longer finds.
	Failure string `json:"failure,omitempty"`
	// TokensExposed are the tokens of the Exposed tools' definitions (MCP
	// JSON, o200k); TokensFull those of every tool the gateway could list;
	// TokensFound those of a find's answer (what the find cost the agent).
	TokensExposed int `json:"tokens_exposed,omitempty"`
	TokensFull    int `json:"tokens_full,omitempty"`
	TokensFound   int `json:"tokens_found,omitempty"`
	// Finds counts the find_capability calls of this client session so
	// far, this one included. ([StoreSessions] counts those of a stored
	// session across its reconnects instead.)
	Finds int `json:"finds,omitempty"`
	// Client is who made a call over HTTP: the session key it named, else
	// a digest of its bearer token, else its address; empty over stdio.
	// Learning from use counts a few sessions per client at most.
	Client string `json:"client,omitempty"`
}

// Tracer records events. Record must be safe for concurrent use and should
// not block.
type Tracer interface {
	Record(ctx context.Context, e Event)
}

type nopTracer struct{}

func (nopTracer) Record(context.Context, Event) {}

// JSONLTracer writes each event as one JSON line.
type JSONLTracer struct {
	mu sync.Mutex
	w  io.Writer
}

// NewJSONLTracer returns a tracer writing to w.
func NewJSONLTracer(w io.Writer) *JSONLTracer { return &JSONLTracer{w: w} }

// Record implements Tracer.
func (t *JSONLTracer) Record(_ context.Context, e Event) {
	if e.Time.IsZero() {
		e.Time = time.Now().UTC()
	}
	b, err := json.Marshal(e)
	if err != nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.w.Write(append(b, '\n'))
}

var _ Tracer = (*JSONLTracer)(nil)
