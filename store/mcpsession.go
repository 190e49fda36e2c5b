package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// MCPSession is one MCP session of a gateway as a fleet of gateway
// replicas shares it: any replica that shares the database serves any
// request of the session, rebuilding it from this record the first time
// it sees the session's ID (the Mcp-Session-Id header).
type MCPSession struct {
	// ID is the MCP session ID the client sends with every request.
	ID string `json:"id"`
	// Key is the session's name (the exposed set of a named session is
	// the [Session] of that ID); empty for an anonymous session.
	Key string `json:"key,omitempty"`
	// Identity is who opened the session (empty without identities).
	Identity string `json:"identity,omitempty"`
	// State is the gateway's own state of the session (mode, plan task,
	// the client's initialize parameters), as JSON the store keeps
	// verbatim.
	State json.RawMessage `json:"state"`
	// Exposed are an anonymous session's exposed tools, in order (a named
	// session keeps them in its [Session]). They only grow: see
	// [MCPSessions.AddMCPExposed].
	Exposed []string `json:"exposed,omitempty"`
	// Version is bumped by every write.
	Version int64 `json:"version"`
	// CreatedAt is when the session opened; TouchedAt when a replica last
	// said it was in use (see [MCPSessions.TouchMCPSession]).
	CreatedAt time.Time `json:"created_at"`
	TouchedAt time.Time `json:"touched_at"`
}

// MCPSessions keeps the MCP sessions of a fleet of gateways. Both stores
// of this module implement it.
type MCPSessions interface {
	// PutMCPSession stores a new MCP session; ErrExists if the ID is
	// taken. Zero times are set to now.
	PutMCPSession(ctx context.Context, s *MCPSession) error
	// MCPSession returns the stored session, or ErrNotFound.
	MCPSession(ctx context.Context, id string) (*MCPSession, error)
	// AddMCPExposed appends the names the session's Exposed lacks, in
	// order, and returns the stored list after the write (with names
	// other writers added). ErrNotFound if there is no such session.
	AddMCPExposed(ctx context.Context, id string, names []string) ([]string, error)
	// TouchMCPSession records that the session is in use at at; it never
	// moves TouchedAt back. Touching a session that is gone is no error.
	TouchMCPSession(ctx context.Context, id string, at time.Time) error
	// DeleteMCPSession removes the session (the client ended it);
	// whether it was there.
	DeleteMCPSession(ctx context.Context, id string) (bool, error)
	// ExpireMCPSessions removes the sessions not touched since before
	// and returns how many.
	ExpireMCPSessions(ctx context.Context, before time.Time) (int64, error)
	// CountMCPSessions counts the stored sessions of identity (every
	// session if identity is "*").
	CountMCPSessions(ctx context.Context, identity string) (int, error)
}

var _ MCPSessions = SQL{}

// MCPSessionsSchema is the migration that adds the mcp_sessions table,
// the same for both stores.
const MCPSessionsSchema = `CREATE TABLE mcp_sessions (
		id            TEXT PRIMARY KEY,
		session_key   TEXT NOT NULL,
		identity      TEXT NOT NULL,
		state         TEXT NOT NULL,
		exposed_tools TEXT NOT NULL,
		version       BIGINT NOT NULL,
		created_at    BIGINT NOT NULL,
		touched_at    BIGINT NOT NULL
	);
	CREATE INDEX mcp_sessions_touched ON mcp_sessions (touched_at);
	CREATE INDEX mcp_sessions_identity ON mcp_sessions (identity);`

func validMCPSession(s *MCPSession) error {
	switch {
	case strings.TrimSpace(s.ID) == "":
		return fmt.Errorf("MCP session has no id")
	case len(s.ID) > 200:
		return fmt.Errorf("MCP session id is longer than 200 bytes")
	case strings.ContainsRune(s.ID+s.Key+s.Identity, 0):
		return fmt.Errorf("MCP session %q: id, key or identity holds a NUL byte", s.ID)
	case len(s.State) > 0 && !json.Valid(s.State):
		return fmt.Errorf("MCP session %s: state is not valid JSON", s.ID)
	}
	return nil
}

// PutMCPSession implements [MCPSessions].
func (s SQL) PutMCPSession(ctx context.Context, m *MCPSession) (err error) {
	defer annotate(&err, "storing MCP session %s", m.ID)
	if err := validMCPSession(m); err != nil {
		return err
	}
	now := Micro(s.now())
	if m.CreatedAt.IsZero() {
		m.CreatedAt = now
	}
	if m.TouchedAt.IsZero() {
		m.TouchedAt = m.CreatedAt
	}
	m.CreatedAt, m.TouchedAt = Micro(m.CreatedAt), Micro(m.TouchedAt)
	state := string(m.State)
	if state == "" {
		state = "null"
	}
	return s.db.InTx(ctx, func(tx Tx) error {
		n, err := tx.Exec(ctx, `INSERT INTO mcp_sessions (id, session_key, identity, state, exposed_tools, version, created_at, touched_at)
			VALUES (?, ?, ?, ?, ?, 1, ?, ?) ON CONFLICT (id) DO NOTHING`,
			m.ID, m.Key, m.Identity, state, encodeNames(m.Exposed), m.CreatedAt.UnixMicro(), m.TouchedAt.UnixMicro())
		if err != nil {
			return err
		}
		if n == 0 {
			return ErrExists
		}
		m.Version = 1
		return nil
	})
}

