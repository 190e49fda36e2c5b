package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/index"
)

func (m *Main) newCardsCmd() *cobra.Command {
	var (
		cf      catalogFlags
		asJSON  bool
		kind    string
		source  string
		changed bool
	)
	cmd := &cobra.Command{
		Use:   "cards",
		Short: "List the capability cards of the catalog",
		Example: `  capbroker cards --kind tool
  capbroker cards --tools examples/catalog/calendar.json --json
  capbroker cards --changed`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if kind != "" && !card.Kind(kind).Valid() {
				return usageError{fmt.Errorf("--kind %q: want tool, agent, command or skill", kind)}
			}
			if changed {
				return m.printChangedCards(&cf, asJSON)
			}
			b, err := m.broker(ctx, &cf, nil)
			if err != nil {
				return err
			}
			var out []card.Card
			for _, c := range b.Catalog().Cards() {
				if (kind == "" || string(c.Kind) == kind) && (source == "" || c.Source == source) {
					out = append(out, c)
				}
			}
			if asJSON {
				if out == nil {
					out = []card.Card{}
				}
				return writeJSON(m.Stdout, out)
			}
			tw := table(m.Stdout)
			fmt.Fprintln(tw, "NAME\tKIND\tSOURCE\tRISK\tDESCRIPTION")
			for _, c := range out {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", c.Name, c.Kind, c.Source, c.Risk, firstLine(c.Description, 70))
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			fmt.Fprintf(m.Stdout, "%d cards\n", len(out))
			return nil
		},
	}
	cf.register(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the cards as JSON")
	cmd.Flags().StringVar(&kind, "kind", "", "only cards of this kind (tool, agent, command, skill)")
	cmd.Flags().StringVar(&source, "source", "", "only cards from this source")
	cmd.Flags().BoolVar(&changed, "changed", false, "list MCP tools held back because their description or schema changed since approval, with a diff (approve them with capbroker approve)")
	return cmd
}

// printChangedCards lists the held-back tools of the card index.
func (m *Main) printChangedCards(cf *catalogFlags, asJSON bool) error {
	_, dir, err := m.sourceOptions(&cf.discoveryFlags)
	if err != nil {
		return err
	}
	ix, err := index.Open(dir, nil)
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(m.Stdout, changedJSON(ix.Changed()))
	}
	printChanged(m.Stdout, ix.Changed())
	return nil
}
