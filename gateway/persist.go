package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/capbroker/capbroker/store"
	"github.com/capbroker/capbroker/trace"
)

// StoreOptions configures [NewStoreSessions]. A nil *StoreOptions uses
// every default.
type StoreOptions struct {
	// Task is stored as the task of the sessions the gateway creates. If
	// empty, "capbroker gateway".
	Task string
	// Queue is how many trace records may wait to be written before
	// Record blocks. If zero, 1024.
	Queue int
	// Logger receives write failures. If nil, slog.Default().
	Logger *slog.Logger
	// NoTask says Task only names the gateway's sessions: no task was
	// given (no --task). Records then say so in their detail (no_task),
	// and learning from use takes no phrase from it.
	NoTask bool
	// Durable makes Record wait until its record is written (records
	// queued together are written in one transaction), so a call or find
	// answered is in the trace even if the process is killed right
	// after: what a fleet of replicas needs. Otherwise a kill loses the
	// records still queued.
	Durable bool
}

// StoreSessions persists the gateway's client sessions in a [store.Store]
// (SQLite or PostgreSQL), the store "capbroker session" and "capbroker
// trace" read. It is both the gateway's [ExposedStore] and its [Tracer]:
//
//   - each named client session is a store.Session whose ID is the
//     session's name, whose Selected are the tools it was first given and
//     whose Exposed are those plus what find_capability found, in order,
//     so a client that reconnects under the same name, to this gateway or
//     to another one sharing the database, gets the same tools;
//   - an anonymous session (no name given) gets no store.Session: one
//     would be written for every connection and never read again;
//   - each event (select, resume, find, call) becomes a trace.Record of
//     that session, with the tools exposed after it and their tokens
//     against the full catalog's ("capbroker trace --session NAME"; an
//     anonymous session's records carry its MCP session ID).
//
// Exposed sets are written before Save returns. Trace records are written
// in order by one background writer, so a proxied call never waits for
// the database; [StoreSessions.Close] writes what is queued. Write
// failures are logged, never returned to the client.
type StoreSessions struct {
	st      store.Store
	task    string
	noTask  bool
	durable bool
	log     *slog.Logger

	mu     sync.Mutex // guards closed and sends on q
	closed bool
	q      chan queued
	done   chan struct{}
}

// queued is an event waiting to be written; written, if set, is closed
// once it is (StoreOptions.Durable).
type queued struct {
	e       Event
	written chan struct{}
}

// NewStoreSessions returns sessions persisted in st. The caller closes
// st after [StoreSessions.Close].
func NewStoreSessions(st store.Store, opts *StoreOptions) *StoreSessions {
	var o StoreOptions
	if opts != nil {
		o = *opts
	}
	if o.Task == "" {
		o.Task = "capbroker gateway"
	}
	if o.Queue <= 0 {
		o.Queue = 1024
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	s := &StoreSessions{st: st, task: o.Task, noTask: o.NoTask, durable: o.Durable, log: o.Logger, q: make(chan queued, o.Queue), done: make(chan struct{})}
	go s.writer()
	return s
}

// Interface guards.
var (
	_ ExposedStore = (*StoreSessions)(nil)
	_ Tracer       = (*StoreSessions)(nil)
)

// maxConflicts bounds the re-read and retry rounds of one write that
// races with another writer of the same session.
const maxConflicts = 32

// Load implements ExposedStore: the stored session's exposed tools.
func (s *StoreSessions) Load(ctx context.Context, key string) ([]string, bool, error) {
	sess, err := s.st.Session(ctx, key)
	if errors.Is(err, store.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("loading session %s: %w", key, err)
	}
	return slices.Clone(sess.Exposed), true, nil
}

// Save implements ExposedStore: it creates the session with names as
// its selection, or adds names to the stored exposed tools, keeping the
// stored order and appending new names in the order given. Names stored
// meanwhile by another writer (another gateway sharing the database) are
// kept: a session's tools only grow.
func (s *StoreSessions) Save(ctx context.Context, key string, names []string) error {
	ctx = context.WithoutCancel(ctx) // a client hanging up must not lose its tools
	for range maxConflicts {
		sess, err := s.st.Session(ctx, key)
		switch {
		case errors.Is(err, store.ErrNotFound):
			err = s.st.CreateSession(ctx, &store.Session{ID: key, Task: s.task,
				Selected: slices.Clone(names), Exposed: slices.Clone(names)})
			if errors.Is(err, store.ErrExists) {
				continue // created meanwhile by another connection: update it
			}
			if err != nil {
				return fmt.Errorf("saving session %s: %w", key, err)
			}
			return nil
		case err != nil:
			return fmt.Errorf("saving session %s: %w", key, err)
		}
		sess.Exposed = merge(sess.Exposed, names)
		err = s.st.UpdateSession(ctx, sess)
		if errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return fmt.Errorf("saving session %s: %w", key, err)
		}
		return nil
	}
	return fmt.Errorf("saving session %s: %d conflicting writes in a row: %w", key, maxConflicts, store.ErrConflict)
}

