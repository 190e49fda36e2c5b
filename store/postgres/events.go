package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/capbroker/capbroker/store"
)

var _ store.MCPEvents = (*Store)(nil)

// eventsSchema is the migration that adds the server-sent events of MCP
// sessions' streams (store.MCPEvents): a row per event, and per stream
// the number the next event takes.
const eventsSchema = `CREATE TABLE mcp_events (
		seq        BIGSERIAL PRIMARY KEY,
		session_id TEXT NOT NULL,
		stream_id  TEXT NOT NULL,
		idx        BIGINT NOT NULL,
		data       BYTEA NOT NULL,
		at         BIGINT NOT NULL
	);
	CREATE UNIQUE INDEX mcp_events_stream ON mcp_events (session_id, stream_id, idx);
	CREATE INDEX mcp_events_session ON mcp_events (session_id, seq);
	CREATE INDEX mcp_events_at ON mcp_events (at);
	CREATE TABLE mcp_event_streams (
		session_id TEXT NOT NULL,
		stream_id  TEXT NOT NULL,
		next_idx   BIGINT NOT NULL,
		PRIMARY KEY (session_id, stream_id)
	);`

// AppendMCPEvents implements store.MCPEvents in one statement: the
// stream's row is locked while its counter moves, so concurrent appends
// to one stream are numbered in turn.
func (s *Store) AppendMCPEvents(ctx context.Context, session, stream string, events ...[]byte) (int64, error) {
	if len(events) == 0 {
		return 0, nil
	}
	datas := make([][]byte, len(events))
	for i, e := range events {
		if e == nil {
			e = []byte{}
		}
		datas[i] = e
	}
	// One round trip, committed without waiting for the disk: a stream's
	// events serve a resumption within minutes, and a database that
	// crashes loses at most its last fraction of a second of them (not of
	// sessions or traces, which wait).
	var b pgx.Batch
	b.Queue(`SET LOCAL synchronous_commit TO OFF`)
	var first int64
	b.Queue(`WITH n AS (
			INSERT INTO mcp_event_streams (session_id, stream_id, next_idx) VALUES ($1, $2, $3)
			ON CONFLICT (session_id, stream_id) DO UPDATE SET next_idx = mcp_event_streams.next_idx + $3
			RETURNING next_idx - $3 AS first
		), ins AS (
			INSERT INTO mcp_events (session_id, stream_id, idx, data, at)
			SELECT $1, $2, n.first + d.ord - 1, d.data, $4 FROM n, unnest($5::bytea[]) WITH ORDINALITY AS d(data, ord)
		)
		SELECT first FROM n`, session, stream, int64(len(datas)), time.Now().UnixMicro(), datas).QueryRow(func(r pgx.Row) error {
		return r.Scan(&first)
	})
	err := s.pool.SendBatch(ctx, &b).Close()
	if err != nil {
		return 0, fmt.Errorf("storing %d events of stream %q of MCP session %s: %w", len(datas), stream, session, err)
	}
	return first, nil
}

// MCPEventsAfter implements store.MCPEvents, reading the stream's counter
// and its events in one statement (one snapshot).
func (s *Store) MCPEventsAfter(ctx context.Context, session, stream string, after int64) ([][]byte, error) {
	rows, err := s.pool.Query(ctx, `SELECT s.next_idx, e.idx, e.data FROM mcp_event_streams s
		LEFT JOIN mcp_events e ON e.session_id = s.session_id AND e.stream_id = s.stream_id AND e.idx > $3
		WHERE s.session_id = $1 AND s.stream_id = $2 ORDER BY e.idx`, session, stream, after)
	if err != nil {
		return nil, fmt.Errorf("reading the events of stream %q of MCP session %s: %w", stream, session, err)
	}
	defer rows.Close()
	var (
		next int64 = -1
		out  [][]byte
		want = after + 1
	)
	for rows.Next() {
		var idx *int64
		var data []byte
		if err := rows.Scan(&next, &idx, &data); err != nil {
			return nil, err
		}
		if idx == nil {
			continue
		}
		if *idx != want {
			return nil, fmt.Errorf("stream %q of MCP session %s: event %d was dropped (retention; kept from %d): %w", stream, session, want, *idx, store.ErrEventsGone)
		}
		out = append(out, data)
		want++
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading the events of stream %q of MCP session %s: %w", stream, session, err)
	}
	switch {
	case next < 0 && after == 0:
		// Only its priming event was sent: it is stored with the
		// stream's first message, which may be on its way.
		return nil, nil
	case next < 0 && after > 0:
		return nil, fmt.Errorf("stream %q of MCP session %s: no event of it is kept (it ended, expired or was never stored): %w", stream, session, store.ErrEventsGone)
	case next >= 0 && after >= next:
		return nil, fmt.Errorf("stream %q of MCP session %s: event %d was never sent (the stream has %d): %w", stream, session, after, next, store.ErrEventsGone)
	case next >= 0 && want < next:
		return nil, fmt.Errorf("stream %q of MCP session %s: its events from %d on were dropped (retention): %w", stream, session, want, store.ErrEventsGone)
	}
	return out, nil
}

// DropMCPEvents implements store.MCPEvents.
func (s *Store) DropMCPEvents(ctx context.Context, session string) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM mcp_events WHERE session_id = $1`, session); err != nil {
			return fmt.Errorf("dropping the events of MCP session %s: %w", session, err)
		}
		if _, err := tx.Exec(ctx, `DELETE FROM mcp_event_streams WHERE session_id = $1`, session); err != nil {
			return fmt.Errorf("dropping the streams of MCP session %s: %w", session, err)
		}
		return nil
	})
}

// TrimMCPEvents implements store.MCPEvents.
func (s *Store) TrimMCPEvents(ctx context.Context, perSession int, before time.Time) (int64, error) {
	var n int64
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		for _, q := range []struct {
			what string
			sql  string
			args []any
		}{
			{"old events", `DELETE FROM mcp_events WHERE at < $1`, []any{before.UnixMicro()}},
			{"events beyond the bound", `DELETE FROM mcp_events e USING (
					SELECT seq FROM (SELECT seq, row_number() OVER (PARTITION BY session_id ORDER BY seq DESC) AS r FROM mcp_events) k WHERE k.r > $1
				) d WHERE e.seq = d.seq`, []any{perSession}},
			{"events of ended sessions", `DELETE FROM mcp_events e WHERE NOT EXISTS (SELECT 1 FROM mcp_sessions m WHERE m.id = e.session_id)`, nil},
			{"streams of ended sessions", `DELETE FROM mcp_event_streams e WHERE NOT EXISTS (SELECT 1 FROM mcp_sessions m WHERE m.id = e.session_id)`, nil},
		} {
			tag, err := tx.Exec(ctx, q.sql, q.args...)
			if err != nil {
				return fmt.Errorf("trimming the MCP events: %s: %w", q.what, err)
			}
			if q.what != "streams of ended sessions" {
				n += tag.RowsAffected()
			}
		}
		return nil
	})
	return n, err
}
