package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	capbroker "github.com/capbroker/capbroker"
	"github.com/capbroker/capbroker/payload"
	"github.com/capbroker/capbroker/policy"
	"github.com/capbroker/capbroker/replay"
	"github.com/capbroker/capbroker/store"
	"github.com/capbroker/capbroker/trace"
)

func (m *Main) newReplayCmd() *cobra.Command {
	var (
		cf        catalogFlags
		dbf       storeFlags
		traces    string
		sessionID string
		limit     int
		findK     int
		maxSel    int
		asJSON    bool
	)
	cmd := &cobra.Command{
		Use:   "replay",
		Short: "Run recorded sessions against today's catalog, ranker and config",
		Long: `Replay reads recorded sessions (the session database's traces, or a JSONL
export from capbroker trace --export) and asks what today's catalog, ranker and
config would have given each: the tools select exposes up front for its task,
and what each of its find_capability queries finds.

Each call that ran is then "up front", "found" (by one of the session's finds
made before it, quoted), "lost" or "gone" (the tool left the catalog), beside
how it went then; each find is "up front" (what it led to calling is exposed at
the start: the find is needed no more), "found", "lost" or "no call". Tokens
compare the tools exposed at the end, as recorded and today. The totals count
the calls worse than then (lost, gone, or no longer up front) and better (up
front now, found then).

What sessions taught ranking (learning from use) is part of today's config; add
--no-learn to replay without it. eval --traces scores the same sessions as a
benchmark: each session's task, with the tools it called as gold.`,
		Example: `  capbroker replay
  capbroker replay --traces traces.jsonl --tools tools.json --json
  capbroker replay --session 4be1c2d09a7f3e61 --no-learn`,
		Args: exactArgs(0, "no arguments (use --traces FILE or --session ID)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if findK < 1 || maxSel < 1 || limit < 0 {
				return usageError{fmt.Errorf("--find-k %d, --max %d, --limit %d: want at least 1, 1 and 0", findK, maxSel, limit)}
			}
			recs, err := m.replayRecords(ctx, &dbf, traces, sessionID, limit)
			if err != nil {
				return err
			}
			sessions := replay.Sessions(recs)
			if len(sessions) == 0 {
				return fmt.Errorf("no recorded sessions to replay")
			}
			b, err := m.broker(ctx, &cf, nil)
			if err != nil {
				return err
			}
			rep, err := replay.Run(ctx, brokerReplayer{b: b, findK: findK, opts: &policy.Options{MaxSelected: maxSel}}, sessions)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(m.Stdout, rep)
			}
			return rep.WriteText(m.Stdout)
		},
	}
	cf.register(cmd)
	dbf.register(cmd)
	cmd.Flags().StringVar(&traces, "traces", "", "JSONL trace file to replay (capbroker trace --export) instead of the session database")
	cmd.Flags().StringVar(&sessionID, "session", "", "replay only this session")
	cmd.Flags().IntVar(&limit, "limit", 0, "read at most this many of the newest trace records from the database (0: all)")
	cmd.Flags().IntVar(&findK, "find-k", policy.DefaultFindK, "how many matches each find returns")
	cmd.Flags().IntVar(&maxSel, "max", policy.DefaultMaxSelected, "at most this many tools exposed up front")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as one JSON object")
	return cmd
}

// replayRecords reads the trace records to replay: from the JSONL file
// when one is given, else from the session database; only those of
// session when set.
func (m *Main) replayRecords(ctx context.Context, dbf *storeFlags, path, session string, limit int) ([]trace.Record, error) {
	if path != "" {
		recs, err := readTraceFile(path)
		if err != nil {
			return nil, err
		}
		if session == "" {
			return recs, nil
		}
		var kept []trace.Record
		for _, r := range recs {
			if r.SessionID == session {
				kept = append(kept, r)
			}
		}
		return kept, nil
	}
	st, err := m.openStore(ctx, dbf)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	return st.Traces(ctx, &store.TraceQuery{SessionID: session, Limit: limit, Newest: limit > 0})
}

// brokerReplayer answers a replay with a Broker: select with opts, find
// with k findK, tokens in OpenAI's format.
type brokerReplayer struct {
	b     *capbroker.Broker
	findK int
	opts  *policy.Options
}

func (r brokerReplayer) Select(ctx context.Context, task string) ([]string, error) {
	sel := r.b.Select(ctx, task, r.opts)
	if sel.Degraded {
		return nil, fmt.Errorf("selection degraded: %s", sel.Failure)
	}
	return sel.Names(), nil
}

func (r brokerReplayer) Find(ctx context.Context, query string) ([]string, error) {
	res := r.b.Find(ctx, query, r.findK)
	if res.Degraded {
		return nil, fmt.Errorf("find failed: %s", res.Failure)
	}
	return res.Names(), nil
}

func (r brokerReplayer) Tokens(names []string) int {
	return r.b.Selector().ExposedTokens(names, payload.OpenAI)
}

func (r brokerReplayer) Has(name string) bool {
	_, ok := r.b.Catalog().Lookup(name)
	return ok
}
