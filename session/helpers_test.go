package session_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/internal/testenv"
	"github.com/capbroker/capbroker/policy"
	"github.com/capbroker/capbroker/rank"
	"github.com/capbroker/capbroker/store"
	"github.com/capbroker/capbroker/store/postgres"
	"github.com/capbroker/capbroker/store/sqlite"
	"github.com/capbroker/capbroker/trace"
)

// testCards reads the test catalog, leaving out the named tools.
func testCards(tb testing.TB, without ...string) []card.Card {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "tools.json"))
	if err != nil {
		tb.Fatal(err)
	}
	var cards []card.Card
	if err := json.Unmarshal(data, &cards); err != nil {
		tb.Fatal(err)
	}
	skip := map[string]bool{}
	for _, w := range without {
		skip[w] = true
	}
	out := cards[:0]
	for _, c := range cards {
		if !skip[c.Name] {
			c.ResolveRisk()
			out = append(out, c)
		}
	}
	return out
}

// newSelector builds the real selection engine over the test catalog.
func newSelector(tb testing.TB, without ...string) *policy.Selector {
	tb.Helper()
	cat, warns := card.NewCatalog(testCards(tb, without...))
	if len(warns) > 0 {
		tb.Fatalf("test catalog: %v", warns)
	}
	sel, err := policy.NewSelector(cat, rank.New(cat.Cards(), nil), nil)
	if err != nil {
		tb.Fatal(err)
	}
	return sel
}

func openSQLite(tb testing.TB, path string) *sqlite.Store {
	tb.Helper()
	st, err := sqlite.Open(context.Background(), path, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	return st
}

func newSQLite(tb testing.TB) *sqlite.Store {
	return openSQLite(tb, filepath.Join(tb.TempDir(), "capbroker.db"))
}

// newPostgres opens a store in a fresh schema of the test database.
func newPostgres(tb testing.TB) *postgres.Store {
	tb.Helper()
	dsn := testenv.Postgres(tb)
	var b [6]byte
	randBytes(b[:])
	schema := "capbroker_session_" + hexs(b[:])
	st, err := postgres.Open(context.Background(), dsn, &postgres.Options{Schema: schema})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		st.Close()
		dropSchema(tb, dsn, schema)
	})
	return st
}

// stores lists the real stores the session tests run against.
var stores = []struct {
	name string
	open func(tb testing.TB) store.Store
}{
	{"sqlite", func(tb testing.TB) store.Store { return newSQLite(tb) }},
	{"postgres", func(tb testing.TB) store.Store { return newPostgres(tb) }},
}

// errBroken is the failure of a broken store.
var errBroken = errors.New("disk I/O error (injected)")

// flaky passes calls to a real store until it is broken, then fails them
// all, the way a full disk or a lost database connection does.
type flaky struct {
	store.Store
	broken atomic.Bool
}

func (f *flaky) fail() error {
	if f.broken.Load() {
		return errBroken
	}
	return nil
}

func (f *flaky) CreateSession(ctx context.Context, s *store.Session, recs ...trace.Record) error {
	if err := f.fail(); err != nil {
		return err
	}
	return f.Store.CreateSession(ctx, s, recs...)
}

func (f *flaky) UpdateSession(ctx context.Context, s *store.Session, recs ...trace.Record) error {
	if err := f.fail(); err != nil {
		return err
	}
	return f.Store.UpdateSession(ctx, s, recs...)
}

func (f *flaky) Session(ctx context.Context, id string) (*store.Session, error) {
	if err := f.fail(); err != nil {
		return nil, err
	}
	return f.Store.Session(ctx, id)
}

func (f *flaky) AppendTraces(ctx context.Context, recs ...trace.Record) error {
	if err := f.fail(); err != nil {
		return err
	}
	return f.Store.AppendTraces(ctx, recs...)
}

// failingRanker is a ranker whose backend is down (a dense ranker whose
// embedding server refuses connections).
type failingRanker struct{}

func (failingRanker) Rank(context.Context, string, int) ([]rank.Hit, error) {
	return nil, errors.New("embeddings endpoint: connection refused")
}

func exampleSelector() *policy.Selector {
	cards := testCards(&testing.T{})
	cat, _ := card.NewCatalog(cards)
	sel, _ := policy.NewSelector(cat, rank.New(cat.Cards(), nil), nil)
	return sel
}
