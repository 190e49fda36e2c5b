package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/capbroker/capbroker/trace"
)

// The session and trace methods of a SQL store, written once.
//
// The SQLite and PostgreSQL stores differ in how they open, migrate and
// reach their database, not in what they store or how: both keep the
// same two tables with the same columns and encodings (name lists as JSON
// arrays, times as Unix microseconds, traces as current-version JSON).
// [SQL] implements [Store]'s reads and writes over a [DB], the little
// each store adapts from its driver. Statements use "?" placeholders;
// the PostgreSQL adapter numbers them with [Rebind].

// DB is what [SQL] needs of a database.
type DB interface {
	// InTx runs fn in a write transaction, committed if fn returns nil
	// and rolled back otherwise.
	InTx(ctx context.Context, fn func(Tx) error) error
	// Query runs a read query and hands its rows to scan; DB closes them.
	Query(ctx context.Context, scan func(Rows) error, query string, args ...any) error
	// QueryRow runs a read query for one row; the row's Scan returns
	// sql.ErrNoRows when there is none.
	QueryRow(ctx context.Context, query string, args ...any) Scanner
}

// Tx is a write transaction of a [DB].
type Tx interface {
	// Exec runs a statement and returns how many rows it changed.
	Exec(ctx context.Context, query string, args ...any) (int64, error)
	// QueryRow is DB.QueryRow inside the transaction.
	QueryRow(ctx context.Context, query string, args ...any) Scanner
	// InsertTraces inserts trace rows, in order, the driver's fastest way.
	InsertTraces(ctx context.Context, rows []TraceRow) error
}

// Scanner is a row a driver can scan: *sql.Row, *sql.Rows and pgx's rows.
type Scanner interface{ Scan(dest ...any) error }

// Rows is a result set a driver can step through: *sql.Rows and pgx's
// rows.
type Rows interface {
	Scanner
	Next() bool
	Err() error
}

// SQL implements [Store]'s session and trace methods over a [DB]; a SQL
// store embeds one and adds Close. Make one with [NewSQL].
type SQL struct {
	db  DB
	now func() time.Time
}

// NewSQL returns the session and trace methods over db; now gives the
// time of writes that carry none.
func NewSQL(db DB, now func() time.Time) SQL {
	return SQL{db: db, now: now}
}

// InsertTraceSQL is the statement that inserts one [TraceRow], with its
// fields in order as arguments.
const InsertTraceSQL = `INSERT INTO traces (session_id, kind, version, at, data) VALUES (?, ?, ?, ?, ?)`

// sessionCols are the columns of the sessions table in the order
// scanSession reads them.
const sessionCols = `id, task, selected_tools, exposed_tools, iterations, max_iterations, find_calls, selection, version, created_at, updated_at, plan_goal, plan_task`

// CreateSession implements [Store].
func (s SQL) CreateSession(ctx context.Context, sess *Session, recs ...trace.Record) (err error) {
	defer annotate(&err, "creating session %s", sess.ID)
	r, rows, err := prepareRows(sess, true, s.now(), recs)
	if err != nil {
		return err
	}
	err = s.db.InTx(ctx, func(tx Tx) error {
		n, err := tx.Exec(ctx, `INSERT INTO sessions (`+sessionCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
			r.ID, r.Task, r.Selected, r.Exposed, r.Iterations, r.MaxIterations, r.FindCalls, r.Selection, r.CreatedMicro, r.UpdatedMicro, r.PlanGoal, r.PlanTask)
		if err != nil {
			return err
		}
		if n == 0 {
			return ErrExists
		}
		return tx.InsertTraces(ctx, rows)
	})
	if err != nil {
		return err
	}
	sess.Version = 1
	return nil
}