// merge returns have followed by the names of want it lacks, in order,
// without duplicates.
func merge(have, want []string) []string {
	out := make([]string, 0, len(have)+len(want))
	seen := map[string]bool{}
	for _, n := range have {
		if !seen[n] {
			out = append(out, n)
			seen[n] = true
		}
	}
	for _, n := range want {
		if !seen[n] {
			out = append(out, n)
			seen[n] = true
		}
	}
	return out
}

// Record implements Tracer: it queues e for the background writer. It
// blocks only when the queue is full; after Close it drops e.
func (s *StoreSessions) Record(_ context.Context, e Event) {
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	var written chan struct{}
	if s.durable {
		written = make(chan struct{})
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		s.log.Warn("trace record after the store closed; dropped", "session", e.Session, "kind", e.Kind)
		return
	}
	s.q <- queued{e, written}
	s.mu.Unlock()
	if written != nil {
		<-written
	}
}

// Close writes the queued records and stops the writer. It does not
// close the store. It may be called more than once.
func (s *StoreSessions) Close() error {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		close(s.q)
	}
	s.mu.Unlock()
	<-s.done
	return nil
}

func (s *StoreSessions) writer() {
	defer close(s.done)
	ctx := context.Background()
	for q := range s.q {
		batch := []Event{q.e}
		waiting := []chan struct{}{q.written}
		// Take what else is waiting, to write it in one transaction.
	more:
		for len(batch) < 256 {
			select {
			case q, ok := <-s.q:
				if !ok {
					break more
				}
				batch = append(batch, q.e)
				waiting = append(waiting, q.written)
			default:
				break more
			}
		}
		s.write(ctx, batch)
		for _, w := range waiting {
			if w != nil {
				close(w)
			}
		}
	}
}

// write stores a batch of events in order. A find also counts in its
// session's find_capability_calls, in the same transaction as its record.
func (s *StoreSessions) write(ctx context.Context, batch []Event) {
	var recs []trace.Record
	// Each record carries its session's find_capability count so far: a
	// stored session's, read once per batch and session; the event's own
	// for a session not stored (anonymous).
	finds := map[string]int{}
	unstored := map[string]bool{}
	findsOf := func(id string) (int, bool) {
		if n, ok := finds[id]; ok {
			return n, true
		}
		if unstored[id] {
			return 0, false
		}
		sess, err := s.st.Session(ctx, id)
		if err != nil {
			unstored[id] = true
			return 0, false
		}
		finds[id] = sess.FindCalls
		return sess.FindCalls, true
	}
	flush := func() {
		if len(recs) == 0 {
			return
		}
		if err := s.st.AppendTraces(ctx, recs...); err != nil {
			s.log.Error("writing gateway trace records", "records", len(recs), "error", err)
		}
		recs = recs[:0]
	}
	for _, e := range batch {
		rec := Record(e)
		if rec.Task == "" {
			rec.Task = s.task
			if s.noTask {
				rec.Detail = withNoTask(rec.Detail)
			}
		}
		if e.Kind != "find" {
			if rec.SessionID != "" {
				if n, ok := findsOf(rec.SessionID); ok {
					rec.FindCapabilityCalls = n
				}
			}
			recs = append(recs, rec)
			continue
		}
		flush()
		n, stored, err := s.writeFind(ctx, rec)
		if err != nil {
			s.log.Error("writing a gateway find record", "session", e.Session, "error", err)
		}
		if stored {
			finds[rec.SessionID] = n
			delete(unstored, rec.SessionID)
		}
	}
	flush()
}

// writeFind stores a find's record and counts it in its session, in one
// transaction. It returns the session's find count after it, and whether
// the session is stored (if not, the record keeps the event's count).
func (s *StoreSessions) writeFind(ctx context.Context, rec trace.Record) (int, bool, error) {
	for range maxConflicts {
		sess, err := s.st.Session(ctx, rec.SessionID)
		if errors.Is(err, store.ErrNotFound) {
			// Not stored (anonymous): the record alone.
			rec.FindCapabilityCalls = max(rec.FindCapabilityCalls, 1)
			return rec.FindCapabilityCalls, false, s.st.AppendTraces(ctx, rec)
		}
		if err != nil {
			return 0, false, err
		}
		sess.FindCalls++
		rec.FindCapabilityCalls = sess.FindCalls
		rec.Task = sess.Task
		err = s.st.UpdateSession(ctx, sess, rec)
		if errors.Is(err, store.ErrConflict) {
			continue
		}
		return sess.FindCalls, true, err
	}
	return 0, false, fmt.Errorf("%d conflicting writes in a row: %w", maxConflicts, store.ErrConflict)
}

