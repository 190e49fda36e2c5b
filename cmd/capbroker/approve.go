package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/capbroker/capbroker/index"
)

func (m *Main) newApproveCmd() *cobra.Command {
	var all, list, asJSON bool
	var dir string
	cmd := &cobra.Command{
		Use:   "approve NAME... | --all",
		Short: "Accept MCP tools whose description or schema changed since they were approved",
		Long: `When an MCP server changes a tool's description or input schema, discovery
holds the tool back (it is not selected) until you approve the change. List the
changes with "capbroker approve --list", then approve tools by name
(server__tool) or all at once.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !list && all == (len(args) > 0) {
				return usageError{fmt.Errorf("approve takes tool names or --all (not both); list the changes with --list")}
			}
			if dir == "" {
				dir = index.DefaultDir(m.Getenv)
			}
			ix, err := index.Open(dir, nil)
			if err != nil {
				return err
			}
			if list {
				if asJSON {
					return writeJSON(m.Stdout, changedJSON(ix.Changed()))
				}
				printChanged(m.Stdout, ix.Changed())
				return nil
			}
			var approved []string
			if all {
				approved, err = ix.ApproveAll()
			} else {
				approved, err = ix.Approve(args...)
			}
			if err != nil {
				return err
			}
			if asJSON {
				if approved == nil {
					approved = []string{}
				}
				return writeJSON(m.Stdout, map[string]any{"approved": approved})
			}
			if len(approved) == 0 {
				fmt.Fprintln(m.Stdout, "nothing to approve: no tool changed since it was approved")
				return nil
			}
			fmt.Fprintf(m.Stdout, "approved %d: %s\n", len(approved), strings.Join(approved, ", "))
			return nil
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "approve every changed tool")
	cmd.Flags().BoolVar(&list, "list", false, "list the changed tools with a diff each, approving nothing")
	cmd.Flags().StringVar(&dir, "index", "", "index folder (default $CAPBROKER_INDEX, else $XDG_CACHE_HOME/capbroker, else ~/.cache/capbroker)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the approved names as JSON")
	return cmd
}

// printChanged writes the changed tools with their diffs, for
// "cards --changed".
func printChanged(w io.Writer, changes []index.Change) {
	if len(changes) == 0 {
		fmt.Fprintln(w, "no tool changed since it was approved")
		return
	}
	for _, c := range changes {
		when := "never approved (the pins file was lost)"
		if !c.Old.Approved.IsZero() {
			when = "approved " + c.Old.Approved.Format("2006-01-02 15:04")
		}
		fmt.Fprintf(w, "%s (server %s, tool %s; %s)\n", c.Name, c.Source, c.Tool, when)
		for _, l := range strings.Split(strings.TrimRight(c.Diff, "\n"), "\n") {
			fmt.Fprintf(w, "    %s\n", l)
		}
	}
}

// changeJSON is one changed tool in JSON output.
type changeJSON struct {
	Name        string `json:"name"`
	Server      string `json:"server"`
	Tool        string `json:"tool"`
	Approved    string `json:"approved,omitempty"`
	Description string `json:"description"`
	Diff        string `json:"diff"`
}

// changedJSON converts changes for JSON output.
func changedJSON(changes []index.Change) []changeJSON {
	out := make([]changeJSON, 0, len(changes))
	for _, c := range changes {
		j := changeJSON{Name: c.Name, Server: c.Source, Tool: c.Tool, Description: c.New.Description, Diff: c.Diff}
		if !c.Old.Approved.IsZero() {
			j.Approved = c.Old.Approved.Format("2006-01-02T15:04:05Z07:00")
		}
		out = append(out, j)
	}
	return out
}