// UpdateSession implements [Store].
func (s SQL) UpdateSession(ctx context.Context, sess *Session, recs ...trace.Record) (err error) {
	defer annotate(&err, "updating session %s", sess.ID)
	r, rows, err := prepareRows(sess, false, s.now(), recs)
	if err != nil {
		return err
	}
	err = s.db.InTx(ctx, func(tx Tx) error {
		n, err := tx.Exec(ctx, `UPDATE sessions SET task = ?, selected_tools = ?, exposed_tools = ?, iterations = ?, max_iterations = ?,
			find_calls = ?, selection = ?, version = version + 1, created_at = ?, updated_at = ?, plan_goal = ?, plan_task = ? WHERE id = ? AND version = ?`,
			r.Task, r.Selected, r.Exposed, r.Iterations, r.MaxIterations, r.FindCalls, r.Selection, r.CreatedMicro, r.UpdatedMicro, r.PlanGoal, r.PlanTask, r.ID, r.Version)
		if err != nil {
			return err
		}
		if n == 0 {
			var v int64
			switch err := tx.QueryRow(ctx, `SELECT version FROM sessions WHERE id = ?`, r.ID).Scan(&v); {
			case errors.Is(err, sql.ErrNoRows):
				return ErrNotFound
			case err != nil:
				return err
			}
			return fmt.Errorf("stored version %d, written from version %d: %w", v, r.Version, ErrConflict)
		}
		return tx.InsertTraces(ctx, rows)
	})
	if err != nil {
		return err
	}
	sess.Version++
	return nil
}

