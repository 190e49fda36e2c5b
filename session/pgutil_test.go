package session_test

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"testing"

	"github.com/jackc/pgx/v5"
)

func randBytes(b []byte)   { crand.Read(b) }
func hexs(b []byte) string { return hex.EncodeToString(b) }

func dropSchema(tb testing.TB, dsn, schema string) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		tb.Errorf("dropping schema %s: %v", schema, err)
		return
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `DROP SCHEMA IF EXISTS `+pgx.Identifier{schema}.Sanitize()+` CASCADE`); err != nil {
		tb.Errorf("dropping schema %s: %v", schema, err)
	}
}
