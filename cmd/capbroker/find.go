package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/capbroker/capbroker/policy"
)

func (m *Main) newFindCmd() *cobra.Command {
	var (
		cf     catalogFlags
		k      int
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   `find "<query>"`,
		Short: "Find capabilities matching a query (what find_capability answers)",
		Example: `  capbroker find "look up a web page"
  capbroker find -k 3 --json "roll back a deployment"`,
		Args: exactArgs(1, "a query in quotes"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if k < 1 {
				return usageError{fmt.Errorf("-k %d: want at least 1", k)}
			}
			ctx := cmd.Context()
			b, err := m.broker(ctx, &cf, nil)
			if err != nil {
				return err
			}
			res := b.Find(ctx, args[0], k)
			if asJSON {
				return writeJSON(m.Stdout, res)
			}
			fmt.Fprintf(m.Stdout, "query:   %s\nreason:  %s\n", res.Query, res.Reason)
			if len(res.Matches) == 0 {
				return nil
			}
			fmt.Fprintln(m.Stdout)
			tw := table(m.Stdout)
			fmt.Fprintln(tw, "  #\tNAME\tSCORE\tCONFIDENCE\tRISK\tDESCRIPTION")
			for i, c := range res.Matches {
				fmt.Fprintf(tw, "  %d\t%s\t%.2f\t%s\t%s\t%s\n", i+1, c.Name, c.Score, c.Confidence, c.Risk, firstLine(c.Description, 70))
			}
			return tw.Flush()
		},
	}
	cf.register(cmd)
	cmd.Flags().IntVarP(&k, "k", "k", policy.DefaultFindK, "how many capabilities to return")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON, with argument schemas")
	return cmd
}
