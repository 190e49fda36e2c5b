package main

import (
	"fmt"
	"net/url"
	"os"
	"runtime"
	"time"

	"github.com/spf13/cobra"

	"github.com/capbroker/capbroker/clientconfig"
	"github.com/capbroker/capbroker/gateway"
)

func (m *Main) newClientCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "client list|add|remove",
		Short: "Route an MCP client (Claude Code, Claude Desktop, VS Code, Cursor) through the gateway, or back",
		Long: `client shows which MCP clients are installed and whether they route through
capbroker's gateway, and writes the gateway into a client's user config:

  add     moves the client's servers into a servers file of capbroker's own
          (~/.config/capbroker/clients/<client>.json) and puts one entry in
          their place, "capbroker": capbroker gateway --mcp-config <that file>.
          The client then sees the gateway; the gateway fronts your servers.
          The entry's command is an absolute path (add refuses one the
          client could not start); the servers file is private (0600, in a
          0700 folder); a symlinked config stays a link; a read-only one is
          refused. Servers behind the gateway no longer inherit the client's
          whole environment: add names the variables each one loses and how
          to keep them ("inheritEnv"). A backup of every file it changes is
          written beside it first; --dry-run prints the diff and writes
          nothing; a second add changes nothing.
  remove  puts the servers back, in their order, and takes the gateway's
          entry out (again after a backup).

Every other command (discover, select, find, serve, the gateway) reads the
servers file add wrote, so they see the same servers before and after.

Clients: claude-code (~/.claude.json, or $CLAUDE_CONFIG_DIR/.claude.json),
claude-desktop (claude_desktop_config.json), vscode (the user profile's
mcp.json) and cursor (~/.cursor/mcp.json). Restart the client afterwards.`,
		Example: `  capbroker client list
  capbroker client add claude-code --dry-run
  capbroker client add claude-code
  capbroker client remove claude-code`,
	}
	cmd.AddCommand(m.newClientListCmd(), m.newClientAddCmd(), m.newClientRemoveCmd())
	return cmd
}

// clientEnv is where the clients' files are for this user.
func (m *Main) clientEnv() clientconfig.Env {
	wd, _ := os.Getwd()
	return clientconfig.Env{Home: m.Getenv("HOME"), WorkDir: wd, AppData: m.Getenv("APPDATA"), GOOS: runtime.GOOS, Getenv: m.Getenv}
}

// clientStatus is one line of "client list".
type clientStatus struct {
	Client    string   `json:"client"`
	Name      string   `json:"name"`
	Installed bool     `json:"installed"`
	Config    string   `json:"config"`
	Servers   []string `json:"servers"`
	Routes    bool     `json:"routes_through_capbroker"`
	Behind    []string `json:"behind_gateway"`
	Error     string   `json:"error,omitempty"`
	// GatewayProblem says why the client could not start the gateway its
	// entry runs (the capbroker it names is gone).
	GatewayProblem string `json:"gateway_problem,omitempty"`
	// URLNote says what the shared gateway's URL the entry connects to
	// means when it names no client (as client add --shared wrote before
	// ?client=, or the user dropped it): the gateway serves the client as
	// an unknown one.
	URLNote string `json:"url_note,omitempty"`
}

