package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/capbroker/capbroker/clientconfig"
	"github.com/capbroker/capbroker/gateway"
	"github.com/capbroker/capbroker/identity"
	"github.com/capbroker/capbroker/internal/safefile"
)

// profilesPath is the user's profiles file (clientconfig.ProfilesFile),
// "" when neither $HOME nor $XDG_CONFIG_HOME says where it is.
func (m *Main) profilesPath() string {
	p := clientconfig.ProfilesFile(m.clientEnv())
	if !filepath.IsAbs(p) {
		return ""
	}
	return p
}

// editProfilesPath is profilesPath, or an error saying why there is none.
func (m *Main) editProfilesPath() (string, error) {
	p := m.profilesPath()
	if p == "" {
		return "", fmt.Errorf("no profiles file: neither $HOME nor $XDG_CONFIG_HOME is set")
	}
	return p, nil
}

// loadProfiles reads the user's profiles file; a file that does not
// exist defines none.
func (m *Main) loadProfiles() (*identity.Profiles, error) {
	p := m.profilesPath()
	if p == "" {
		return identity.ParseProfiles(nil, "(no profiles file: $HOME is not set)")
	}
	data, err := safefile.ReadFile(p, safefile.MaxConfig)
	if err != nil && !fileExists(p) {
		return identity.ParseProfiles(nil, p)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the profiles: %w", err)
	}
	return identity.ParseProfiles(data, p)
}

func (m *Main) newProfileCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "profile list|add|remove|show",
		Short: "Named sets of servers, tool patterns and pins, chosen per client, per HTTP token or per project",
		Long: `profile manages named profiles: which servers a gateway fronts, which of their
tools it exposes (patterns on the gateway's names, "github__*"), which it never
exposes, and which it pins into every session's list from the start. They are
defined once for every client, in ~/.config/capbroker/profiles.json
($XDG_CONFIG_HOME/capbroker when set; 0600), and chosen:

  per client     capbroker client add claude-code --profile review
                 (its entry runs capbroker gateway --profile review)
  per HTTP token profile: review in an identity (--identities FILE)
  per project    profile: review in the project's capbroker.yaml; it only
                 narrows what the client's profile allows

A running gateway applies an edit at once: servers start or stop, tools join
or leave, and sessions get notifications/tools/list_changed.

  list
  add NAME --server S --allow P --deny P --always T   (each repeatable)
  show NAME
  remove NAME`,
		Example: `  capbroker profile add review --server github --deny '*delete*' --always github__get_pull_request
  capbroker profile list
  capbroker client add claude-code --profile review`,
	}
	cmd.AddCommand(m.newProfileListCmd(), m.newProfileAddCmd(), m.newProfileShowCmd(), m.newProfileRemoveCmd())
	return cmd
}

// profileRow is one profile, as list and show print it.
type profileRow struct {
	Name    string   `json:"name"`
	Servers []string `json:"servers"`
	Tools   []string `json:"tools"`
	Deny    []string `json:"deny"`
	Always  []string `json:"always"`
	File    string   `json:"file"`
}

func rowOf(name string, p identity.Profile, file string) profileRow {
	nz := func(xs []string) []string { return append([]string{}, xs...) }
	return profileRow{Name: name, Servers: nz(p.Servers), Tools: nz(p.Tools), Deny: nz(p.Deny), Always: nz(p.Always), File: file}
}

func orAll(xs []string, all string) string {
	if len(xs) == 0 {
		return all
	}
	return strings.Join(xs, ",")
}

func (m *Main) newProfileListCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "list",
		Short:   "The profiles, with their servers, tool patterns and pins",
		Example: "  capbroker profile list\n  capbroker profile list --json",
		Args:    exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			ps, err := m.loadProfiles()
			if err != nil {
				return err
			}
			rows := []profileRow{}
			for _, n := range ps.Names() {
				p, _ := ps.Get(n)
				rows = append(rows, rowOf(n, p, ps.Where))
			}
			if asJSON {
				return writeJSON(m.Stdout, rows)
			}
			tw := table(m.Stdout)
			fmt.Fprintln(tw, "PROFILE\tSERVERS\tTOOLS\tDENY\tALWAYS")
			for _, r := range rows {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.Name, orAll(r.Servers, "all"), orAll(r.Tools, "all"), orAll(r.Deny, "-"), orAll(r.Always, "-"))
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			fmt.Fprintf(m.Stdout, "%d profiles in %s\n", len(rows), ps.Where)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the profiles as JSON")
	return cmd
}

