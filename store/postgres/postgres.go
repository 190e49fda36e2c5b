package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/capbroker/capbroker/store"
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
	store.SQL // sessions and traces
	pool      *pgxpool.Pool
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
	// 3: the plan task a session was started from.
	`ALTER TABLE sessions ADD COLUMN plan_goal TEXT NOT NULL DEFAULT '';
	ALTER TABLE sessions ADD COLUMN plan_task TEXT NOT NULL DEFAULT '';`,
	// 4: the MCP sessions a fleet of gateway replicas shares.
	store.MCPSessionsSchema,
	// 5: the state a fleet shares beyond sessions (pins, learning,
	// heartbeats), with its sequence.
	store.SharedSchema,
	// 6: the server-sent events of MCP sessions' streams, so a stream
	// resumes on another replica (PostgreSQL only).
	eventsSchema,
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
	s := &Store{SQL: store.NewSQL(db{pool}, o.Now), pool: pool}
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

// db adapts the pool to store.DB, numbering the placeholders of every
// statement (store.Rebind).
type db struct{ pool *pgxpool.Pool }

func (d db) InTx(ctx context.Context, fn func(store.Tx) error) error {
	return pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error { return fn(pgTx{tx}) })
}

func (d db) Query(ctx context.Context, scan func(store.Rows) error, query string, args ...any) error {
	rows, err := d.pool.Query(ctx, store.Rebind(query), args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	if err := scan(rows); err != nil {
		return err
	}
	rows.Close()
	return rows.Err()
}

func (d db) QueryRow(ctx context.Context, query string, args ...any) store.Scanner {
	return row{d.pool.QueryRow(ctx, store.Rebind(query), args...)}
}

// row reports pgx's "no rows" as database/sql's, as store.DB asks.
type row struct{ pgx.Row }

func (r row) Scan(dest ...any) error {
	err := r.Row.Scan(dest...)
	if errors.Is(err, pgx.ErrNoRows) {
		return sql.ErrNoRows
	}
	return err
}

// pgTx adapts a pgx transaction to store.Tx.
type pgTx struct{ tx pgx.Tx }

func (t pgTx) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	tag, err := t.tx.Exec(ctx, store.Rebind(query), args...)
	if err != nil {
		return 0, err
	}
	return tag.RowsAffected(), nil
}

func (t pgTx) QueryRow(ctx context.Context, query string, args ...any) store.Scanner {
	return row{t.tx.QueryRow(ctx, store.Rebind(query), args...)}
}

// insertTrace is store.InsertTraceSQL with numbered placeholders.
var insertTrace = store.Rebind(store.InsertTraceSQL)

// InsertTraces sends the rows in one batch: one round trip, not one each.
func (t pgTx) InsertTraces(ctx context.Context, rows []store.TraceRow) error {
	if len(rows) == 0 {
		return nil
	}
	var b pgx.Batch
	for _, r := range rows {
		b.Queue(insertTrace, r.SessionID, r.Kind, r.Version, r.AtMicro, r.Data)
	}
	if err := t.tx.SendBatch(ctx, &b).Close(); err != nil {
		return fmt.Errorf("inserting traces: %w", err)
	}
	return nil
}
