package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/capbroker/capbroker/store"
	"github.com/capbroker/capbroker/trace"
)

func init() {
	store.Register("postgres", func(ctx context.Context, dsn string) (store.Store, error) {
		return Open(ctx, dsn, nil)
	})
}

// Options tunes a store. A nil *Options uses every default.
type Options struct {
	// Schema holds the tables; it is created if missing. If empty, the
	// connection's search_path decides (usually "public").
	Schema string
	// Now gives the time of writes that carry none. If nil, time.Now.
	Now func() time.Time
}

// Store is a PostgreSQL store. It is safe for concurrent use.
type Store struct {
	pool *pgxpool.Pool
	now  func() time.Time
}

var _ store.Store = (*Store)(nil)

// migrations are applied in order; migration i brings the schema to
// version i+1. Never edit one that has shipped: append a new one.
var migrations = []string{
	// 1: sessions.
	`CREATE TABLE sessions (
		id             TEXT PRIMARY KEY,
		task           TEXT NOT NULL,
		selected_tools TEXT NOT NULL,
		exposed_tools  TEXT NOT NULL,
		iterations     INTEGER NOT NULL,
		max_iterations INTEGER NOT NULL,
		find_calls     INTEGER NOT NULL,
		selection      TEXT,
		version        BIGINT NOT NULL,
		created_at     BIGINT NOT NULL,
		updated_at     BIGINT NOT NULL
	);
	CREATE INDEX sessions_created ON sessions (created_at, id);`,
	// 2: traces.
	`CREATE TABLE traces (
		id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
		session_id TEXT NOT NULL DEFAULT '',
		kind       TEXT NOT NULL,
		version    INTEGER NOT NULL,
		at         BIGINT NOT NULL,
		data       TEXT NOT NULL
	);
	CREATE INDEX traces_session ON traces (session_id, id);`,
}

// SchemaVersion is the schema version this code writes.
var SchemaVersion = len(migrations)

// migrationLock is the advisory lock key held while migrating.
const migrationLock = 0x63617062726f6b // "capbrok"

// Open connects to the database dsn names (a postgres:// URL or a
// key=value string) and migrates it.
func Open(ctx context.Context, dsn string, opts *Options) (_ *Store, err error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	defer func() {
		if err != nil {
			err = fmt.Errorf("opening postgres store %s: %w", store.Redact(dsn), err)
		}
	}()
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		// pgx's message may quote the dsn, password included.
		return nil, errors.New("cannot parse the connection string")
	}
	if o.Schema != "" {
		conn, err := pgx.ConnectConfig(ctx, cfg.ConnConfig.Copy())
		if err != nil {
			return nil, err
		}
		// CREATE SCHEMA IF NOT EXISTS races with itself across sessions
		// (a unique violation on pg_namespace), so instances starting
		// together take the migration lock first.
		err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(migrationLock)); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS `+pgx.Identifier{o.Schema}.Sanitize())
			return err
		})
		conn.Close(ctx)
		if err != nil {
			return nil, fmt.Errorf("creating schema %s: %w", o.Schema, err)
		}
		cfg.ConnConfig.RuntimeParams["search_path"] = o.Schema
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	s := &Store{pool: pool, now: o.Now}
	if err := s.migrate(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	return s, nil
}

func (s *Store) migrate(ctx context.Context) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(migrationLock)); err != nil {
			return fmt.Errorf("locking for migration: %w", err)
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)`); err != nil {
			return fmt.Errorf("creating schema_version: %w", err)
		}
		var have int
		err := tx.QueryRow(ctx, `SELECT version FROM schema_version`).Scan(&have)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			if _, err := tx.Exec(ctx, `INSERT INTO schema_version (version) VALUES (0)`); err != nil {
				return err
			}
		case err != nil:
			return fmt.Errorf("reading schema version: %w", err)
		}
		if have > len(migrations) {
			return fmt.Errorf("schema version %d, this capbroker knows up to %d: %w", have, len(migrations), store.ErrSchemaTooNew)
		}
		for v := have; v < len(migrations); v++ {
			if _, err := tx.Exec(ctx, migrations[v]); err != nil {
				return fmt.Errorf("migrating to schema version %d: %w", v+1, err)
			}
		}
		if have < len(migrations) {
			if _, err := tx.Exec(ctx, `UPDATE schema_version SET version = $1`, len(migrations)); err != nil {
				return err
			}
		}
		return nil
	})
}

// Close closes the pool. It may be called more than once.
func (s *Store) Close() error {
	s.pool.Close()
	return nil
}

