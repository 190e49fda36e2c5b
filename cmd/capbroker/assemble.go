package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/capbroker/capbroker/plan"
	"github.com/capbroker/capbroker/session"
)

func (m *Main) newAssembleCmd() *cobra.Command {
	var (
		cf          planCatalogFlags
		dbf         storeFlags
		asJSON      bool
		minCaps     int
		maxInferred int
	)
	cmd := &cobra.Command{
		Use:   "assemble plan.json",
		Short: "Give each task of a plan its capabilities: the plan's, then inferred ones",
		Long: `Assemble reads a plan (from "capbroker plan", or written or edited by hand; "-"
reads stdin), validates it against the catalog, and gives each task its
capabilities: first those the plan names (origin "plan"), then, for a task
with fewer than --min, the best matches of its description and agent in the
catalog (origin "inferred"), each with its reason. It calls no model.

The catalog is the one every command uses (discovery, or --tools), as for
"capbroker plan". What validation drops (unknown capabilities, unknown or
cyclic dependencies, needs without the matching depends_on) is printed as
warnings, and so is every named card that changed since the plan pinned it
(with what changed) or that is gone (dropped). The assembly is recorded in the
trace (kind plan).`,
		Example: `  capbroker assemble plan.json
  capbroker assemble plan.json --tools tools.json --json`,
		Args: exactArgs(1, "a plan file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if maxInferred < 0 {
				return usageError{fmt.Errorf("--max-inferred %d: want 0 (the default) or more", maxInferred)}
			}
			p, err := m.readPlan(args[0])
			if err != nil {
				return err
			}
			b, err := m.planBroker(cmd, &cf)
			if err != nil {
				return err
			}
			a := plan.Assemble(ctx, p, b.Catalog(), &plan.AssembleOptions{MinCapabilities: minCaps, MaxInferred: maxInferred, Ranker: b})
			for _, w := range a.Warnings {
				fmt.Fprintln(m.Stderr, "warning:", w)
			}
			rec := session.PlanRecord("assembled", nil, a, a.Warnings)
			rec.At = time.Now()
			m.recordPlan(ctx, &dbf, rec)
			if asJSON {
				return writeJSON(m.Stdout, a)
			}
			printAssembly(m.Stdout, a)
			return nil
		},
	}
	cf.register(cmd)
	dbf.register(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, `print the tasks as JSON, each with capabilities [{"name","origin","reason"}]`)
	cmd.Flags().IntVar(&minCaps, "min", 0, fmt.Sprintf("infer capabilities for a task that names fewer than this many (0: %d; negative: never infer)", plan.DefaultMinCapabilities))
	cmd.Flags().IntVar(&maxInferred, "max-inferred", 0, fmt.Sprintf("at most this many inferred capabilities per task (0: %d)", plan.DefaultMaxInferred))
	return cmd
}

// readPlan reads and parses a plan file ("-": stdin), naming the file in
// any error.
func (m *Main) readPlan(path string) (*plan.Plan, error) {
	var data []byte
	var err error
	if path == "-" {
		data, err = io.ReadAll(m.Stdin)
		path = "stdin"
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the plan: %w", err)
	}
	p, err := plan.Parse(data)
	if err != nil {
		if pe, ok := err.(*plan.ParseError); ok && pe.Line > 0 {
			pe := *pe
			msg := pe.Msg
			if pe.Path != "" {
				msg = pe.Path + ": " + msg
			}
			return nil, fmt.Errorf("%s:%d:%d: %s", path, pe.Line, pe.Column, msg)
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

func printAssembly(w io.Writer, a *plan.Assembly) {
	fmt.Fprintf(w, "goal: %s\n", a.Goal)
	for _, t := range a.Tasks {
		fmt.Fprintf(w, "\n%s  %s\n", t.ID, firstLine(t.Description, 100))
		if t.AgentSpec.Name != "" {
			fmt.Fprintf(w, "    agent: %s\n", t.AgentSpec.Name)
		}
		if len(t.DependsOn) > 0 {
			fmt.Fprintf(w, "    after: %s\n", strings.Join(t.DependsOn, ", "))
		}
		if len(t.Capabilities) == 0 {
			fmt.Fprintln(w, "    (no capabilities)")
			continue
		}
		tw := table(w)
		for _, c := range t.Capabilities {
			fmt.Fprintf(tw, "    %s\t%s\t%s\n", c.Name, c.Origin, firstLine(c.Reason, 110))
		}
		tw.Flush()
	}
}
