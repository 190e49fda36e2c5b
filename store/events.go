package store

import (
	"context"
	"errors"
	"time"
)

// ErrEventsGone is wrapped by [MCPEvents.MCPEventsAfter] when the events
// a client asks to resume from are no longer kept (dropped by the
// retention, or never stored): the stream cannot be resumed.
var ErrEventsGone = errors.New("the stream's events are no longer kept")

// MCPEvents keeps the server-sent events of MCP sessions' streams, so a
// client whose stream was cut on one replica resumes it on another with
// Last-Event-ID. The PostgreSQL store implements it; events are numbered
// per stream from 0, in the order appended.
type MCPEvents interface {
	// AppendMCPEvents stores events of a session's stream, in order, and
	// returns the number of the first. An empty event (a priming event)
	// is stored and numbered like the others.
	AppendMCPEvents(ctx context.Context, session, stream string, events ...[]byte) (int64, error)
	// MCPEventsAfter returns the events of the stream numbered after
	// after, in order. It fails with ErrEventsGone if any of them is no
	// longer kept, or if the stream is unknown and after is not before
	// its first event (the client saw events the store does not have).
	// An unknown stream after its event 0 has no events yet: a writer
	// may store a stream's priming event 0 with its first message.
	MCPEventsAfter(ctx context.Context, session, stream string, after int64) ([][]byte, error)
	// DropMCPEvents removes the events of a session (it ended).
	DropMCPEvents(ctx context.Context, session string) error
	// TrimMCPEvents keeps at most perSession events of each session
	// (dropping the oldest) and none older than before, and drops the
	// events of sessions no longer stored; it returns how many it
	// removed.
	TrimMCPEvents(ctx context.Context, perSession int, before time.Time) (int64, error)
}