// Session implements [Store].
func (s SQL) Session(ctx context.Context, id string) (_ *Session, err error) {
	defer annotate(&err, "reading session %s", id)
	sess, err := scanSession(s.db.QueryRow(ctx, `SELECT `+sessionCols+` FROM sessions WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	return sess, err
}

// Sessions implements [Store].
func (s SQL) Sessions(ctx context.Context, q *SessionQuery) (_ []Session, err error) {
	defer annotate(&err, "listing sessions")
	query := `SELECT ` + sessionCols + ` FROM sessions ORDER BY created_at DESC, id DESC`
	var args []any
	if q != nil && q.Limit > 0 {
		query += ` LIMIT ?`
		args = append(args, int64(q.Limit))
	}
	out := []Session{}
	err = s.db.Query(ctx, func(rows Rows) error {
		for rows.Next() {
			sess, err := scanSession(rows)
			if err != nil {
				return err
			}
			out = append(out, *sess)
		}
		return rows.Err()
	}, query, args...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// AppendTraces implements [Store].
func (s SQL) AppendTraces(ctx context.Context, recs ...trace.Record) (err error) {
	defer annotate(&err, "appending traces")
	if len(recs) == 0 {
		return nil
	}
	rows, err := toTraceRows(recs)
	if err != nil {
		return err
	}
	return s.db.InTx(ctx, func(tx Tx) error { return tx.InsertTraces(ctx, rows) })
}

// Traces implements [Store].
func (s SQL) Traces(ctx context.Context, q *TraceQuery) (_ []trace.Record, err error) {
	defer annotate(&err, "reading traces")
	var f TraceQuery
	if q != nil {
		f = *q
	}
	query := `SELECT id, data FROM traces WHERE id > ?`
	args := []any{f.AfterID}
	if f.SessionID != "" {
		query += ` AND session_id = ?`
		args = append(args, f.SessionID)
	}
	if f.Kind != "" {
		query += ` AND kind = ?`
		args = append(args, string(f.Kind))
	}
	switch {
	case f.Limit > 0 && f.Newest:
		query = `SELECT id, data FROM (` + query + ` ORDER BY id DESC LIMIT ?) AS newest ORDER BY id`
		args = append(args, int64(f.Limit))
	case f.Limit > 0:
		query += ` ORDER BY id LIMIT ?`
		args = append(args, int64(f.Limit))
	default:
		query += ` ORDER BY id`
	}
	out := []trace.Record{}
	var newer []int64
	err = s.db.Query(ctx, func(rows Rows) error {
		for rows.Next() {
			var id int64
			var data string
			if err := rows.Scan(&id, &data); err != nil {
				return err
			}
			rec, err := fromTraceRow(id, data)
			if errors.Is(err, trace.ErrNewerVersion) {
				newer = append(newer, id) // skipped, with one warning below
				continue
			}
			if err != nil {
				return err
			}
			out = append(out, rec)
		}
		return rows.Err()
	}, query, args...)
	if err != nil {
		return nil, err
	}
	if len(newer) > 0 {
		slog.Default().WarnContext(ctx, "skipped trace records written by a newer capbroker; upgrade capbroker to read them",
			"records", len(newer), "first_id", newer[0], "reads_up_to_version", trace.Version)
	}
	return out, nil
}

// Rebind numbers the "?" placeholders of query as PostgreSQL's $1, $2, …
// The statements of this package hold no "?" inside a string literal.
func Rebind(query string) string {
	n := strings.Count(query, "?")
	if n == 0 {
		return query
	}
	var b strings.Builder
	b.Grow(len(query) + 2*n)
	i := 0
	for {
		j := strings.IndexByte(query, '?')
		if j < 0 {
			b.WriteString(query)
			return b.String()
		}
		i++
		b.WriteString(query[:j])
		b.WriteByte('$')
		b.WriteString(strconv.Itoa(i))
		query = query[j+1:]
	}
}

// sessionRow is a session as SQL columns.
type sessionRow struct {
	ID, Task                   string
	Selected, Exposed          string
	Iterations, MaxIterations  int64
	FindCalls                  int64
	Selection                  *string
	Version                    int64
	CreatedMicro, UpdatedMicro int64
	PlanGoal, PlanTask         string
}

// TraceRow is a trace record as SQL columns.
type TraceRow struct {
	SessionID string
	Kind      string
	Version   int64
	AtMicro   int64
	Data      string
}

// prepareWrite validates s and fills its zero times (CreatedAt: now;
// UpdatedAt: CreatedAt on create, now on update), rounding both to the
// microsecond.
func prepareWrite(s *Session, create bool, now time.Time) error {
	if err := s.Validate(); err != nil {
		return err
	}
	if s.CreatedAt.IsZero() {
		s.CreatedAt = now
	}
	if s.UpdatedAt.IsZero() {
		s.UpdatedAt = now
		if create {
			s.UpdatedAt = s.CreatedAt
		}
	}
	s.CreatedAt, s.UpdatedAt = Micro(s.CreatedAt), Micro(s.UpdatedAt)
	return nil
}

// prepareRows is what a session write does first: [prepareWrite], then
// the session as columns and the records as rows.
func prepareRows(s *Session, create bool, now time.Time, recs []trace.Record) (sessionRow, []TraceRow, error) {
	if err := prepareWrite(s, create, now); err != nil {
		return sessionRow{}, nil, err
	}
	rows, err := toTraceRows(recs)
	if err != nil {
		return sessionRow{}, nil, err
	}
	return toRow(s), rows, nil
}

// toRow encodes s as columns.
func toRow(s *Session) sessionRow {
	r := sessionRow{
		ID: s.ID, Task: s.Task,
		Selected: encodeNames(s.Selected), Exposed: encodeNames(s.Exposed),
		Iterations: int64(s.Iterations), MaxIterations: int64(s.MaxIterations), FindCalls: int64(s.FindCalls),
		Version:      s.Version,
		CreatedMicro: s.CreatedAt.UnixMicro(), UpdatedMicro: s.UpdatedAt.UnixMicro(),
		PlanGoal: s.PlanGoal, PlanTask: s.PlanTask,
	}
	if len(s.Selection) > 0 {
		sel := string(s.Selection)
		r.Selection = &sel
	}
	return r
}

// fromRow decodes columns into a session.
func fromRow(r sessionRow) (*Session, error) {
	s := &Session{
		ID: r.ID, Task: r.Task,
		Iterations: int(r.Iterations), MaxIterations: int(r.MaxIterations), FindCalls: int(r.FindCalls),
		Version:   r.Version,
		CreatedAt: time.UnixMicro(r.CreatedMicro).UTC(), UpdatedAt: time.UnixMicro(r.UpdatedMicro).UTC(),
		PlanGoal: r.PlanGoal, PlanTask: r.PlanTask,
	}
	var err error
	if s.Selected, err = decodeNames(r.Selected); err != nil {
		return nil, fmt.Errorf("session %s: selected tools: %w", r.ID, err)
	}
	if s.Exposed, err = decodeNames(r.Exposed); err != nil {
		return nil, fmt.Errorf("session %s: exposed tools: %w", r.ID, err)
	}
	if r.Selection != nil && *r.Selection != "" {
		s.Selection = []byte(*r.Selection)
	}
	return s, nil
}

// scanSession reads a session selected with sessionCols.
func scanSession(sc Scanner) (*Session, error) {
	var r sessionRow
	if err := sc.Scan(&r.ID, &r.Task, &r.Selected, &r.Exposed, &r.Iterations, &r.MaxIterations, &r.FindCalls,
		&r.Selection, &r.Version, &r.CreatedMicro, &r.UpdatedMicro, &r.PlanGoal, &r.PlanTask); err != nil {
		return nil, err
	}
	return fromRow(r)
}

// toTraceRow encodes rec in the current version. The ID is left to the
// database.
func toTraceRow(rec trace.Record) (TraceRow, error) {
	rec.ID = 0
	rec.At = Micro(rec.At)
	b, err := rec.Encode()
	if err != nil {
		return TraceRow{}, err
	}
	return TraceRow{SessionID: rec.SessionID, Kind: string(rec.Kind), Version: trace.Version, AtMicro: rec.At.UnixMicro(), Data: string(b)}, nil
}

// toTraceRows encodes records with toTraceRow, stopping at the first that
// cannot be encoded.
func toTraceRows(recs []trace.Record) ([]TraceRow, error) {
	rows := make([]TraceRow, len(recs))
	for i, rec := range recs {
		r, err := toTraceRow(rec)
		if err != nil {
			return nil, err
		}
		rows[i] = r
	}
	return rows, nil
}

// fromTraceRow decodes a stored record of any version, giving it its
// database ID.
func fromTraceRow(id int64, data string) (trace.Record, error) {
	rec, err := trace.Decode([]byte(data))
	if err != nil {
		return trace.Record{}, fmt.Errorf("trace %d: %w", id, err)
	}
	rec.ID = id
	return rec, nil
}

// annotate prefixes *errp, if not nil, with what was being done:
// defer annotate(&err, "reading session %s", id).
func annotate(errp *error, format string, args ...any) {
	if *errp != nil {
		*errp = fmt.Errorf(format+": %w", append(args, *errp)...)
	}
}

// encodeNames and decodeNames store a name list as a JSON array.
func encodeNames(names []string) string {
	if names == nil {
		names = []string{}
	}
	b, _ := json.Marshal(names)
	return string(b)
}

// decodeNames reads a name list stored by encodeNames.
func decodeNames(s string) ([]string, error) {
	names := []string{}
	if s == "" {
		return names, nil
	}
	if err := json.Unmarshal([]byte(s), &names); err != nil {
		return nil, fmt.Errorf("decoding tool names: %w", err)
	}
	return names, nil
}

// Pruned counts what [SQL.Prune] deleted.
type Pruned struct {
	Sessions int64 `json:"sessions"`
	Traces   int64 `json:"traces"`
}

// Pruner is a store that can delete old sessions and traces; both stores
// of this module are.
type Pruner interface {
	Prune(ctx context.Context, before time.Time) (Pruned, error)
}

// Prune deletes, in one transaction, the sessions not updated since
// before with all their trace records, and the records of no session
// (route decisions) older than before.
func (s SQL) Prune(ctx context.Context, before time.Time) (p Pruned, err error) {
	defer annotate(&err, "pruning sessions and traces")
	cut := before.UnixMicro()
	err = s.db.InTx(ctx, func(tx Tx) error {
		n, err := tx.Exec(ctx, `DELETE FROM traces WHERE session_id IN (SELECT id FROM sessions WHERE updated_at < ?)`, cut)
		if err != nil {
			return err
		}
		p.Traces += n
		if p.Sessions, err = tx.Exec(ctx, `DELETE FROM sessions WHERE updated_at < ?`, cut); err != nil {
			return err
		}
		n, err = tx.Exec(ctx, `DELETE FROM traces WHERE session_id = '' AND at < ?`, cut)
		p.Traces += n
		return err
	})
	if err != nil {
		return Pruned{}, err
	}
	return p, nil
}