func (m *Main) newProfileAddCmd() *cobra.Command {
	var (
		p       identity.Profile
		replace bool
	)
	cmd := &cobra.Command{
		Use:   "add NAME [--server S]... [--allow P]... [--deny P]... [--always T]...",
		Short: "Define a profile: the servers, tool patterns and pins a gateway serving it keeps to",
		Example: `  capbroker profile add review --server github --server filesystem --deny '*delete*'
  capbroker profile add notes --server memory --always memory__read_graph
  capbroker profile add readonly --allow '*__read_*' --allow '*__list_*' --replace`,
		Args: exactArgs(1, "the profile's name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			if err := identity.CheckProfileName(name); err != nil {
				return usageError{err}
			}
			if err := p.Check(); err != nil {
				return usageError{fmt.Errorf("profile add %s: %w", name, err)}
			}
			if p.Empty() {
				return usageError{fmt.Errorf("profile add %s: give --server, --allow, --deny or --always (a profile that narrows nothing is no profile)", name)}
			}
			path, err := m.editProfilesPath()
			if err != nil {
				return err
			}
			order, _, err := clientconfig.Profiles(path)
			if err != nil {
				return err
			}
			if slices.Contains(order, name) && !replace {
				return fmt.Errorf("%s already defines profile %s; remove it first, or add --replace", path, name)
			}
			raw, err := json.Marshal(p)
			if err != nil {
				return err
			}
			if err := clientconfig.SetProfile(path, name, raw); err != nil {
				return err
			}
			fmt.Fprintf(m.Stdout, "added profile %s to %s\n", name, path)
			// Written all the same (the server may be added next), but a
			// misspelt name would serve nothing.
			if missing, err := m.undefinedServers(cmd.Context(), p.Servers); err == nil && len(missing) > 0 {
				fmt.Fprintf(m.Stderr, "warning: profile %s names servers defined in no place capbroker reads: %s; a gateway serving it fronts none of them (capbroker server list shows the servers; capbroker server add adds one)\n",
					name, strings.Join(missing, ", "))
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&p.Servers, "server", nil, "only this server's tools; repeatable (none: every server)")
	f.StringArrayVar(&p.Tools, "allow", nil, "only the tools whose gateway name matches this name or pattern (\"github__*\"); repeatable")
	f.StringArrayVar(&p.Deny, "deny", nil, "never the tools matching this name or pattern; repeatable; wins over --allow")
	f.StringArrayVar(&p.Always, "always", nil, "pin a server (all its tools) or a tool into every session's list from the start; repeatable")
	f.BoolVar(&replace, "replace", false, "replace a profile of the same name")
	return cmd
}

func (m *Main) newProfileShowCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "show NAME",
		Short:   "One profile, and the servers it names that no place defines",
		Example: "  capbroker profile show review\n  capbroker profile show review --json",
		Args:    exactArgs(1, "the profile's name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ps, err := m.loadProfiles()
			if err != nil {
				return err
			}
			p, err := ps.Lookup(args[0], "profile show")
			if err != nil {
				return err
			}
			r := rowOf(args[0], p, ps.Where)
			missing, err := m.undefinedServers(cmd.Context(), p.Servers)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(m.Stdout, struct {
					profileRow
					Missing []string `json:"servers_not_defined"`
				}{r, append([]string{}, missing...)})
			}
			fmt.Fprintf(m.Stdout, "profile %s (%s)\n", r.Name, r.File)
			fmt.Fprintf(m.Stdout, "  servers: %s\n", orAll(r.Servers, "all"))
			fmt.Fprintf(m.Stdout, "  tools:   %s\n", orAll(r.Tools, "all"))
			fmt.Fprintf(m.Stdout, "  deny:    %s\n", orAll(r.Deny, "none"))
			fmt.Fprintf(m.Stdout, "  always:  %s\n", orAll(r.Always, "none"))
			if len(missing) > 0 {
				fmt.Fprintf(m.Stdout, "  not defined in any place capbroker reads: %s (capbroker server add)\n", strings.Join(missing, ", "))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the profile as JSON")
	return cmd
}

func (m *Main) newProfileRemoveCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "remove NAME",
		Short:   "Remove a profile (a gateway serving it keeps its last definition, with a warning)",
		Example: "  capbroker profile remove review",
		Args:    exactArgs(1, "the profile's name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			path, err := m.editProfilesPath()
			if err != nil {
				return err
			}
			if err := clientconfig.RemoveProfile(path, args[0]); err != nil {
				return err
			}
			fmt.Fprintf(m.Stdout, "removed profile %s from %s\n", args[0], path)
			return nil
		},
	}
}

// undefinedServers are the servers of names that no place capbroker reads
// defines (what the gateway would front by default).
func (m *Main) undefinedServers(ctx context.Context, names []string) ([]string, error) {
	if len(names) == 0 {
		return nil, nil
	}
	up, err := m.plannedUpstreams(ctx, "")
	if err != nil {
		return nil, err
	}
	var missing []string
	for _, s := range names {
		if !slices.ContainsFunc(up.servers, func(c gateway.ServerConfig) bool { return c.Name == s }) {
			missing = append(missing, s)
		}
	}
	return missing, nil
}
