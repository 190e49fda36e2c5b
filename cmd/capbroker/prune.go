package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/capbroker/capbroker/store"
)

// DefaultRetention is how long sessions and traces are kept when nothing
// says otherwise: serve prunes older ones at start and once a day.
const DefaultRetention = 30 * 24 * time.Hour

func (m *Main) newPruneCmd() *cobra.Command {
	var (
		dbf       storeFlags
		olderThan time.Duration
		reset     bool
	)
	cmd := &cobra.Command{
		Use:   "prune [--older-than 720h] [--reset]",
		Short: "Delete old sessions and traces, or reset a corrupt session database",
		Long: `prune deletes the sessions not updated for --older-than (default 30 days) with
their traces, and route traces of that age, from the session database (--db).
capbroker serve does the same on its own at start and once a day (--retention).

--reset moves a SQLite session database aside (to FILE.corrupt-TIME, with its
-wal and -shm files) and creates a new, empty one in its place: the way out when
the file is corrupt ("file is not a database"). Nothing is deleted.`,
		Example: `  capbroker prune
  capbroker prune --older-than 168h
  capbroker prune --reset --db ~/.local/share/capbroker/capbroker.db`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if reset {
				return m.resetStore(ctx, &dbf)
			}
			if olderThan <= 0 {
				return usageError{fmt.Errorf("prune: --older-than %v: want a positive duration such as 720h", olderThan)}
			}
			st, err := m.openStore(ctx, &dbf)
			if err != nil {
				return err
			}
			defer st.Close()
			p, err := prune(ctx, st, time.Now().Add(-olderThan))
			if err != nil {
				return err
			}
			fmt.Fprintf(m.Stdout, "pruned %d sessions and %d trace records older than %v\n", p.Sessions, p.Traces, olderThan)
			return nil
		},
	}
	dbf.register(cmd)
	cmd.Flags().DurationVar(&olderThan, "older-than", DefaultRetention, "delete sessions not updated for this long, and traces as old")
	cmd.Flags().BoolVar(&reset, "reset", false, "move a (corrupt) SQLite session database aside and start a new one")
	return cmd
}

// prune deletes what is older than before, if st can.
func prune(ctx context.Context, st store.Store, before time.Time) (store.Pruned, error) {
	p, ok := st.(store.Pruner)
	if !ok {
		return store.Pruned{}, errors.New("this session store cannot prune")
	}
	return p.Prune(ctx, before)
}

// resetStore moves the SQLite file aside and opens a new one there.
func (m *Main) resetStore(ctx context.Context, f *storeFlags) error {
	path, err := m.dbPath(f)
	if err != nil {
		return err
	}
	if store.Driver(path) != "sqlite" {
		return usageError{fmt.Errorf("prune --reset: %s is not a SQLite file; reset a PostgreSQL database with its own tools", store.Redact(path))}
	}
	for _, p := range []string{"sqlite://", "sqlite:", "file:"} {
		path = strings.TrimPrefix(path, p)
	}
	aside := path + ".corrupt-" + time.Now().UTC().Format("20060102-150405")
	if _, err := os.Stat(path); err == nil {
		for _, suffix := range []string{"", "-wal", "-shm"} {
			if err := os.Rename(path+suffix, aside+suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("prune --reset: moving %s aside: %w", path+suffix, err)
			}
		}
		fmt.Fprintf(m.Stdout, "moved %s aside to %s\n", path, aside)
	}
	st, err := store.Open(ctx, path)
	if err != nil {
		return fmt.Errorf("prune --reset: %w", err)
	}
	st.Close()
	fmt.Fprintf(m.Stdout, "a new, empty session database is at %s\n", path)
	return nil
}

// keepPruned prunes st at once and then every interval until ctx ends,
// logging what it did; retention <= 0 keeps everything.
func keepPruned(ctx context.Context, st store.Store, retention, interval time.Duration, log *slog.Logger) {
	if retention <= 0 {
		return
	}
	for {
		p, err := prune(ctx, st, time.Now().Add(-retention))
		switch {
		case err != nil:
			log.Warn("pruning old sessions and traces", "error", err)
		case p.Sessions > 0 || p.Traces > 0:
			log.Info("pruned old sessions and traces", "sessions", p.Sessions, "traces", p.Traces, "retention", retention.String())
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(interval):
		}
	}
}
