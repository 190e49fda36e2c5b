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
	// Kind is "select" (a session's first tools), "find" or "call".
	Kind  string   `json:"kind"`
	Mode  string   `json:"mode,omitempty"`
	Query string   `json:"query,omitempty"`
	Names []string `json:"names,omitempty"`
	// Reason explains a selection or a find.
	Reason   string `json:"reason,omitempty"`
	Tool     string `json:"tool,omitempty"`
	Upstream string `json:"upstream,omitempty"`
	// Outcome of a call: ok, tool_error, error, timeout, denied, cancelled.
	Outcome    string  `json:"outcome,omitempty"`
	DurationMS float64 `json:"duration_ms,omitempty"`
	// TokensExposed are the tokens of the tools listed (select) or found
	// (find); TokensFull those of every tool the gateway could list.
	TokensExposed int `json:"tokens_exposed,omitempty"`
	TokensFull    int `json:"tokens_full,omitempty"`
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