// CreateSession implements store.Store.
func (s *Store) CreateSession(ctx context.Context, sess *store.Session, recs ...trace.Record) (err error) {
	defer store.Annotate(&err, "creating session %s", sess.ID)
	r, rows, err := store.PrepareRows(sess, true, s.now(), recs)
	if err != nil {
		return err
	}
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `INSERT INTO sessions (`+store.SessionCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 1, $9, $10) ON CONFLICT (id) DO NOTHING`,
			r.ID, r.Task, r.Selected, r.Exposed, r.Iterations, r.MaxIterations, r.FindCalls, r.Selection, r.CreatedMicro, r.UpdatedMicro)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return store.ErrExists
		}
		return insertTraces(ctx, tx, rows)
	})
	if err != nil {
		return err
	}
	sess.Version = 1
	return nil
}

// UpdateSession implements store.Store.
func (s *Store) UpdateSession(ctx context.Context, sess *store.Session, recs ...trace.Record) (err error) {
	defer store.Annotate(&err, "updating session %s", sess.ID)
	r, rows, err := store.PrepareRows(sess, false, s.now(), recs)
	if err != nil {
		return err
	}
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE sessions SET task = $1, selected_tools = $2, exposed_tools = $3, iterations = $4, max_iterations = $5,
			find_calls = $6, selection = $7, version = version + 1, created_at = $8, updated_at = $9 WHERE id = $10 AND version = $11`,
			r.Task, r.Selected, r.Exposed, r.Iterations, r.MaxIterations, r.FindCalls, r.Selection, r.CreatedMicro, r.UpdatedMicro, r.ID, r.Version)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			var v int64
			switch err := tx.QueryRow(ctx, `SELECT version FROM sessions WHERE id = $1`, r.ID).Scan(&v); {
			case errors.Is(err, pgx.ErrNoRows):
				return store.ErrNotFound
			case err != nil:
				return err
			}
			return fmt.Errorf("stored version %d, written from version %d: %w", v, r.Version, store.ErrConflict)
		}
		return insertTraces(ctx, tx, rows)
	})
	if err != nil {
		return err
	}
	sess.Version++
	return nil
}

// Session implements store.Store.
func (s *Store) Session(ctx context.Context, id string) (_ *store.Session, err error) {
	defer store.Annotate(&err, "reading session %s", id)
	sess, err := store.ScanSession(s.pool.QueryRow(ctx, `SELECT `+store.SessionCols+` FROM sessions WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, store.ErrNotFound
	}
	return sess, err
}

// Sessions implements store.Store.
func (s *Store) Sessions(ctx context.Context, q *store.SessionQuery) (_ []store.Session, err error) {
	defer store.Annotate(&err, "listing sessions")
	var limit *int64
	if q != nil && q.Limit > 0 {
		l := int64(q.Limit)
		limit = &l
	}
	rows, err := s.pool.Query(ctx, `SELECT `+store.SessionCols+` FROM sessions ORDER BY created_at DESC, id DESC LIMIT $1`, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return store.ScanSessions(rows)
}

// AppendTraces implements store.Store.
func (s *Store) AppendTraces(ctx context.Context, recs ...trace.Record) (err error) {
	defer store.Annotate(&err, "appending traces")
	if len(recs) == 0 {
		return nil
	}
	rows, err := store.ToTraceRows(recs)
	if err != nil {
		return err
	}
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error { return insertTraces(ctx, tx, rows) })
}

// Traces implements store.Store.
func (s *Store) Traces(ctx context.Context, q *store.TraceQuery) (_ []trace.Record, err error) {
	defer store.Annotate(&err, "reading traces")
	var f store.TraceQuery
	if q != nil {
		f = *q
	}
	query := `SELECT id, data FROM traces WHERE id > $1`
	args := []any{f.AfterID}
	if f.SessionID != "" {
		args = append(args, f.SessionID)
		query += fmt.Sprintf(` AND session_id = $%d`, len(args))
	}
	if f.Kind != "" {
		args = append(args, string(f.Kind))
		query += fmt.Sprintf(` AND kind = $%d`, len(args))
	}
	query += ` ORDER BY id`
	if f.Limit > 0 {
		args = append(args, int64(f.Limit))
		query += fmt.Sprintf(` LIMIT $%d`, len(args))
	}
	rows, err := s.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return store.ScanTraces(rows)
}

func insertTraces(ctx context.Context, tx pgx.Tx, rows []store.TraceRow) error {
	if len(rows) == 0 {
		return nil
	}
	var b pgx.Batch
	for _, r := range rows {
		b.Queue(`INSERT INTO traces (session_id, kind, version, at, data) VALUES ($1, $2, $3, $4, $5)`,
			r.SessionID, r.Kind, r.Version, r.AtMicro, r.Data)
	}
	if err := tx.SendBatch(ctx, &b).Close(); err != nil {
		return fmt.Errorf("inserting traces: %w", err)
	}
	return nil
}