// Record converts a gateway event to a trace record: the session, the
// tools exposed after the event (SelectedTools), what a find added
// (Found), the tokens of the exposed tools against the full catalog's, a
// refusal or missing tools as a failure, and the gateway's own details
// (mode, upstream, outcome, the held-back tools a find matched) in
// Detail.
func Record(e Event) trace.Record {
	rec := trace.Record{
		SessionID: e.Session, At: e.Time, Query: e.Query, Tool: e.Tool, FindCapabilityCalls: e.Finds,
		SelectedTools: slices.Clone(e.Exposed), Found: slices.Clone(e.Found),
		CapabilityReason: e.Reason,
		Tokens:           trace.Tokens{Exposed: e.TokensExposed, Full: e.TokensFull, Format: "mcp"},
		Latency:          time.Duration(e.DurationMS * float64(time.Millisecond)),
	}
	switch e.Kind {
	case "select":
		rec.Kind = trace.KindSelect
		rec.Task = e.Query
		rec.Query = ""
	case "plan":
		rec.Kind = trace.KindPlan
		rec.Task = e.Query
		rec.Query = ""
	case "resume":
		rec.Kind = trace.KindResume
	case "end":
		rec.Kind = trace.KindEnd
	case "find":
		rec.Kind = trace.KindFind
	default:
		rec.Kind = trace.KindCall
	}
	if rec.At.IsZero() {
		rec.At = time.Now()
	}
	if e.Failure != "" {
		tier := trace.TierExposure
		if e.Kind == "resume" {
			tier = trace.TierCatalog
		}
		rec.Failures = []trace.Failure{{Tier: tier, Message: e.Failure}}
	}
	rec.ToolDigest = e.ToolDigest
	d := detail{Gateway: true, Identity: e.Identity, Mode: e.Mode, Upstream: e.Upstream, Outcome: e.Outcome, TokensFound: e.TokensFound, Held: slices.Clone(e.Held),
		Ranking: e.Ranking, Client: e.Client}
	if e.Kind == "find" {
		d.Matched = slices.Clone(e.Names)
	}
	if e.Kind == "call" && e.Upstream != "" {
		rec.CapabilityReason = fmt.Sprintf("%s: %s in %.1f ms", e.Upstream, e.Outcome, e.DurationMS)
		if e.Reason != "" {
			rec.CapabilityReason += "; " + e.Reason // "called by name"
		}
	}
	rec.Detail, _ = json.Marshal(d)
	return rec
}

// detail is the gateway's part of a trace record.
type detail struct {
	Gateway bool `json:"gateway"`
	// Identity names who opened the session (HTTPOptions.Identities).
	Identity    string `json:"identity,omitempty"`
	Mode        string `json:"mode,omitempty"`
	Upstream    string `json:"upstream,omitempty"`
	Outcome     string `json:"outcome,omitempty"`
	TokensFound int    `json:"tokens_found,omitempty"`
	// Held are the held-back tools a find matched.
	Held []string `json:"held,omitempty"`
	// Matched are every tool a find returned, exposed before or not
	// (Found has those it newly exposed); package learn reads it.
	Matched []string `json:"matched,omitempty"`
	// Client is who made a call (Event.Client); package learn reads it.
	Client string `json:"client,omitempty"`
	// Ranking says why the selection or find was ranked by words only.
	Ranking string `json:"ranking,omitempty"`
	// NoTask says the record's task only names the gateway's sessions
	// (StoreOptions.NoTask); package learn reads it.
	NoTask bool `json:"no_task,omitempty"`
}

// withNoTask sets no_task in a record's detail.
func withNoTask(raw json.RawMessage) json.RawMessage {
	var d detail
	if len(raw) > 0 && json.Unmarshal(raw, &d) != nil {
		return raw
	}
	d.NoTask = true
	b, err := json.Marshal(d)
	if err != nil {
		return raw
	}
	return b
}

// Tracers sends each event to every tracer, in order.
type Tracers []Tracer

// Record implements Tracer.
func (ts Tracers) Record(ctx context.Context, e Event) {
	if e.Time.IsZero() {
		e.Time = time.Now().UTC()
	}
	for _, t := range ts {
		t.Record(ctx, e)
	}
}

var _ Tracer = Tracers(nil)
