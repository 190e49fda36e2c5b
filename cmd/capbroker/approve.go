package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/index"
	"github.com/capbroker/capbroker/internal/termsafe"
)

func (m *Main) newApproveCmd() *cobra.Command {
	var all, list, asJSON, servers, yes bool
	var dir string
	cmd := &cobra.Command{
		Use: "approve NAME... | --all | --servers [SERVER]...",
		Example: `  capbroker approve --list
  capbroker approve github__create_issue
  capbroker approve --all
  capbroker approve --servers`,
		Short: "Accept MCP tools held back until a person approves them (changed, new, or pins lost)",
		Long: `When an MCP server changes a tool's description or input schema, discovery
and the gateway hold the tool back (it is not selected, listed or callable)
until you approve the change. List the held tools with "capbroker approve
--list", then approve tools by name (server__tool) or all at once.

Tools are also held when the pins file (pins.json in the index folder) was
deleted, is corrupt or cannot be read: nothing is trusted until approved again,
and "capbroker approve --all" (after --list) re-approves the tools as they are
now. With the gateway's --hold-new, tools never seen before (a renamed tool is
new) are held the same way.

MCP servers defined by the project in the working folder (./.mcp.json,
./.vscode/mcp.json, ./.cursor/mcp.json, what ./capbroker.yaml names) are not
started until approved, here or in Claude Code. "capbroker approve --servers"
shows each such server's exact command line (or URL) and where it is defined,
then asks before approving them (--yes approves without asking; names approve
only those servers). An approval covers the definition as written: if it
changes, it must be approved again.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if servers {
				if all {
					return usageError{fmt.Errorf("approve --servers takes server names, not --all")}
				}
				return m.approveServers(cmd.Context(), args, list, yes, asJSON)
			}
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
			fmt.Fprintf(m.Stdout, "approved %d: %s\n", len(approved), strings.Join(termsafe.Strings(approved), ", "))
			return nil
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "approve every held tool (after a lost or corrupt pins file: re-approve the tools as they are now)")
	cmd.Flags().BoolVar(&list, "list", false, "list the held tools with why and a diff each, approving nothing")
	cmd.Flags().StringVar(&dir, "index", "", "index folder (default $CAPBROKER_INDEX, else $XDG_CACHE_HOME/capbroker, else ~/.cache/capbroker)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the approved names as JSON")
	cmd.Flags().BoolVar(&servers, "servers", false, "approve the project's MCP servers (./.mcp.json, ...) after showing their command lines")
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "with --servers: approve without asking")
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
		when := "never approved: " + c.Why
		if !c.Old.Approved.IsZero() {
			when = c.Why + ", approved " + c.Old.Approved.Format("2006-01-02 15:04")
		}
		fmt.Fprintf(w, "%s (server %s, tool %s; %s)\n", termsafe.String(c.Name), termsafe.String(c.Source), termsafe.String(c.Tool), termsafe.String(when))
		for _, l := range strings.Split(strings.TrimRight(c.Diff, "\n"), "\n") {
			fmt.Fprintf(w, "    %s\n", termsafe.String(l))
		}
	}
}

// changeJSON is one changed tool in JSON output.
type changeJSON struct {
	Name        string `json:"name"`
	Server      string `json:"server"`
	Tool        string `json:"tool"`
	Approved    string `json:"approved,omitempty"`
	Why         string `json:"why"`
	Description string `json:"description"`
	Diff        string `json:"diff"`
}

// changedJSON converts changes for JSON output.
func changedJSON(changes []index.Change) []changeJSON {
	out := make([]changeJSON, 0, len(changes))
	for _, c := range changes {
		j := changeJSON{Name: c.Name, Server: c.Source, Tool: c.Tool, Why: c.Why, Description: c.New.Description, Diff: c.Diff}
		if !c.Old.Approved.IsZero() {
			j.Approved = c.Old.Approved.Format("2006-01-02T15:04:05Z07:00")
		}
		out = append(out, j)
	}
	return out
}

// heldSummary says, one line per kind, why discovery held MCP tools back
// and which command releases them.
func heldSummary(held []card.Card) []string {
	var changed, fresh int
	var distrust []card.Card
	for _, c := range held {
		switch c.Meta[index.HeldKindMeta] {
		case index.HeldNew:
			fresh++
		case index.HeldDistrust:
			distrust = append(distrust, c)
		default:
			changed++
		}
	}
	var out []string
	if changed > 0 {
		out = append(out, fmt.Sprintf("%d MCP tools changed since they were approved and are held back; review with capbroker approve --list, accept with capbroker approve NAME|--all", changed))
	}
	if fresh > 0 {
		out = append(out, fmt.Sprintf("%d MCP tools were never seen before and are quarantined (--hold-new); review with capbroker approve --list, accept with capbroker approve NAME|--all", fresh))
	}
	if len(distrust) > 0 {
		why, _, _ := strings.Cut(distrust[0].Meta[index.HeldMeta], "; review with")
		out = append(out, fmt.Sprintf("%d MCP tools are held back: %s; review with capbroker approve --list, then capbroker approve --all re-approves them as they are now", len(distrust), why))
	}
	return out
}
