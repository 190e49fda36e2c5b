package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// SharedItem is one piece of state a fleet of replicas shares beyond its
// sessions: an approved tool digest (a pin), what learning from use last
// read, a replica's heartbeat. Items are keyed by Kind and Name; every
// write that changes one gives it the next number of one sequence for the
// whole database (Seq), so a replica that missed the notifications of
// some changes (it was down, its listening connection dropped) reads
// them with [Shared.SharedSince] and is up to date.
type SharedItem struct {
	// Kind and Name key the item ("pin", "server\x00tool").
	Kind string `json:"kind"`
	Name string `json:"name"`
	// Body is the item's content, JSON the store keeps verbatim.
	Body json.RawMessage `json:"body"`
	// At orders writes of one item: a write older than the stored one is
	// ignored (last writer wins by At, not by arrival). Zero: now.
	At time.Time `json:"at"`
	// Weak marks a write that only fills a gap (a tool pinned at first
	// sight): it is ignored if the item exists, however old.
	Weak bool `json:"weak,omitempty"`
	// Origin names the replica that wrote it.
	Origin string `json:"origin,omitempty"`
	// Seq is the sequence number of the write that stored it.
	Seq int64 `json:"seq"`
}

// Shared keeps the [SharedItem]s of a fleet. Both stores of this module
// implement it; with PostgreSQL's [Notifier] the replicas also tell each
// other of each change, and read it within a second.
type Shared interface {
	// PutShared writes items in one transaction and returns those that
	// changed what was stored (with their Seq set); an item older than
	// the stored one (At), a weak item whose key is taken, or one equal to
	// what is stored changes nothing.
	PutShared(ctx context.Context, items ...SharedItem) ([]SharedItem, error)
	// SharedSince returns the items of kind (every kind if "") written
	// after seq, in Seq order.
	SharedSince(ctx context.Context, kind string, seq int64) ([]SharedItem, error)
	// SharedSeq is the number of the last write.
	SharedSeq(ctx context.Context) (int64, error)
	// DeleteShared removes items of kind not written since before (stale
	// heartbeats) and returns how many.
	DeleteShared(ctx context.Context, kind string, before time.Time) (int64, error)
	// TakeTokens takes up to want tokens from the fleet's token bucket
	// name (filled at rate a second up to burst, full when first used)
	// and returns how many it took; with none, wait is how long until
	// the next token.
	TakeTokens(ctx context.Context, name string, rate, burst float64, want int) (got int, wait time.Duration, err error)
}

var _ Shared = SQL{}

// SharedSchema is the migration that adds the shared_state table and its
// sequence (one row), the same for both stores.
const SharedSchema = `CREATE TABLE shared_state (
		kind       TEXT NOT NULL,
		name       TEXT NOT NULL,
		body       TEXT NOT NULL,
		at         BIGINT NOT NULL,
		origin     TEXT NOT NULL,
		seq        BIGINT NOT NULL,
		PRIMARY KEY (kind, name)
	);
	CREATE INDEX shared_state_seq ON shared_state (seq);
	CREATE TABLE shared_seq (seq BIGINT NOT NULL);
	INSERT INTO shared_seq (seq) VALUES (0);
	CREATE TABLE rate_buckets (
		name   TEXT PRIMARY KEY,
		tokens DOUBLE PRECISION NOT NULL,
		at     BIGINT NOT NULL
	);`

func validShared(it *SharedItem) error {
	switch {
	case it.Kind == "" || it.Name == "":
		return fmt.Errorf("shared item %q/%q: no kind or name", it.Kind, it.Name)
	case len(it.Kind) > 64 || len(it.Name) > 1000:
		return fmt.Errorf("shared item %s: kind longer than 64 bytes or name longer than 1000", it.Kind)
	case strings.ContainsRune(it.Kind+it.Name+it.Origin, 0):
		return fmt.Errorf("shared item %s: kind, name or origin holds a NUL byte", it.Kind)
	case len(it.Body) == 0 || !json.Valid(it.Body):
		return fmt.Errorf("shared item %s %q: body is not valid JSON", it.Kind, it.Name)
	}
	return nil
}

