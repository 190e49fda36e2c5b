package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/capbroker/capbroker/store"
	"github.com/capbroker/capbroker/store/storetest"
	"github.com/capbroker/capbroker/trace"
)

func newStore(t testing.TB) store.Store {
	t.Helper()
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "sub", "capbroker.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func insertRaw(t testing.TB, st store.Store, sessionID, kind string, version int, at time.Time, data string) {
	t.Helper()
	s := st.(*Store)
	if _, err := s.w.Exec(`INSERT INTO traces (session_id, kind, version, at, data) VALUES (?, ?, ?, ?, ?)`,
		sessionID, kind, version, at.UnixMicro(), data); err != nil {
		t.Fatal(err)
	}
}

func TestConformance(t *testing.T) {
	storetest.Run(t, storetest.Harness{New: newStore, InsertRawTrace: insertRaw})
}

func TestMemory(t *testing.T) {
	storetest.Run(t, storetest.Harness{
		New: func(t testing.TB) store.Store {
			s, err := Open(context.Background(), ":memory:", nil)
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
		InsertRawTrace: insertRaw,
	})
}

func TestReopenKeepsEverything(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "capbroker.db")
	s, err := Open(ctx, "sqlite:"+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	in := storetest.Sample("keep")
	if err := s.CreateSession(ctx, in, storetest.Rec("keep", trace.KindSelect, 0)); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = Open(ctx, path, &Options{Synchronous: "full"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.Session(ctx, "keep")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(in, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	var mode string
	if err := s.r.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal mode %q (%v), want wal", mode, err)
	}
}

func TestRegisteredWithOpen(t *testing.T) {
	ctx := context.Background()
	s, err := store.Open(ctx, filepath.Join(t.TempDir(), "x.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, ok := s.(*Store); !ok {
		t.Errorf("store.Open gave %T, want *sqlite.Store", s)
	}
}

// TestMigratesOldSchema opens a database left at schema version 1 (an
// older capbroker, sessions only) with a session in it.
func TestMigratesOldSchema(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`CREATE TABLE schema_version (version INTEGER NOT NULL)`,
		`INSERT INTO schema_version VALUES (1)`,
		migrations[0],
		`INSERT INTO sessions VALUES ('old', 'old task', '["read_file"]', '["read_file","git_blame"]', 2, 30, 1, NULL, 3, 1718003021000000, 1718003050000000)`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	s, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var v int
	if err := s.r.QueryRow(`SELECT version FROM schema_version`).Scan(&v); err != nil || v != SchemaVersion {
		t.Errorf("schema version %d (%v), want %d", v, err, SchemaVersion)
	}
	got, err := s.Session(ctx, "old")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"read_file", "git_blame"}, got.Exposed); d != "" || got.Version != 3 || got.Iterations != 2 {
		t.Errorf("old session read as %+v", got)
	}
	if err := s.AppendTraces(ctx, storetest.Rec("old", trace.KindResume, 1)); err != nil {
		t.Errorf("traces table missing after migration: %v", err)
	}
}

func TestRefusesNewerSchema(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "new.db")
	s, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.w.Exec(`UPDATE schema_version SET version = 99`); err != nil {
		t.Fatal(err)
	}
	s.Close()
	_, err = Open(ctx, path, nil)
	if !errors.Is(err, store.ErrSchemaTooNew) || !strings.Contains(err.Error(), "99") {
		t.Fatalf("Open: %v, want ErrSchemaTooNew naming version 99", err)
	}
}

func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for _, tc := range []struct {
		path string
		opts *Options
		want string
	}{
		{"", nil, "bad path"},
		{filepath.Join(dir, "a.db?mode=ro"), nil, "bad path"},
		{filepath.Join(dir, "b.db"), &Options{Synchronous: "sometimes"}, "synchronous"},
		{"/proc/capbroker/none.db", nil, "opening sqlite store"},
	} {
		if _, err := Open(ctx, tc.path, tc.opts); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Open(%q) = %v, want an error containing %q", tc.path, err, tc.want)
		}
	}
}

func BenchmarkAppendTrace(b *testing.B) {
	s := newStore(b)
	defer s.Close()
	ctx := context.Background()
	rec := storetest.Rec("bench", trace.KindCall, 3)
	b.ResetTimer()
	start := time.Now()
	for b.Loop() {
		if err := s.AppendTraces(ctx, rec); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "records/s")
}

func BenchmarkAppendTraceBatch100(b *testing.B) {
	s := newStore(b)
	defer s.Close()
	ctx := context.Background()
	recs := make([]trace.Record, 100)
	for i := range recs {
		recs[i] = storetest.Rec("bench", trace.KindCall, i)
	}
	b.ResetTimer()
	start := time.Now()
	for b.Loop() {
		if err := s.AppendTraces(ctx, recs...); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(100*b.N)/time.Since(start).Seconds(), "records/s")
}
