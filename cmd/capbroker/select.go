package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	capbroker "github.com/capbroker/capbroker"
	"github.com/capbroker/capbroker/payload"
	"github.com/capbroker/capbroker/policy"
)

// selectFlags are the selection options shared by select and session.
type selectFlags struct {
	max      int
	budget   int
	family   string
	format   string
	encoding string
}

func (f *selectFlags) register(cmd *cobra.Command) {
	cmd.Flags().IntVar(&f.max, "max", policy.DefaultMaxSelected, "at most this many picks, floor included (find_capability is extra)")
	cmd.Flags().IntVar(&f.budget, "budget", 0, "token budget of the exposed payload (0: none)")
	cmd.Flags().StringVar(&f.family, "family", "", "task family (coding, research, data, writing, ops, general); inferred when empty")
	cmd.Flags().StringVar(&f.format, "format", "", "print the exposed tools as a provider payload: json, openai, anthropic or mcp")
	cmd.Flags().StringVar(&f.encoding, "encoding", "o200k", "token vocabulary: o200k or cl100k")
}

// options validates the flags and turns them into selection options.
func (f *selectFlags) options() (*policy.Options, error) {
	fam, err := policy.ParseFamily(f.family)
	if err != nil {
		return nil, usageError{fmt.Errorf("--family: %w", err)}
	}
	o := &policy.Options{MaxSelected: f.max, TokenBudget: f.budget, Family: fam}
	if f.max < 1 {
		return nil, usageError{fmt.Errorf("--max %d: want at least 1", f.max)}
	}
	if f.budget < 0 {
		return nil, usageError{fmt.Errorf("--budget %d: want 0 (none) or more", f.budget)}
	}
	if f.format != "" {
		pf, err := payload.ParseFormat(f.format)
		if err != nil {
			return nil, usageError{fmt.Errorf("--format: %w", err)}
		}
		o.Format = pf
	}
	return o, nil
}

func (m *Main) newSelectCmd() *cobra.Command {
	var (
		cf     catalogFlags
		sf     selectFlags
		df     deferFlag
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   `select "<task>"`,
		Short: "Select the capabilities a task should see",
		Long: `Select ranks the catalog for a task and prints what the task would see: the
picks (each with score, confidence, risk and reason), the floor, the
find_capability escape hatch, and the tokens exposed against the full catalog.

With --format, it prints the exposed tools (picks and the hatch) exactly as
that provider's API expects them. With --format anthropic --defer-rest, the
picks are followed by Anthropic's tool search tool and every other tool of
the catalog with "defer_loading": true (no hatch): the picks are loaded at
once and the provider's own search loads the rest when a request needs it.`,
		Example: `  capbroker select "fix the failing test in parser.go"
  capbroker select --json "find recent papers on protein folding"
  capbroker select --format anthropic --tools tools.json "post the release notes to slack"
  capbroker select --format anthropic --defer-rest --tools tools.json "post the release notes to slack"`,
		Args: exactArgs(1, "a task in quotes"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			opts, err := sf.options()
			if err != nil {
				return err
			}
			search, err := df.check(sf.format)
			if err != nil {
				return err
			}
			b, err := m.broker(ctx, &cf, brokerOptions(&sf))
			if err != nil {
				return err
			}
			sel := b.Select(ctx, args[0], opts)
			switch {
			case search != "" && !asJSON:
				r, err := renderDeferred(b, search, sel.Names())
				if err != nil {
					return err
				}
				return writeJSON(m.Stdout, r.Body)
			case sf.format != "" && !asJSON:
				r, err := b.Render(opts.Format, sel.Names(), true)
				if err != nil {
					return err
				}
				return writeJSON(m.Stdout, r.Body)
			case asJSON:
				return writeJSON(m.Stdout, sel)
			}
			printSelection(m, sel)
			return nil
		},
	}
	cf.register(cmd)
	sf.register(cmd)
	df.register(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the selection as JSON")
	return cmd
}

func printSelection(m *Main, sel *policy.Selection) {
	w := m.Stdout
	fmt.Fprintf(w, "task:    %s\n", sel.Task)
	fam := string(sel.Family)
	if len(sel.FamilyWords) > 0 {
		fam += " (from: " + strings.Join(sel.FamilyWords, ", ") + ")"
	}
	fmt.Fprintf(w, "family:  %s\n", fam)
	fmt.Fprintf(w, "reason:  %s\n\n", sel.Reason)
	tw := table(w)
	fmt.Fprintln(tw, "  #\tNAME\tSCORE\tCONFIDENCE\tRISK\tREASON")
	for i, p := range sel.Tools {
		score := "-"
		if p.Score > 0 {
			score = fmt.Sprintf("%.2f", p.Score)
		}
		fmt.Fprintf(tw, "  %d\t%s\t%s\t%s\t%s\t%s\n", i+1, p.Name, score, p.Confidence, p.Risk, firstLine(p.Reason, 90))
	}
	fmt.Fprintf(tw, "  +\t%s\t\t\t\talways exposed: finds more capabilities mid-run\n", sel.Hatch)
	tw.Flush()
	t := sel.Tokens
	fmt.Fprintf(w, "\n%s\n", tokensLine(t, len(sel.Tools)))
	if sel.Degraded {
		fmt.Fprintf(os.Stderr, "warning: ranking failed, the full set is exposed: %s\n", sel.Failure)
	}
}

// brokerOptions are the broker settings the selection flags carry.
func brokerOptions(f *selectFlags) *capbroker.Options {
	return &capbroker.Options{Encoding: payload.Encoding(f.encoding)}
}