func (m *Main) newClientListCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "Which MCP clients are installed, and whether they route through capbroker",
		Example: `  capbroker client list
  capbroker client list --json`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			env := m.clientEnv()
			var out []clientStatus
			for _, c := range clientconfig.Clients() {
				st := clientStatus{Client: c.ID, Name: c.Name, Servers: []string{}, Behind: []string{}}
				st.Installed, _ = clientconfig.Installed(c.ID, env)
				f, err := clientconfig.UserFile(c.ID, env)
				if err != nil {
					st.Error = err.Error()
					out = append(out, st)
					continue
				}
				st.Config = f.Path
				s, err := clientconfig.Inspect(f, clientconfig.ServersFile(c.ID, env))
				if err != nil {
					st.Error = err.Error()
				} else {
					st.Servers, st.Routes, st.Behind = s.Servers, s.Routes, s.Behind
					if s.Command != "" {
						st.GatewayProblem = m.gatewayCommandProblem(s.Command)
					}
					st.URLNote = sharedURLNote(c.ID, s.URL)
				}
				out = append(out, st)
			}
			if asJSON {
				return writeJSON(m.Stdout, out)
			}
			tw := table(m.Stdout)
			fmt.Fprintln(tw, "CLIENT\tINSTALLED\tTHROUGH CAPBROKER\tSERVERS\tCONFIG")
			for _, st := range out {
				inst, via := "no", "no"
				if st.Installed {
					inst = "yes"
				}
				servers := fmt.Sprint(len(st.Servers))
				if st.Routes {
					via = "yes"
					servers = fmt.Sprintf("%d (+%d behind the gateway)", len(st.Servers), len(st.Behind))
				}
				cfg := st.Config
				if st.Error != "" {
					cfg += " (" + st.Error + ")"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", st.Client, inst, via, servers, cfg)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			for _, st := range out {
				if st.GatewayProblem != "" {
					fmt.Fprintf(m.Stderr, "warning: %s cannot start capbroker: %s; capbroker client add %s writes this capbroker's path\n", st.Client, st.GatewayProblem, st.Client)
				}
				if st.URLNote != "" {
					fmt.Fprintf(m.Stderr, "note: %s: %s\n", st.Client, st.URLNote)
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the clients as JSON")
	return cmd
}

func (m *Main) newClientAddCmd() *cobra.Command {
	var (
		dryRun  bool
		command string
		force   bool
		shared  bool
		addr    string
		profile string
	)
	cmd := &cobra.Command{
		Use:   "add <claude-code|claude-desktop|vscode|cursor>",
		Short: "Put the gateway in front of a client's MCP servers",
		Example: `  capbroker client add claude-code --dry-run   # the diff, nothing written
  capbroker client add claude-code
  capbroker client add vscode --command /usr/local/bin/capbroker
  capbroker client add cursor --profile review   # its gateway serves only profile review`,
		Args: exactArgs(1, "a client: claude-code, claude-desktop, vscode or cursor"),
		RunE: func(cmd *cobra.Command, args []string) error {
			env := m.clientEnv()
			f, err := m.clientFile(args[0], env, force)
			if err != nil {
				return err
			}
			gw, err := m.clientGateway(f, command, shared, addr)
			if err != nil {
				return err
			}
			// The gateway learns which client it serves (--client, or
			// ?client= on the shared gateway's URL, per session): one that
			// asks its user before each call gets irreversible tools passed
			// through, one with file tools of its own no coding floor.
			if _, known := gateway.Clients[f.Client]; known && gw.Command != "" {
				gw.Args = append(gw.Args, "--client", f.Client)
			} else if known && gw.URL != "" {
				gw.URL = withQuery(gw.URL, "client", f.Client)
			}
			if profile != "" {
				if err := m.useProfile(&gw, profile); err != nil {
					return err
				}
			}
			p, err := clientconfig.PlanAdd(f, clientconfig.ServersFile(f.Client, env), gw)
			if err != nil {
				return err
			}
			m.noteLostVariables(lostVariables(p.Entries, os.Environ()), p.Servers)
			if !dryRun {
				m.noteNothingFronted(f, p)
			}
			done := fmt.Sprintf("%s routes through capbroker: %d server(s) moved behind the gateway (%s)", f.Client, len(p.Moved), p.Servers)
			switch {
			case !gateway.Clients[f.Client].AsksEachCall:
			case shared:
				done += fmt.Sprintf("\nirreversible tools (write, delete, send...) pass through: %s asks you before each tool call (the URL says ?client=%s to the shared gateway; drop it to have the gateway hold them)", f.Client, f.Client)
			default:
				done += fmt.Sprintf("\nirreversible tools (write, delete, send...) pass through: %s asks you before each tool call (gateway --client %s; drop it from the entry to have the gateway hold them)", f.Client, f.Client)
			}
			return m.runPlan(p, dryRun, done, f.Client+" already routes through capbroker; nothing changed")
		},
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "print the diff of every file it would change, and write nothing")
	cmd.Flags().StringVar(&command, "command", "", "the capbroker the client runs, written as an absolute path (default: this executable, or the capbroker on $PATH when this is a temporary go run build)")
	cmd.Flags().BoolVar(&force, "force", false, "write the config even when the client does not seem installed")
	cmd.Flags().BoolVar(&shared, "shared", false, "connect the client to the one shared gateway (capbroker service install) over HTTP instead of starting a gateway per window")
	cmd.Flags().StringVar(&addr, "addr", DefaultSharedAddr, "the shared gateway's address, with --shared")
	cmd.Flags().StringVar(&profile, "profile", "", "the client's gateway serves only this profile (capbroker profile add): gateway --profile NAME, or ?profile=NAME with --shared")
	return cmd
}

func (m *Main) newClientRemoveCmd() *cobra.Command {
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "remove <claude-code|claude-desktop|vscode|cursor>",
		Short: "Put a client's MCP servers back and take the gateway out",
		Example: `  capbroker client remove cursor --dry-run
  capbroker client remove cursor`,
		Args: exactArgs(1, "a client: claude-code, claude-desktop, vscode or cursor"),
		RunE: func(cmd *cobra.Command, args []string) error {
			env := m.clientEnv()
			f, err := m.clientFile(args[0], env, true)
			if err != nil {
				return err
			}
			p, err := clientconfig.PlanRemove(f, clientconfig.ServersFile(f.Client, env))
			if err != nil {
				return err
			}
			return m.runPlan(p, dryRun, fmt.Sprintf("%s no longer routes through capbroker: %d server(s) restored", f.Client, len(p.Moved)),
				f.Client+" does not route through capbroker; nothing changed")
		},
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "print the diff of every file it would change, and write nothing")
	return cmd
}

// clientFile is the client's user file, which must belong to an
// installed client unless force.
func (m *Main) clientFile(id string, env clientconfig.Env, force bool) (clientconfig.File, error) {
	if _, err := clientconfig.Lookup(id); err != nil {
		return clientconfig.File{}, usageError{err}
	}
	f, err := clientconfig.UserFile(id, env)
	if err != nil {
		return f, err
	}
	if ok, where := clientconfig.Installed(id, env); !ok && !force {
		return f, fmt.Errorf("%s does not seem installed here (no %s); install it first, or add --force to write %s anyway", id, where, f.Path)
	}
	return f, nil
}

// runPlan prints the plan's notes, then its diff (dry run) or writes it.
func (m *Main) runPlan(p *clientconfig.Plan, dryRun bool, done, nothing string) error {
	for _, n := range p.Notes {
		fmt.Fprintln(m.Stderr, "note:", n)
	}
	if p.Empty() {
		fmt.Fprintln(m.Stdout, nothing)
		return nil
	}
	if dryRun {
		fmt.Fprint(m.Stdout, p.Diff())
		fmt.Fprintln(m.Stderr, "dry run: nothing written")
		return nil
	}
	backups, err := p.Apply(time.Now())
	for _, b := range backups {
		fmt.Fprintln(m.Stdout, "backup:", b)
	}
	if err != nil {
		return err
	}
	fmt.Fprintln(m.Stdout, done)
	fmt.Fprintln(m.Stdout, "restart the client to use it")
	return nil
}

// sharedURLNote says what the shared gateway's URL u a client's entry
// connects to means ("" when it names the client, or there is none): a
// client the gateway knows (gateway.Clients) whose URL names no client is
// served as an unknown one, its irreversible tools held though it may
// ask before each call, the coding floor given though it may have file
// tools of its own. That is a choice (client add --shared says how to
// make it) or a URL written before ?client=; the note names the command
// that writes the client in, with the URL's own address and profile.
func sharedURLNote(client, u string) string {
	if u == "" {
		return ""
	}
	if _, known := gateway.Clients[client]; !known {
		return ""
	}
	parsed, err := url.Parse(u)
	if err != nil {
		return fmt.Sprintf("its shared gateway URL %q does not parse: %v", u, err)
	}
	q := parsed.Query()
	if q.Get("client") != "" {
		return ""
	}
	add := "capbroker client add " + client + " --shared"
	if parsed.Host != "" && parsed.Host != DefaultSharedAddr {
		add += " --addr " + parsed.Host
	}
	if p := q.Get("profile"); p != "" {
		add += " --profile " + p
	}
	return fmt.Sprintf("its shared gateway URL %s names no client, so the gateway serves it as an unknown client (irreversible tools held); %s names it (?client=%s)", u, add, client)
}
