package dense

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
)

// pgCacheSchema is cacheSchema in PostgreSQL's types.
var pgCacheSchema = strings.NewReplacer("BLOB", "BYTEA", "INTEGER NOT NULL, -- unix", "BIGINT  NOT NULL, -- unix").Replace(cacheSchema)

// OpenPostgresCache opens the vector cache in the PostgreSQL database dsn
// names (a postgres:// URL), creating its table if missing: the cache a
// fleet of gateway replicas shares, so a card is embedded once for the
// whole fleet, by the first replica that needs its vector, and read by
// the others. Redact the dsn in messages: errors here never quote it.
func OpenPostgresCache(ctx context.Context, dsn string) (*Cache, error) {
	if dsn == "" {
		return nil, errors.New("opening embedding cache: no database")
	}
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, errors.New("opening embedding cache in PostgreSQL: cannot parse the connection string")
	}
	db.SetMaxOpenConns(4)
	// Replicas starting together race to create the table: the loser of
	// a unique violation on pg_type finds it made.
	for attempt := 0; ; attempt++ {
		_, err = db.ExecContext(ctx, pgCacheSchema)
		if err == nil || attempt == 2 {
			break
		}
	}
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("opening embedding cache in PostgreSQL: creating table %s: %w", CacheTable, err)
	}
	return &Cache{db: db, owned: true, pg: true, schemaDone: true}, nil
}
