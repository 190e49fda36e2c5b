package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/capbroker/capbroker/trace"
)

// Errors callers branch on, with errors.Is.
var (
	// ErrNotFound: no session has the ID.
	ErrNotFound = errors.New("session not found")
	// ErrExists: a session with the ID is already stored.
	ErrExists = errors.New("session already exists")
	// ErrConflict: the stored session changed since it was read.
	ErrConflict = errors.New("session changed by another writer")
	// ErrSchemaTooNew: the database was written by a newer capbroker.
	ErrSchemaTooNew = errors.New("database schema is newer than this capbroker")
)

// Session is the persisted state of one agent run.
type Session struct {
	// ID is unique in the store.
	ID string `json:"id"`
	// Task is what the run is for.
	Task string `json:"task"`
	// Selected are the tools the initial selection exposed, in order.
	Selected []string `json:"selected_tools"`
	// Exposed are the tools the model may call: Selected, then each tool
	// found through find_capability, in the order found. The escape hatch
	// itself is always exposed and not listed.
	Exposed []string `json:"exposed_tools"`
	// Iterations counts the iterations used; MaxIterations is the budget.
	Iterations    int `json:"iterations"`
	MaxIterations int `json:"max_iterations"`
	// FindCalls counts the find_capability calls.
	FindCalls int `json:"find_capability_calls"`
	// Selection is the initial selection (a policy.Selection) as JSON,
	// kept for explanations.
	Selection json.RawMessage `json:"selection,omitempty"`
	// PlanGoal and PlanTask are the goal of the plan and the id of its
	// task the session was started from; both empty for a session started
	// from a task alone.
	PlanGoal string `json:"plan_goal,omitempty"`
	PlanTask string `json:"plan_task,omitempty"`
	// Version is bumped by every write; see [Store.UpdateSession].
	Version int64 `json:"version"`
	// CreatedAt and UpdatedAt are kept to the microsecond, in UTC.
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Clone returns a deep copy of s.
func (s *Session) Clone() *Session {
	c := *s
	c.Selected = slices.Clone(s.Selected)
	c.Exposed = slices.Clone(s.Exposed)
	c.Selection = slices.Clone(s.Selection)
	return &c
}

// Validate reports the first problem that keeps s from being stored.
func (s *Session) Validate() error {
	if strings.TrimSpace(s.ID) == "" {
		return fmt.Errorf("session has no id")
	}
	if len(s.ID) > 200 {
		return fmt.Errorf("session id is longer than 200 bytes")
	}
	if strings.ContainsRune(s.ID, 0) || strings.ContainsRune(s.Task, 0) || strings.ContainsRune(s.PlanGoal, 0) || strings.ContainsRune(s.PlanTask, 0) {
		return fmt.Errorf("session %q: id, task or plan holds a NUL byte", s.ID)
	}
	if len(s.Selection) > 0 && !json.Valid(s.Selection) {
		return fmt.Errorf("session %s: selection is not valid JSON", s.ID)
	}
	if s.Iterations < 0 || s.MaxIterations < 0 || s.FindCalls < 0 {
		return fmt.Errorf("session %s: negative counter", s.ID)
	}
	return nil
}

// SessionQuery filters [Store.Sessions]. A nil *SessionQuery lists every
// session.
type SessionQuery struct {
	// Limit caps the sessions returned, newest first. Zero: no limit.
	Limit int
}

// TraceQuery filters [Store.Traces]. A nil *TraceQuery lists every record.
type TraceQuery struct {
	// SessionID keeps the records of one session. Empty: all.
	SessionID string
	// Kind keeps the records of one kind. Empty: all.
	Kind trace.Kind
	// AfterID keeps records with a greater ID, for paging.
	AfterID int64
	// Limit caps the records returned, oldest first. Zero: no limit.
	Limit int
	// Newest, with Limit, keeps the Limit newest records (still returned
	// oldest first) rather than the oldest: the recent activity.
	Newest bool
}

// ErrCorrupt is wrapped by the error of opening a database file that is
// corrupt or not a database; the message names the file and the command
// that resets it.
var ErrCorrupt = errors.New("the session database is corrupt")

// Store persists sessions and traces.
//
// Implementations are safe for concurrent use by many goroutines and, for
// databases that allow it, by many processes. Times are stored to the
// microsecond in UTC; the Session passed to a write is updated with the
// stored version and times.
type Store interface {
	// CreateSession stores a new session at version 1, with recs in the
	// same transaction. It returns ErrExists if the ID is taken.
	CreateSession(ctx context.Context, s *Session, recs ...trace.Record) error
	// UpdateSession stores s over the stored session if the stored
	// version is still s.Version, then sets s.Version to the new version.
	// recs are appended in the same transaction. It returns ErrNotFound if
	// there is no such session and ErrConflict if its version moved on.
	UpdateSession(ctx context.Context, s *Session, recs ...trace.Record) error
	// Session returns the stored session, or ErrNotFound.
	Session(ctx context.Context, id string) (*Session, error)
	// Sessions lists sessions, newest first.
	Sessions(ctx context.Context, q *SessionQuery) ([]Session, error)
	// AppendTraces stores records, in order, assigning increasing IDs.
	AppendTraces(ctx context.Context, recs ...trace.Record) error
	// Traces returns records in ID order, upgraded to the current version
	// whatever version they were stored in.
	Traces(ctx context.Context, q *TraceQuery) ([]trace.Record, error)
	// Close releases the store. It may be called more than once.
	Close() error
}

// Micro rounds t to the microsecond in UTC, the precision stores keep.
func Micro(t time.Time) time.Time { return t.Round(time.Microsecond).UTC() }

// Opener opens a store from a data source name.
type Opener func(ctx context.Context, dsn string) (Store, error)

var (
	openersMu sync.Mutex
	openers   = map[string]Opener{}
)

// Register makes a store implementation available to [Open] under name
// ("sqlite", "postgres"). It panics if name is empty, open is nil or the
// name is registered twice.
func Register(name string, open Opener) {
	openersMu.Lock()
	defer openersMu.Unlock()
	if name == "" || open == nil {
		panic("store: Register with an empty name or nil opener")
	}
	if _, dup := openers[name]; dup {
		panic("store: Register called twice for " + name)
	}
	openers[name] = open
}

// Drivers returns the registered names, sorted.
func Drivers() []string {
	openersMu.Lock()
	defer openersMu.Unlock()
	names := make([]string, 0, len(openers))
	for n := range openers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Driver returns the implementation name dsn selects: "postgres" for
// postgres:// and postgresql:// URLs, "sqlite" for everything else.
func Driver(dsn string) string {
	l := strings.ToLower(dsn)
	if strings.HasPrefix(l, "postgres://") || strings.HasPrefix(l, "postgresql://") {
		return "postgres"
	}
	return "sqlite"
}

// Open opens the store dsn names (see [Driver]). The implementation must
// be registered, by importing its package.
func Open(ctx context.Context, dsn string) (Store, error) {
	if strings.TrimSpace(dsn) == "" {
		return nil, fmt.Errorf("opening store: empty data source name")
	}
	name := Driver(dsn)
	openersMu.Lock()
	open := openers[name]
	openersMu.Unlock()
	if open == nil {
		return nil, fmt.Errorf("opening store %s: no %s store registered (import github.com/capbroker/capbroker/store/%s)", Redact(dsn), name, name)
	}
	return open(ctx, dsn)
}

// Redact hides the password of a URL-shaped dsn, for messages.
func Redact(dsn string) string {
	scheme, rest, ok := strings.Cut(dsn, "://")
	if !ok {
		return dsn
	}
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return dsn
	}
	user := rest[:at]
	if u, _, ok := strings.Cut(user, ":"); ok {
		return scheme + "://" + u + ":xxxxx@" + rest[at+1:]
	}
	return dsn
}
