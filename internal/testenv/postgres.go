package testenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Postgres returns the connection string of a database of its own for tb
// on the test PostgreSQL server ($CAPBROKER_TEST_POSTGRES), created empty
// and dropped when tb ends; it stops tb if the server is not set. A
// database per test keeps tests hermetic: what one test's sessions left
// behind (traces that learning from use reads, say) never reaches
// another test, nor a later run.
func Postgres(tb testing.TB) string {
	tb.Helper()
	dsn := os.Getenv("CAPBROKER_TEST_POSTGRES")
	if dsn == "" {
		Missing(tb, "PostgreSQL (CAPBROKER_TEST_POSTGRES)")
	}
	u, err := url.Parse(dsn)
	if err != nil {
		tb.Fatalf("CAPBROKER_TEST_POSTGRES is not a URL: %v", err)
	}
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		tb.Fatal(err)
	}
	name := "capbroker_t_" + hex.EncodeToString(b[:])

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	admin, err := pgx.Connect(ctx, dsn)
	if err != nil {
		tb.Fatalf("connecting to the test PostgreSQL server to create a database: %v", err)
	}
	defer admin.Close(context.Background())
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		tb.Fatalf("creating the test database %s: %v", name, err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		c, err := pgx.Connect(ctx, dsn)
		if err != nil {
			tb.Errorf("connecting to drop the test database %s: %v", name, err)
			return
		}
		defer c.Close(context.Background())
		if _, err := c.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			tb.Errorf("dropping the test database %s: %v", name, err)
		}
	})
	u.Path = "/" + name
	return u.String()
}
