package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/capbroker/capbroker/internal/atomicfile"
	"github.com/capbroker/capbroker/store"
	"github.com/capbroker/capbroker/trace"
)

func (m *Main) newTraceCmd() *cobra.Command {
	var (
		dbf       storeFlags
		sessionID string
		kind      string
		limit     int
		asJSON    bool
		export    string
	)
	cmd := &cobra.Command{
		Use:   "trace",
		Short: "List the trace: what was selected, found and called, and why",
		Long: `Trace lists the recorded decisions, oldest first: each session's selection,
find_capability calls, tool calls and resumes (and routes and plans), with the
tools exposed after each, the reason, the tokens exposed against the full
catalog, the latency and any failure with its tier.

Records written by older capbroker versions are read and shown in the current
shape. --export writes them as JSON Lines (one current-version record per line).`,
		Example: `  capbroker trace --session 4be1c2d09a7f3e61
  capbroker trace --kind find --json
  capbroker trace --export traces.jsonl`,
		Args: exactArgs(0, "no arguments (use --session ID)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			q := &store.TraceQuery{SessionID: sessionID, Limit: limit}
			if kind != "" {
				k, err := trace.ParseKind(kind)
				if err != nil {
					return usageError{fmt.Errorf("--kind: %w", err)}
				}
				q.Kind = k
			}
			if limit < 0 {
				return usageError{fmt.Errorf("--limit %d: want 0 (all) or more", limit)}
			}
			ctx := cmd.Context()
			st, err := m.openStore(ctx, &dbf)
			if err != nil {
				return err
			}
			defer st.Close()
			recs, err := st.Traces(ctx, q)
			if err != nil {
				return err
			}
			if export != "" {
				return m.exportTraces(export, recs)
			}
			if asJSON {
				if recs == nil {
					recs = []trace.Record{} // [], as GET /v1/traces answers
				}
				return writeJSON(m.Stdout, recs)
			}
			if len(recs) == 0 {
				fmt.Fprintln(m.Stderr, "no trace records")
				return nil
			}
			tw := table(m.Stdout)
			fmt.Fprintln(tw, "ID\tAT\tSESSION\tKIND\tWHAT\tEXPOSED\tFINDS\tTOKENS\tLATENCY\tREASON / FAILURE")
			for _, r := range recs {
				what := r.Query
				switch r.Kind {
				case trace.KindCall:
					what = r.Tool
				case trace.KindSelect, trace.KindRoute, trace.KindPlan, trace.KindResume:
					what = r.Task
				}
				if len(r.Found) > 0 {
					what += " → +" + strings.Join(r.Found, ", +")
				}
				note := r.CapabilityReason
				if len(r.Failures) > 0 {
					var fs []string
					for _, f := range r.Failures {
						fs = append(fs, f.String())
					}
					note = "FAILED " + strings.Join(fs, "; ")
				}
				tokens := fmt.Sprintf("%d", r.Tokens.Exposed)
				if r.Tokens.Full > 0 {
					tokens += fmt.Sprintf("/%d", r.Tokens.Full)
				}
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\t%s\n", r.ID, r.At.Local().Format("01-02 15:04:05"),
					orDash(r.SessionID), r.Kind, firstLine(what, 50), len(r.SelectedTools), r.FindCapabilityCalls, tokens,
					r.Latency.Round(1000), firstLine(note, 70))
			}
			return tw.Flush()
		},
	}
	dbf.register(cmd)
	cmd.Flags().StringVar(&sessionID, "session", "", "only this session's records")
	cmd.Flags().StringVar(&kind, "kind", "", "only records of this kind: select, find, call, route, plan or resume")
	cmd.Flags().IntVar(&limit, "limit", 0, "at most this many records, oldest first (0: all)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the records as a JSON array")
	cmd.Flags().StringVar(&export, "export", "", "write the records as JSON Lines to this file (- for stdout)")
	return cmd
}

// exportTraces writes recs as JSONL to path ("-": stdout), atomically for
// a file.
func (m *Main) exportTraces(path string, recs []trace.Record) error {
	if path == "-" {
		return trace.WriteJSONL(m.Stdout, recs)
	}
	if err := atomicfile.Write(path, func(w io.Writer) error { return trace.WriteJSONL(w, recs) }); err != nil {
		return fmt.Errorf("exporting traces to %s: %w", path, err)
	}
	fmt.Fprintf(m.Stderr, "exported %d records to %s\n", len(recs), path)
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
