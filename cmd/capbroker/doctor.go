package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"github.com/capbroker/capbroker/doctor"
	"github.com/capbroker/capbroker/eval"
	"github.com/capbroker/capbroker/override"
	"github.com/capbroker/capbroker/replay"
	"github.com/capbroker/capbroker/source"
)

func (m *Main) newDoctorCmd() *cobra.Command {
	var (
		cf       catalogFlags
		dbf      storeFlags
		queries  string
		traces   string
		useStore bool
		maxDesc  int
		overlap  float64
		accept   bool
		asJSON   bool
	)
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Find tool descriptions that hide or confuse tools, and propose local overrides",
		Long: `Doctor lists the tools whose descriptions make them hard to find or easy to
confuse: empty descriptions, descriptions over --max-description bytes,
parameters without a description, tools whose words are nearly another's
(cosine of their TF-IDF vectors at least --overlap), and tools that lost to
another: in a benchmark's queries (--queries: eval's misses, gold not ranked
first) or in recorded sessions (--traces FILE, or --from-store: a find whose
first match the session did not call, calling another of its matches).

It proposes an override for each tool it can help: a description made from the
name and parameters, the first sentences of a long one, parameter descriptions,
or the description with the requests that wanted the tool ("Use for: ...").
Overrides live under overrides: in capbroker.yaml, pinned by the tool's digest:
when the tool changes upstream, the override stops applying (with a warning).
A hit of an overridden tool says so in its reason. --accept writes the proposals
into the config (--config, default ./capbroker.yaml), replacing the file whole
only once the result reads back as a config.`,
		Example: `  capbroker doctor
  capbroker doctor --tools tools.json --queries queries.jsonl
  capbroker doctor --from-store --accept`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			opts := &doctor.Options{MaxDescription: maxDesc, Overlap: overlap}
			b, err := m.broker(ctx, &cf, nil)
			if err != nil {
				return err
			}
			cards := b.Catalog().Cards()
			findings := doctor.Check(cards, opts)
			if queries != "" {
				qs, err := eval.LoadQueries(queries)
				if err != nil {
					return err
				}
				miss, err := doctor.Misses(ctx, evalRanker(b), qs, opts)
				if err != nil {
					return err
				}
				findings = append(findings, miss...)
			}
			if traces != "" || useStore {
				recs, err := m.replayRecords(ctx, &dbf, traces, "", 0)
				if err != nil {
					return err
				}
				findings = append(findings, doctor.FromSessions(replay.Sessions(recs), opts)...)
			}
			proposals := doctor.Propose(cards, findings, opts)
			path := cf.config
			if path == "" {
				wd, err := os.Getwd()
				if err != nil {
					return fmt.Errorf("finding the working folder: %w", err)
				}
				path = filepath.Join(wd, source.ConfigName)
			}
			if accept {
				if err := doctor.Accept(path, proposals); err != nil {
					return err
				}
			}
			if asJSON {
				if findings == nil {
					findings = []doctor.Finding{}
				}
				if proposals == nil {
					proposals = []override.Override{}
				}
				return writeJSON(m.Stdout, struct {
					Findings  []doctor.Finding    `json:"findings"`
					Overrides []override.Override `json:"overrides"`
					Accepted  string              `json:"accepted,omitempty"`
				}{findings, proposals, map[bool]string{true: path}[accept]})
			}
			return m.writeDoctor(findings, proposals, path, accept)
		},
	}
	cf.register(cmd)
	dbf.register(cmd)
	cmd.Flags().StringVar(&queries, "queries", "", "benchmark queries (queries.jsonl) whose misses show confused tools")
	cmd.Flags().StringVar(&traces, "traces", "", "recorded sessions (JSONL, capbroker trace --export) whose finds show confused tools")
	cmd.Flags().BoolVar(&useStore, "from-store", false, "read the recorded sessions from the session database")
	cmd.Flags().IntVar(&maxDesc, "max-description", doctor.DefaultMaxDescription, "longest description, in bytes, not reported as long")
	cmd.Flags().Float64Var(&overlap, "overlap", doctor.DefaultOverlap, "cosine of two tools' word vectors from which they overlap")
	cmd.Flags().BoolVar(&accept, "accept", false, "write the proposed overrides into capbroker.yaml")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print findings and proposals as one JSON object")
	return cmd
}

// writeDoctor prints the findings, one a line, and the proposals as the
// YAML capbroker.yaml takes.
func (m *Main) writeDoctor(findings []doctor.Finding, proposals []override.Override, path string, accepted bool) error {
	if len(findings) == 0 {
		fmt.Fprintln(m.Stdout, "no problems found")
		return nil
	}
	tw := table(m.Stdout)
	fmt.Fprintln(tw, "TOOL\tPROBLEM\tDETAIL")
	for _, f := range findings {
		d := f.Detail
		if len(f.Examples) > 0 {
			d += ": " + quoteAll(f.Examples)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", f.Tool, f.Kind, d)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(proposals) == 0 {
		return nil
	}
	fmt.Fprintln(m.Stdout)
	if accepted {
		fmt.Fprintf(m.Stdout, "wrote %d overrides into %s:\n", len(proposals), path)
	} else {
		fmt.Fprintf(m.Stdout, "proposed overrides (doctor --accept writes them into %s):\n", path)
	}
	enc := yaml.NewEncoder(m.Stdout)
	enc.SetIndent(2)
	if err := enc.Encode(map[string][]override.Override{"overrides": proposals}); err != nil {
		return err
	}
	return enc.Close()
}

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}
