package gateway

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/capbroker/capbroker/store"
)

// Stream resumption across replicas. With a session store that keeps
// server-sent events ([store.MCPEvents]: PostgreSQL), every event the
// gateway sends on a stream (a POST's responses and notifications, the
// GET stream's notifications) is stored before it is sent, so a client
// whose stream was cut resumes it with Last-Event-ID on any replica: the
// replica rebuilds the session if it does not hold it and replays what
// the stream sent after that event. Events are kept
// [DefaultStreamRetention] and at most [DefaultStreamEvents] a session
// (the oldest go first); a resumption from an event no longer kept, or
// of a stream whose replica stopped before sending anything but its
// priming event, is refused with 400 and a message that says so (the
// session goes on: the client sends its request again), never left
// hanging.

// Defaults of the stream retention ([HTTPOptions.StreamRetention],
// [HTTPOptions.StreamEvents]; a negative StreamEvents stores none, and
// streams cannot be resumed).
const (
	DefaultStreamRetention = 10 * time.Minute
	DefaultStreamEvents    = 1000
)

// fleetEvents is the SDK's event store over a [store.MCPEvents].
type fleetEvents struct {
	st store.MCPEvents

	mu sync.Mutex
	// primes counts, per session and stream, the priming events not
	// stored yet: they are stored with the stream's first message, in
	// the same write (a stream that never sends one needs no row).
	primes map[[2]string]int
}

var _ mcp.EventStore = (*fleetEvents)(nil)

func newFleetEvents(g *Gateway) *fleetEvents {
	ss, ok := g.opts.Store.(*StoreSessions)
	if !ok {
		return nil
	}
	st, ok := ss.st.(store.MCPEvents)
	if !ok {
		return nil
	}
	return &fleetEvents{st: st, primes: map[[2]string]int{}}
}

// Open implements mcp.EventStore: a stream's row is made by its first
// event.
func (e *fleetEvents) Open(context.Context, string, string) error { return nil }

// Append implements mcp.EventStore.
func (e *fleetEvents) Append(ctx context.Context, session, stream string, data []byte) error {
	if ctx.Value(replayKey{}) != nil {
		return nil // a rebuild's replayed initialize: no client reads it
	}
	k := [2]string{session, stream}
	e.mu.Lock()
	if len(data) == 0 {
		e.primes[k]++
		e.mu.Unlock()
		return nil
	}
	n := e.primes[k]
	delete(e.primes, k)
	e.mu.Unlock()
	events := make([][]byte, n+1)
	events[n] = data
	_, err := e.st.AppendMCPEvents(context.WithoutCancel(ctx), session, stream, events...)
	return err
}

// flush stores the priming events of a stream not stored yet.
func (e *fleetEvents) flush(ctx context.Context, session, stream string) error {
	k := [2]string{session, stream}
	e.mu.Lock()
	n := e.primes[k]
	delete(e.primes, k)
	e.mu.Unlock()
	if n == 0 {
		return nil
	}
	_, err := e.st.AppendMCPEvents(ctx, session, stream, make([][]byte, n)...)
	return err
}

// After implements mcp.EventStore.
func (e *fleetEvents) After(ctx context.Context, session, stream string, index int) iter.Seq2[[]byte, error] {
	return func(yield func([]byte, error) bool) {
		if err := e.flush(ctx, session, stream); err != nil {
			yield(nil, err)
			return
		}
		events, err := e.st.MCPEventsAfter(ctx, session, stream, int64(index))
		if errors.Is(err, store.ErrEventsGone) {
			err = fmt.Errorf("%w: %w", mcp.ErrEventsPurged, err)
		}
		if err != nil {
			yield(nil, err)
			return
		}
		for _, d := range events {
			if !yield(d, nil) {
				return
			}
		}
	}
}

// SessionClosed implements mcp.EventStore. The session's copy here
// ended, not the session (it may go on on another replica): its events
// stay until the session ends ([fleet.forget]) or the retention drops
// them.
func (e *fleetEvents) SessionClosed(_ context.Context, session string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	for k := range e.primes {
		if k[0] == session {
			delete(e.primes, k)
		}
	}
	return nil
}

// resumable checks a GET's Last-Event-ID against the stored events and,
// when the stream cannot be resumed, answers 400 with why; it reports
// whether the request is to be served.
func (e *fleetEvents) resumable(w http.ResponseWriter, r *http.Request, session string) bool {
	if e == nil || r.Method != http.MethodGet || len(r.Header.Values("Last-Event-ID")) == 0 {
		return true
	}
	eid := r.Header.Get("Last-Event-ID")
	i := strings.LastIndex(eid, "_")
	idx, err := strconv.ParseInt(eid[i+1:], 10, 64)
	if i < 0 || err != nil || idx < 0 {
		return true // the SDK refuses it, with its own message
	}
	stream := eid[:i]
	if err := e.flush(r.Context(), session, stream); err != nil {
		http.Error(w, "capbroker gateway: cannot resume the stream: "+err.Error(), http.StatusServiceUnavailable)
		return false
	}
	if _, err := e.st.MCPEventsAfter(r.Context(), session, stream, idx); err != nil {
		code := http.StatusServiceUnavailable
		if errors.Is(err, store.ErrEventsGone) {
			code = http.StatusBadRequest
		}
		http.Error(w, "capbroker gateway: cannot resume the stream from event "+eid+": "+err.Error()+
			"; the session goes on: send the request again", code)
		return false
	}
	return true
}
