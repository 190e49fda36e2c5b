package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/capbroker/capbroker/store"
)

var _ store.Notifier = (*Store)(nil)

// Notify implements store.Notifier with pg_notify (payloads up to 8000
// bytes).
func (s *Store) Notify(ctx context.Context, channel, payload string) error {
	if _, err := s.pool.Exec(ctx, `SELECT pg_notify($1, $2)`, channel, payload); err != nil {
		return fmt.Errorf("notifying %s: %w", channel, err)
	}
	return nil
}

// Listen implements store.Notifier: it holds one connection of the pool
// in LISTEN, and takes another after losing it; listening calls
// listening (if not nil) each time LISTEN is in place.
func (s *Store) Listen(ctx context.Context, channel string, fn func(payload string), listening func()) error {
	for {
		err := s.listenOnce(ctx, channel, fn, listening)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		_ = err // lost the connection: wait a little, listen again
		select {
		case <-time.After(500 * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (s *Store) listenOnce(ctx context.Context, channel string, fn func(string), listening func()) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	// A connection that listened is not given back to the pool: its
	// LISTEN would outlive this call.
	c := conn.Hijack()
	defer c.Close(context.Background())
	if _, err := c.Exec(ctx, `LISTEN `+pgx.Identifier{channel}.Sanitize()); err != nil {
		return err
	}
	if listening != nil {
		listening()
	}
	for {
		n, err := c.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		fn(n.Payload)
	}
}
