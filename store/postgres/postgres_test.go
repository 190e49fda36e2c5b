package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/capbroker/capbroker/internal/testenv"
	"github.com/capbroker/capbroker/store"
	"github.com/capbroker/capbroker/store/storetest"
	"github.com/capbroker/capbroker/trace"
)

// NewTestStore opens a store in a fresh schema of the test database,
// dropped when the test ends.
func newTestStore(t testing.TB) *Store {
	t.Helper()
	dsn := testenv.Postgres(t)
	schema := freshSchema(t, dsn)
	s, err := Open(context.Background(), dsn, &Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func freshSchema(t testing.TB, dsn string) string {
	t.Helper()
	b := make([]byte, 6)
	rand.Read(b)
	schema := "capbroker_test_" + hex.EncodeToString(b)
	t.Cleanup(func() {
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Errorf("dropping schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, `DROP SCHEMA IF EXISTS `+pgx.Identifier{schema}.Sanitize()+` CASCADE`); err != nil {
			t.Errorf("dropping schema %s: %v", schema, err)
		}
	})
	return schema
}

func insertRaw(t testing.TB, st store.Store, sessionID, kind string, version int, at time.Time, data string) {
	t.Helper()
	s := st.(*Store)
	if _, err := s.pool.Exec(context.Background(), `INSERT INTO traces (session_id, kind, version, at, data) VALUES ($1, $2, $3, $4, $5)`,
		sessionID, kind, version, at.UnixMicro(), data); err != nil {
		t.Fatal(err)
	}
}

func TestConformance(t *testing.T) {
	storetest.Run(t, storetest.Harness{
		New:            func(t testing.TB) store.Store { return newTestStore(t) },
		InsertRawTrace: insertRaw,
	})
}

// TestConcurrentOpenMigratesOnce starts several instances on one empty
// schema at once, as a fleet does.
func TestConcurrentOpenMigratesOnce(t *testing.T) {
	dsn := testenv.Postgres(t)
	schema := freshSchema(t, dsn)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make([]error, 5)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := Open(ctx, dsn, &Options{Schema: schema})
			if err == nil {
				s.Close()
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("instance %d: %v", i, err)
		}
	}
}

func TestSharedAcrossInstances(t *testing.T) {
	dsn := testenv.Postgres(t)
	schema := freshSchema(t, dsn)
	ctx := context.Background()
	a, err := Open(ctx, dsn, &Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := store.Open(ctx, dsn+"&search_path="+schema)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := a.CreateSession(ctx, storetest.Sample("shared")); err != nil {
		t.Fatal(err)
	}
	got, err := b.Session(ctx, "shared")
	if err != nil {
		t.Fatalf("the second instance does not see the session: %v", err)
	}
	got.Exposed = append(got.Exposed, "git_blame")
	if err := b.UpdateSession(ctx, got, storetest.Rec("shared", trace.KindFind, 1)); err != nil {
		t.Fatal(err)
	}
	back, err := a.Session(ctx, "shared")
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Exposed) != 4 || back.Exposed[3] != "git_blame" || back.Version != 2 {
		t.Errorf("first instance reads %+v", back)
	}
}

func TestRefusesNewerSchema(t *testing.T) {
	dsn := testenv.Postgres(t)
	schema := freshSchema(t, dsn)
	ctx := context.Background()
	s, err := Open(ctx, dsn, &Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.pool.Exec(ctx, `UPDATE schema_version SET version = 42`); err != nil {
		t.Fatal(err)
	}
	s.Close()
	_, err = Open(ctx, dsn, &Options{Schema: schema})
	if !errors.Is(err, store.ErrSchemaTooNew) || !strings.Contains(err.Error(), "42") {
		t.Fatalf("Open: %v, want ErrSchemaTooNew naming 42", err)
	}
}

func TestOpenErrorHidesPassword(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, dsn := range []string{
		"postgres://capbroker:s3cr3t-pass@127.0.0.1:1/none?sslmode=disable&connect_timeout=5",
		"postgres://capbroker:s3cr3t-pass@127.0.0.1:99999999/none",
	} {
		_, err := Open(ctx, dsn, nil)
		if err == nil {
			t.Fatalf("Open(%s) succeeded", dsn)
		}
		if strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("error shows the password: %v", err)
		}
	}
}

func BenchmarkAppendTrace(b *testing.B) {
	s := newTestStore(b)
	defer s.Close()
	ctx := context.Background()
	rec := storetest.Rec("bench", trace.KindCall, 3)
	start := time.Now()
	for b.Loop() {
		if err := s.AppendTraces(ctx, rec); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "records/s")
}

// TestNotify sends a message from one store and hears it in another
// opened on the same database (two processes of a fleet).
func TestNotify(t *testing.T) {
	dsn := testenv.Postgres(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a, err := Open(ctx, dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Open(ctx, dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	got := make(chan string, 4)
	go b.Listen(ctx, "capbroker_test", func(p string) { got <- p }, nil)
	// Listen has no "ready" signal: send until one arrives.
	for i := 0; ; i++ {
		if err := a.Notify(ctx, "capbroker_test", "hello"); err != nil {
			t.Fatal(err)
		}
		select {
		case p := <-got:
			if p != "hello" {
				t.Fatalf("heard %q", p)
			}
			return
		case <-time.After(200 * time.Millisecond):
			if i == 50 {
				t.Fatal("heard nothing in 10 s")
			}
		}
	}
}

// TestListenAgainAfterLostConnection: when its listening connection is
// lost, Listen takes another and calls listening again, so the listener
// reads what it missed meanwhile.
func TestListenAgainAfterLostConnection(t *testing.T) {
	dsn := testenv.Postgres(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := Open(ctx, dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	listening := make(chan struct{}, 4)
	go s.Listen(ctx, "capbroker_lost", func(string) {}, func() { listening <- struct{}{} })
	select {
	case <-listening:
	case <-time.After(10 * time.Second):
		t.Fatal("Listen did not start listening in 10 s")
	}
	var n int
	if err := s.pool.QueryRow(ctx, `SELECT COUNT(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE datname = current_database() AND query LIKE 'LISTEN %capbroker_lost%'`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("terminated %d listening connections (%v), want 1", n, err)
	}
	select {
	case <-listening:
	case <-time.After(10 * time.Second):
		t.Fatal("Listen did not listen again in 10 s after losing its connection")
	}
}