const mcpCols = `id, session_key, identity, state, exposed_tools, version, created_at, touched_at`

// MCPSession implements [MCPSessions].
func (s SQL) MCPSession(ctx context.Context, id string) (_ *MCPSession, err error) {
	defer annotate(&err, "reading MCP session %s", id)
	var (
		m                MCPSession
		state, exposed   string
		created, touched int64
	)
	err = s.db.QueryRow(ctx, `SELECT `+mcpCols+` FROM mcp_sessions WHERE id = ?`, id).
		Scan(&m.ID, &m.Key, &m.Identity, &state, &exposed, &m.Version, &created, &touched)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	if state != "null" {
		m.State = json.RawMessage(state)
	}
	if m.Exposed, err = decodeNames(exposed); err != nil {
		return nil, err
	}
	m.CreatedAt, m.TouchedAt = time.UnixMicro(created).UTC(), time.UnixMicro(touched).UTC()
	return &m, nil
}

// AddMCPExposed implements [MCPSessions]: it re-reads and retries when
// another writer got there first, so no name is lost.
func (s SQL) AddMCPExposed(ctx context.Context, id string, names []string) (_ []string, err error) {
	defer annotate(&err, "adding to the exposed tools of MCP session %s", id)
	for range 64 {
		var have string
		var v int64
		switch err := s.db.QueryRow(ctx, `SELECT exposed_tools, version FROM mcp_sessions WHERE id = ?`, id).Scan(&have, &v); {
		case errors.Is(err, sql.ErrNoRows):
			return nil, ErrNotFound
		case err != nil:
			return nil, err
		}
		old, err := decodeNames(have)
		if err != nil {
			return nil, err
		}
		all := old
		for _, n := range names {
			if !slices.Contains(all, n) {
				all = append(all, n)
			}
		}
		if len(all) == len(old) {
			return all, nil
		}
		var n int64
		err = s.db.InTx(ctx, func(tx Tx) error {
			var err error
			n, err = tx.Exec(ctx, `UPDATE mcp_sessions SET exposed_tools = ?, version = version + 1 WHERE id = ? AND version = ?`, encodeNames(all), id, v)
			return err
		})
		if err != nil {
			return nil, err
		}
		if n == 1 {
			return all, nil
		}
	}
	return nil, fmt.Errorf("64 conflicting writes in a row: %w", ErrConflict)
}

// TouchMCPSession implements [MCPSessions].
func (s SQL) TouchMCPSession(ctx context.Context, id string, at time.Time) (err error) {
	defer annotate(&err, "touching MCP session %s", id)
	return s.db.InTx(ctx, func(tx Tx) error {
		_, err := tx.Exec(ctx, `UPDATE mcp_sessions SET touched_at = ? WHERE id = ? AND touched_at < ?`, at.UnixMicro(), id, at.UnixMicro())
		return err
	})
}

// DeleteMCPSession implements [MCPSessions].
func (s SQL) DeleteMCPSession(ctx context.Context, id string) (ok bool, err error) {
	defer annotate(&err, "deleting MCP session %s", id)
	err = s.db.InTx(ctx, func(tx Tx) error {
		n, err := tx.Exec(ctx, `DELETE FROM mcp_sessions WHERE id = ?`, id)
		ok = n > 0
		return err
	})
	return ok, err
}

// ExpireMCPSessions implements [MCPSessions].
func (s SQL) ExpireMCPSessions(ctx context.Context, before time.Time) (n int64, err error) {
	defer annotate(&err, "expiring MCP sessions")
	err = s.db.InTx(ctx, func(tx Tx) error {
		var err error
		n, err = tx.Exec(ctx, `DELETE FROM mcp_sessions WHERE touched_at < ?`, before.UnixMicro())
		return err
	})
	return n, err
}

// CountMCPSessions implements [MCPSessions].
func (s SQL) CountMCPSessions(ctx context.Context, identity string) (n int, err error) {
	defer annotate(&err, "counting MCP sessions")
	if identity == "*" {
		err = s.db.QueryRow(ctx, `SELECT COUNT(*) FROM mcp_sessions`).Scan(&n)
	} else {
		err = s.db.QueryRow(ctx, `SELECT COUNT(*) FROM mcp_sessions WHERE identity = ?`, identity).Scan(&n)
	}
	return n, err
}

// Notifier is a store that carries messages between the processes
// sharing it, within about a second (PostgreSQL's LISTEN/NOTIFY): how
// gateway replicas tell each other that a session's tools grew or that
// it ended.
type Notifier interface {
	// Notify sends payload on channel to every listener, this process's
	// included.
	Notify(ctx context.Context, channel, payload string) error
	// Listen calls fn with each payload sent on channel until ctx ends,
	// reconnecting after a lost connection (messages sent meanwhile are
	// lost: listeners catch up from the tables, which is why it calls
	// listening, if not nil, each time it starts listening: at first and
	// after each reconnection). It returns ctx's error.
	Listen(ctx context.Context, channel string, fn func(payload string), listening func()) error
}
