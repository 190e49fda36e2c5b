package sqlite

import (
	"github.com/capbroker/capbroker/internal/safefile"

	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"github.com/capbroker/capbroker/store"
)

func init() {
	store.Register("sqlite", func(ctx context.Context, dsn string) (store.Store, error) {
		return Open(ctx, dsn, nil)
	})
}

// Options tunes a store. A nil *Options uses every default.
type Options struct {
	// BusyTimeout is how long a write waits for another process holding
	// the database. If zero, 10s.
	BusyTimeout time.Duration
	// Synchronous is SQLite's synchronous setting: "NORMAL" or "FULL".
	// If empty, NORMAL (see the package doc).
	Synchronous string
	// Now gives the time of writes that carry none. If nil, time.Now.
	Now func() time.Time
}

// Store is a SQLite store. It is safe for concurrent use.
type Store struct {
	store.SQL // sessions and traces
	path      string
	w         *sql.DB // one connection: this process's writes
	r         *sql.DB // a pool: reads
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
		version        INTEGER NOT NULL,
		created_at     INTEGER NOT NULL,
		updated_at     INTEGER NOT NULL
	);
	CREATE INDEX sessions_created ON sessions (created_at, id);`,
	// 2: traces.
	`CREATE TABLE traces (
		id         INTEGER PRIMARY KEY AUTOINCREMENT,
		session_id TEXT NOT NULL DEFAULT '',
		kind       TEXT NOT NULL,
		version    INTEGER NOT NULL,
		at         INTEGER NOT NULL,
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
}

// SchemaVersion is the schema version this code writes.
var SchemaVersion = len(migrations)

// Open opens (creating if needed) the database at path and migrates it.
// path may be a file path, "file:PATH", "sqlite:PATH" or "sqlite://PATH";
// its folder is created.
func Open(ctx context.Context, path string, opts *Options) (_ *Store, err error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.BusyTimeout <= 0 {
		o.BusyTimeout = 10 * time.Second
	}
	switch strings.ToUpper(o.Synchronous) {
	case "":
		o.Synchronous = "NORMAL"
	case "NORMAL", "FULL":
		o.Synchronous = strings.ToUpper(o.Synchronous)
	default:
		return nil, fmt.Errorf("opening sqlite store: synchronous %q (want NORMAL or FULL)", o.Synchronous)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	for _, p := range []string{"sqlite://", "sqlite:", "file:"} {
		if strings.HasPrefix(path, p) {
			path = path[len(p):]
			break
		}
	}
	if path == "" || strings.ContainsAny(path, "?#") {
		return nil, fmt.Errorf("opening sqlite store: bad path %q", path)
	}
	if path != ":memory:" {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, fmt.Errorf("opening sqlite store: %w", err)
		}
		if err := safefile.PrivateDatabase(path); err != nil {
			return nil, fmt.Errorf("opening sqlite store %s: %w", path, err)
		}
	}
	defer func() {
		if err != nil && corrupt(err) {
			err = fmt.Errorf("opening sqlite store %s: %w (%v); select, find and the gateway work without it; to start a new one, run: capbroker prune --reset --db %s (it moves the file aside)", path, store.ErrCorrupt, err, path)
		} else if err != nil {
			err = fmt.Errorf("opening sqlite store %s: %w", path, err)
		}
	}()
	dsn := fmt.Sprintf("%s?_pragma=busy_timeout(%d)&_pragma=journal_mode(WAL)&_pragma=synchronous(%s)&_pragma=foreign_keys(1)&_txlock=immediate",
		path, o.BusyTimeout.Milliseconds(), o.Synchronous)
	s := &Store{path: path}
	if s.w, err = sql.Open("sqlite", dsn); err != nil {
		return nil, err
	}
	s.w.SetMaxOpenConns(1)
	s.w.SetConnMaxIdleTime(0)
	if path == ":memory:" {
		s.r = s.w // one in-memory database, one connection
	} else if s.r, err = sql.Open("sqlite", dsn); err != nil {
		s.w.Close()
		return nil, err
	}
	if err := s.migrate(ctx); err != nil {
		s.Close()
		return nil, err
	}
	s.SQL = store.NewSQL(db{w: s.w, r: s.r}, o.Now)
	return s, nil
}

// corrupt reports whether err is SQLite's "not a database" (26) or
// "malformed" (11).
func corrupt(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "file is not a database") || strings.Contains(msg, "database disk image is malformed")
}

// Path returns the database file's path.
func (s *Store) Path() string { return s.path }

// migrate applies the missing migrations in one immediate transaction.
func (s *Store) migrate(ctx context.Context) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)`); err != nil {
		return fmt.Errorf("creating schema_version: %w", err)
	}
	var have int
	err = tx.QueryRowContext(ctx, `SELECT version FROM schema_version`).Scan(&have)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_version (version) VALUES (0)`); err != nil {
			return err
		}
	case err != nil:
		return fmt.Errorf("reading schema version: %w", err)
	}
	if have > len(migrations) {
		return fmt.Errorf("schema version %d, this capbroker knows up to %d: %w", have, len(migrations), store.ErrSchemaTooNew)
	}
	for v := have; v < len(migrations); v++ {
		if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
			return fmt.Errorf("migrating to schema version %d: %w", v+1, err)
		}
	}
	if have < len(migrations) {
		if _, err := tx.ExecContext(ctx, `UPDATE schema_version SET version = ?`, len(migrations)); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// Close closes the database. It may be called more than once.
func (s *Store) Close() error {
	var err error
	if s.r != nil && s.r != s.w {
		err = s.r.Close()
	}
	if s.w != nil {
		err = errors.Join(err, s.w.Close())
	}
	return err
}

// db adapts the store's two handles to store.DB: writes go through the
// one connection w, reads through the pool r.
type db struct{ w, r *sql.DB }

func (d db) InTx(ctx context.Context, fn func(store.Tx) error) error {
	tx, err := d.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := fn(sqlTx{tx}); err != nil {
		return err
	}
	return tx.Commit()
}

func (d db) Query(ctx context.Context, scan func(store.Rows) error, query string, args ...any) error {
	rows, err := d.r.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	if err := scan(rows); err != nil {
		return err
	}
	return rows.Close()
}

func (d db) QueryRow(ctx context.Context, query string, args ...any) store.Scanner {
	return d.r.QueryRowContext(ctx, query, args...)
}

// sqlTx adapts a database/sql transaction to store.Tx.
type sqlTx struct{ tx *sql.Tx }

func (t sqlTx) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := t.tx.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (t sqlTx) QueryRow(ctx context.Context, query string, args ...any) store.Scanner {
	return t.tx.QueryRowContext(ctx, query, args...)
}

// InsertTraces prepares the insert once for all the rows.
func (t sqlTx) InsertTraces(ctx context.Context, rows []store.TraceRow) error {
	if len(rows) == 0 {
		return nil
	}
	stmt, err := t.tx.PrepareContext(ctx, store.InsertTraceSQL)
	if err != nil {
		return err
	}
	defer stmt.Close()
	for _, r := range rows {
		if _, err := stmt.ExecContext(ctx, r.SessionID, r.Kind, r.Version, r.AtMicro, r.Data); err != nil {
			return fmt.Errorf("inserting trace: %w", err)
		}
	}
	return nil
}