// PutShared implements [Shared]. The sequence is one row every writer
// updates in its transaction, so writes take their numbers in the order
// they commit: a reader that saw number n has seen every write before it.
func (s SQL) PutShared(ctx context.Context, items ...SharedItem) (changed []SharedItem, err error) {
	defer annotate(&err, "writing shared state")
	now := Micro(s.now())
	for i := range items {
		if err := validShared(&items[i]); err != nil {
			return nil, err
		}
		if items[i].At.IsZero() {
			items[i].At = now
		}
		items[i].At = Micro(items[i].At)
	}
	err = s.db.InTx(ctx, func(tx Tx) error {
		changed = changed[:0]
		var seq int64
		for _, it := range items {
			var body string
			var at int64
			err := tx.QueryRow(ctx, `SELECT body, at FROM shared_state WHERE kind = ? AND name = ?`, it.Kind, it.Name).Scan(&body, &at)
			switch {
			case errors.Is(err, sql.ErrNoRows):
			case err != nil:
				return err
			case it.Weak, at > it.At.UnixMicro(), body == string(it.Body):
				continue
			}
			if seq == 0 {
				if err := tx.QueryRow(ctx, `UPDATE shared_seq SET seq = seq + 1 RETURNING seq`).Scan(&seq); err != nil {
					return fmt.Errorf("numbering the write: %w", err)
				}
			}
			if _, err := tx.Exec(ctx, `INSERT INTO shared_state (kind, name, body, at, origin, seq) VALUES (?, ?, ?, ?, ?, ?)
				ON CONFLICT (kind, name) DO UPDATE SET body = excluded.body, at = excluded.at, origin = excluded.origin, seq = excluded.seq`,
				it.Kind, it.Name, string(it.Body), it.At.UnixMicro(), it.Origin, seq); err != nil {
				return err
			}
			it.Seq = seq
			changed = append(changed, it)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return changed, nil
}

// SharedSince implements [Shared].
func (s SQL) SharedSince(ctx context.Context, kind string, seq int64) (items []SharedItem, err error) {
	defer annotate(&err, "reading shared state since %d", seq)
	q, args := `SELECT kind, name, body, at, origin, seq FROM shared_state WHERE seq > ?`, []any{seq}
	if kind != "" {
		q += ` AND kind = ?`
		args = append(args, kind)
	}
	err = s.db.Query(ctx, func(r Rows) error {
		for r.Next() {
			var it SharedItem
			var body string
			var at int64
			if err := r.Scan(&it.Kind, &it.Name, &body, &at, &it.Origin, &it.Seq); err != nil {
				return err
			}
			it.Body, it.At = json.RawMessage(body), time.UnixMicro(at).UTC()
			items = append(items, it)
		}
		return r.Err()
	}, q+` ORDER BY seq, kind, name`, args...)
	return items, err
}

// SharedSeq implements [Shared].
func (s SQL) SharedSeq(ctx context.Context) (n int64, err error) {
	defer annotate(&err, "reading the shared state's sequence")
	err = s.db.QueryRow(ctx, `SELECT seq FROM shared_seq`).Scan(&n)
	return n, err
}

// DeleteShared implements [Shared].
func (s SQL) DeleteShared(ctx context.Context, kind string, before time.Time) (n int64, err error) {
	defer annotate(&err, "deleting stale shared %s items", kind)
	err = s.db.InTx(ctx, func(tx Tx) error {
		var err error
		n, err = tx.Exec(ctx, `DELETE FROM shared_state WHERE kind = ? AND at < ?`, kind, before.UnixMicro())
		return err
	})
	return n, err
}

// TakeTokens implements [Shared]: it reads the bucket, computes what it
// holds now, and writes it back if no other writer moved it meanwhile
// (else it reads again).
func (s SQL) TakeTokens(ctx context.Context, name string, rate, burst float64, want int) (got int, wait time.Duration, err error) {
	defer annotate(&err, "taking from the rate bucket %s", name)
	if name == "" || strings.ContainsRune(name, 0) {
		return 0, 0, fmt.Errorf("the bucket's name is empty or holds a NUL byte")
	}
	if rate <= 0 || burst < 1 || want < 1 {
		return 0, 0, fmt.Errorf("rate %g, burst %g, want %d: all must be positive (burst at least 1)", rate, burst, want)
	}
	for range 64 {
		now := Micro(s.now()).UnixMicro()
		err := s.db.InTx(ctx, func(tx Tx) error {
			_, err := tx.Exec(ctx, `INSERT INTO rate_buckets (name, tokens, at) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING`, name, burst, now)
			return err
		})
		if err != nil {
			return 0, 0, err
		}
		var tokens float64
		var at int64
		if err := s.db.QueryRow(ctx, `SELECT tokens, at FROM rate_buckets WHERE name = ?`, name).Scan(&tokens, &at); err != nil {
			return 0, 0, err
		}
		have := tokens
		if now > at {
			have = min(burst, tokens+float64(now-at)*rate/1e6)
		}
		got = min(want, int(have))
		if got == 0 {
			return 0, time.Duration((1 - have) / rate * float64(time.Second)), nil
		}
		var n int64
		err = s.db.InTx(ctx, func(tx Tx) error {
			var err error
			n, err = tx.Exec(ctx, `UPDATE rate_buckets SET tokens = ?, at = ? WHERE name = ? AND tokens = ? AND at = ?`,
				have-float64(got), max(now, at), name, tokens, at)
			return err
		})
		if err != nil {
			return 0, 0, err
		}
		if n == 1 {
			return got, 0, nil
		}
	}
	return 0, 0, fmt.Errorf("64 conflicting writes in a row: %w", ErrConflict)
}
