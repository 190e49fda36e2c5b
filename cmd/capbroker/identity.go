package main

import (
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/capbroker/capbroker/identity"
)

// newIdentityCmd is "capbroker identity": the identities of a gateway
// (--identities FILE).
func (m *Main) newIdentityCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "identity",
		Short: "Make identities for the gateway's --identities file (a token per identity, kept as its SHA-256)",
	}
	var sessions int
	var rate float64
	newCmd := &cobra.Command{
		Use:   "new NAME",
		Short: "Make a token for identity NAME: print the token once (stderr) and the entry to add to the identities file (stdout)",
		Example: `  capbroker identity new ci-bot >> identities.yaml   # the token goes to the terminal, the entry to the file
  capbroker identity new alice --sessions 20 --rate 10`,
		Args: exactArgs(1, "the identity's name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			tok, err := identity.NewToken()
			if err != nil {
				return err
			}
			entry := fmt.Sprintf("  - name: %s\n    token_sha256: %s\n", strconv.Quote(args[0]), identity.Hash(tok))
			if sessions > 0 {
				entry += fmt.Sprintf("    sessions: %d\n", sessions)
			}
			if rate > 0 {
				entry += fmt.Sprintf("    rate: %g\n", rate)
			}
			// The entry must parse as one: a bad name fails here, not
			// when the gateway starts.
			if _, err := identity.Parse([]byte("identities:\n"+entry), "the new entry"); err != nil {
				return usageError{err}
			}
			fmt.Fprintf(m.Stderr, "token of %s (shown once; the file keeps only its SHA-256): %s\n", args[0], tok)
			_, err = fmt.Fprint(m.Stdout, entry)
			return err
		},
	}
	newCmd.Flags().IntVar(&sessions, "sessions", 0, "most MCP sessions the identity keeps open at once (0: no bound of its own)")
	newCmd.Flags().Float64Var(&rate, "rate", 0, "requests per second the identity may send (0: unbounded)")
	cmd.AddCommand(newCmd)
	return cmd
}
