package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/capbroker/capbroker/route"
)

func (m *Main) newCapabilitiesCmd() *cobra.Command {
	var (
		rf            routingFlags
		printTaxonomy bool
	)
	cmd := &cobra.Command{
		Use:   "capabilities",
		Short: "Show the capability map: each capability with the plugin agents that provide it",
		Long: `capabilities scores every installed plugin agent and command against the
capability taxonomy and prints, for each capability, its candidates with
score and confidence (High >= 25, Medium 15-24, Low < 15), then the ones
that match no capability. --print-taxonomy prints the default taxonomy as
YAML, a starting point for --taxonomy.`,
		Example: `  capbroker capabilities --root ~/.claude/plugins
  capbroker capabilities --json --refresh
  capbroker capabilities --print-taxonomy > taxonomy.yaml`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if printTaxonomy {
				_, err := m.Stdout.Write(route.DefaultYAML())
				return err
			}
			ctx := cmd.Context()
			_, cache, err := m.routing(&rf, nil)
			if err != nil {
				return err
			}
			var cm *route.Map
			if rf.refresh {
				cm, err = cache.Refresh(ctx)
			} else {
				cm, err = cache.Map(ctx)
			}
			if err != nil {
				return err
			}
			for _, w := range cache.Warnings() {
				fmt.Fprintln(m.Stderr, "warning:", w)
			}
			if rf.asJSON {
				return writeJSON(m.Stdout, cm.Summary())
			}
			return cm.WriteText(m.Stdout)
		},
	}
	rf.register(cmd)
	cmd.Flags().BoolVar(&printTaxonomy, "print-taxonomy", false, "print the default taxonomy YAML and exit")
	return cmd
}
