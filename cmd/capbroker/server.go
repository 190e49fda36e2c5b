package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/spf13/cobra"

	"github.com/capbroker/capbroker/clientconfig"
)

// serverFileFlags say which servers file "capbroker server" edits.
type serverFileFlags struct {
	files  []string
	client string
}

func (f *serverFileFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringArrayVar(&f.files, "mcp-config", nil, "servers file to edit, one (default: the one capbroker client add wrote for --client)")
	cmd.Flags().StringVar(&f.client, "client", "", "the client whose servers file to edit: claude-code, claude-desktop, vscode or cursor (default: claude-code's, else the only one client add wrote)")
}

// path is the servers file to edit.
func (f *serverFileFlags) path(m *Main) (string, error) {
	switch len(f.files) {
	case 0:
	case 1:
		return f.files[0], nil
	default:
		return "", usageError{fmt.Errorf("--mcp-config: name one servers file to edit, not %d", len(f.files))}
	}
	env := m.clientEnv()
	if f.client == "" {
		return defaultServersFile(env)
	}
	if _, err := clientconfig.Lookup(f.client); err != nil {
		return "", usageError{fmt.Errorf("--client: %w", err)}
	}
	return clientconfig.ServersFile(f.client, env), nil
}

// defaultServersFile is the servers file "capbroker server" edits when
// no --client names one: Claude Code's when it exists, else the only one
// "client add" wrote (for VS Code, say: Claude Code's would be served by
// no gateway), else Claude Code's, to be made. Several and none of them
// Claude Code's is an error asking for --client.
func defaultServersFile(env clientconfig.Env) (string, error) {
	claude := clientconfig.ServersFile(clientconfig.ClaudeCode, env)
	if fileExists(claude) {
		return claude, nil
	}
	var found, ids []string
	for _, c := range clientconfig.Clients() {
		if p := clientconfig.ServersFile(c.ID, env); fileExists(p) {
			found, ids = append(found, p), append(ids, c.ID)
		}
	}
	switch len(found) {
	case 0:
		return claude, nil
	case 1:
		return found[0], nil
	}
	return "", usageError{fmt.Errorf("several clients route through capbroker (%s), each with its servers file; name one with --client", strings.Join(ids, ", "))}
}

func (m *Main) newServerCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "server list|add|remove|enable|disable|tools",
		Short: "Manage the MCP servers behind the gateway, without editing JSON; a running gateway applies each change at once",
		Long: `server edits the servers file the gateway serves from: the one "capbroker
client add" wrote for --client (~/.config/capbroker/clients/CLIENT.json; by
default Claude Code's, or the only client's when one other was added), or
--mcp-config FILE. The file
keeps its order and every other byte, and stays private (0600). A running
gateway watches the file and applies the change without a restart: an added
server starts, a removed or disabled one stops, and clients get
notifications/tools/list_changed.

  list                       the servers, enabled or not, and their tool patterns
  add NAME -- COMMAND ARGS…  a stdio server (--env K=V, --keep-env VAR)
  add NAME --url URL         a remote server (--header K=V)
  remove NAME
  enable NAME / disable NAME
  tools NAME --allow P --deny P   expose only tools matching --allow, never those
                             matching --deny (names or patterns: "delete_*");
                             --clear drops both`,
		Example: `  capbroker server list
  capbroker server add memory -- npx -y @modelcontextprotocol/server-memory
  capbroker server add docs --url https://example.com/mcp --header "Authorization=Bearer \${DOCS_TOKEN}"
  capbroker server disable memory
  capbroker server tools github --deny 'delete_*' --deny merge_pull_request`,
	}
	cmd.AddCommand(m.newServerListCmd(), m.newServerAddCmd(), m.newServerRemoveCmd(),
		m.newServerToggleCmd("enable"), m.newServerToggleCmd("disable"), m.newServerToolsCmd())
	return cmd
}

// serverRow is one line of "server list".
type serverRow struct {
	Name     string   `json:"name"`
	Enabled  bool     `json:"enabled"`
	Runs     string   `json:"runs"`
	Allow    []string `json:"allow_tools"`
	Deny     []string `json:"deny_tools"`
	Problem  string   `json:"problem,omitempty"`
	FromFile string   `json:"file"`
}

func (m *Main) newServerListCmd() *cobra.Command {
	var f serverFileFlags
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "list",
		Short:   "The servers behind the gateway, enabled or not, with their tool patterns",
		Example: "  capbroker server list\n  capbroker server list --client cursor --json",
		Args:    exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			path, err := f.path(m)
			if err != nil {
				return err
			}
			order, defs, err := clientconfig.Servers(path)
			if err != nil {
				return err
			}
			rows := []serverRow{}
			for _, n := range order {
				r := serverRow{Name: n, Enabled: true, Allow: []string{}, Deny: []string{}, FromFile: path}
				var e struct {
					Disabled bool     `json:"disabled"`
					Include  []string `json:"includeTools"`
					Exclude  []string `json:"excludeTools"`
				}
				json.Unmarshal(defs[n], &e)
				r.Enabled = !e.Disabled
				r.Allow, r.Deny = append(r.Allow, e.Include...), append(r.Deny, e.Exclude...)
				if s, ok := parseEntry(n, enabledEntry(defs[n])); ok {
					r.Runs = s.CommandLine()
				} else {
					r.Problem = "not a server definition the gateway reads"
				}
				rows = append(rows, r)
			}
			if asJSON {
				return writeJSON(m.Stdout, rows)
			}
			tw := table(m.Stdout)
			fmt.Fprintln(tw, "SERVER\tENABLED\tTOOLS\tRUNS")
			for _, r := range rows {
				en := "yes"
				if !r.Enabled {
					en = "no"
				}
				tools := "all"
				if len(r.Allow) > 0 {
					tools = "only " + strings.Join(r.Allow, ",")
				}
				if len(r.Deny) > 0 {
					tools += " but not " + strings.Join(r.Deny, ",")
				}
				runs := r.Runs
				if r.Problem != "" {
					runs = r.Problem
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Name, en, tools, runs)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			fmt.Fprintf(m.Stdout, "%d servers in %s\n", len(rows), path)
			return nil
		},
	}
	f.register(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the servers as JSON")
	return cmd
}

// pairs reads K=V flags.
func pairs(flag string, vals []string) (map[string]string, error) {
	if len(vals) == 0 {
		return nil, nil
	}
	out := map[string]string{}
	for _, v := range vals {
		k, val, ok := strings.Cut(v, "=")
		if !ok || k == "" {
			return nil, usageError{fmt.Errorf("--%s %q: want KEY=VALUE", flag, v)}
		}
		out[k] = val
	}
	return out, nil
}

func (m *Main) newServerAddCmd() *cobra.Command {
	var (
		f                   serverFileFlags
		url                 string
		env, headers, inher []string
		replace             bool
	)
	cmd := &cobra.Command{
		Use:   "add NAME (-- COMMAND [ARGS]... | --url URL)",
		Short: "Add an MCP server behind the gateway",
		Example: `  capbroker server add memory -- npx -y @modelcontextprotocol/server-memory
  capbroker server add memory --env MEMORY_FILE_PATH=$HOME/memory.jsonl -- npx -y @modelcontextprotocol/server-memory
  capbroker server add docs --url https://example.com/mcp --header "Authorization=Bearer \${DOCS_TOKEN}"`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, command := args[0], args[1:]
			if (url == "") == (len(command) == 0) {
				return usageError{fmt.Errorf("server add %s: give either -- COMMAND [ARGS]... or --url URL", name)}
			}
			path, err := f.path(m)
			if err != nil {
				return err
			}
			envs, err := pairs("env", env)
			if err != nil {
				return err
			}
			hdrs, err := pairs("header", headers)
			if err != nil {
				return err
			}
			def := map[string]any{}
			if url != "" {
				def["type"], def["url"] = "http", url
				if hdrs != nil {
					def["headers"] = hdrs
				}
			} else {
				def["type"], def["command"], def["args"] = "stdio", command[0], append([]string{}, command[1:]...)
				if envs != nil {
					def["env"] = envs
				}
				if len(inher) > 0 {
					def["inheritEnv"] = inher
				}
			}
			raw, err := json.Marshal(def)
			if err != nil {
				return err
			}
			if _, ok := parseEntry(name, raw); !ok {
				return usageError{fmt.Errorf("server add %s: the gateway could not read this definition: %s", name, raw)}
			}
			order, _, err := clientconfig.Servers(path)
			if err != nil {
				return err
			}
			for _, n := range order {
				if n == name && !replace {
					return fmt.Errorf("%s already defines server %s; remove it first, or add --replace", path, name)
				}
			}
			if err := clientconfig.SetServer(path, name, raw); err != nil {
				return err
			}
			fmt.Fprintf(m.Stdout, "added server %s to %s\n", name, path)
			if url == "" {
				if w := m.checkServerCommand(name, command[0]); w != "" {
					fmt.Fprintln(m.Stderr, "warning:", w)
				}
			}
			return nil
		},
	}
	f.register(cmd)
	cmd.Flags().StringVar(&url, "url", "", "a remote server's URL (streamable HTTP)")
	cmd.Flags().StringArrayVar(&env, "env", nil, "KEY=VALUE for a stdio server's environment; repeatable (${VAR} is expanded when the gateway reads it)")
	cmd.Flags().StringArrayVar(&headers, "header", nil, "KEY=VALUE HTTP header for a remote server; repeatable")
	cmd.Flags().StringArrayVar(&inher, "keep-env", nil, "a variable of the gateway's environment the stdio server keeps (its \"inheritEnv\"); repeatable")
	cmd.Flags().BoolVar(&replace, "replace", false, "replace a server of the same name")
	return cmd
}

func (m *Main) newServerRemoveCmd() *cobra.Command {
	var f serverFileFlags
	cmd := &cobra.Command{
		Use:     "remove NAME",
		Short:   "Remove an MCP server from behind the gateway",
		Example: "  capbroker server remove memory",
		Args:    exactArgs(1, "the server's name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			path, err := f.path(m)
			if err != nil {
				return err
			}
			if err := clientconfig.RemoveServer(path, args[0]); err != nil {
				return err
			}
			fmt.Fprintf(m.Stdout, "removed server %s from %s\n", args[0], path)
			return nil
		},
	}
	f.register(cmd)
	return cmd
}

func (m *Main) newServerToggleCmd(verb string) *cobra.Command {
	var f serverFileFlags
	cmd := &cobra.Command{
		Use:     verb + " NAME",
		Short:   strings.ToUpper(verb[:1]) + verb[1:] + " an MCP server behind the gateway (\"disabled\" in its entry)",
		Example: "  capbroker server " + verb + " memory",
		Args:    exactArgs(1, "the server's name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			path, err := f.path(m)
			if err != nil {
				return err
			}
			var v any // enable: the key goes
			if verb == "disable" {
				v = true
			}
			if err := clientconfig.SetServerField(path, args[0], "disabled", v); err != nil {
				return err
			}
			fmt.Fprintf(m.Stdout, "%sd server %s in %s\n", verb, args[0], path)
			return nil
		},
	}
	f.register(cmd)
	return cmd
}

func (m *Main) newServerToolsCmd() *cobra.Command {
	var (
		f           serverFileFlags
		allow, deny []string
		clear       bool
	)
	cmd := &cobra.Command{
		Use:   "tools NAME [--allow PATTERN]... [--deny PATTERN]... [--clear]",
		Short: "Choose which of a server's tools the gateway exposes (names or patterns)",
		Example: `  capbroker server tools github --deny 'delete_*' --deny merge_pull_request
  capbroker server tools filesystem --allow 'read_*' --allow list_directory
  capbroker server tools github --clear`,
		Args: exactArgs(1, "the server's name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !clear && len(allow)+len(deny) == 0 {
				return usageError{fmt.Errorf("server tools %s: give --allow, --deny or --clear", args[0])}
			}
			for _, p := range append(append([]string(nil), allow...), deny...) {
				if !validPattern(p) {
					return usageError{fmt.Errorf("server tools: %q is not a valid pattern", p)}
				}
			}
			path, err := f.path(m)
			if err != nil {
				return err
			}
			set := func(key string, v []string) error {
				if clear && len(v) == 0 {
					return clientconfig.SetServerField(path, args[0], key, nil)
				}
				if len(v) == 0 {
					return nil
				}
				return clientconfig.SetServerField(path, args[0], key, v)
			}
			if err := set("includeTools", allow); err != nil {
				return err
			}
			if err := set("excludeTools", deny); err != nil {
				return err
			}
			fmt.Fprintf(m.Stdout, "server %s in %s: tools %s\n", args[0], path, describeTools(allow, deny, clear))
			return nil
		},
	}
	f.register(cmd)
	cmd.Flags().StringArrayVar(&allow, "allow", nil, "expose only the tools matching this name or pattern; repeatable (replaces the list)")
	cmd.Flags().StringArrayVar(&deny, "deny", nil, "never expose the tools matching this name or pattern; repeatable (replaces the list); wins over --allow")
	cmd.Flags().BoolVar(&clear, "clear", false, "drop the lists not given: every tool again")
	return cmd
}

// validPattern reports whether p is a tool name or a pattern path.Match
// reads.
func validPattern(p string) bool {
	_, err := path.Match(p, "x")
	return p != "" && err == nil
}

func describeTools(allow, deny []string, clear bool) string {
	var parts []string
	if len(allow) > 0 {
		parts = append(parts, "only "+strings.Join(allow, ", "))
	}
	if len(deny) > 0 {
		parts = append(parts, "never "+strings.Join(deny, ", "))
	}
	if len(parts) == 0 && clear {
		return "all"
	}
	return strings.Join(parts, "; ")
}

// enabledEntry is a server's entry without its "disabled" key, so that a
// disabled server's definition reads as the one enabling it would run.
func enabledEntry(raw json.RawMessage) json.RawMessage {
	var e map[string]json.RawMessage
	if json.Unmarshal(raw, &e) != nil {
		return raw
	}
	if _, ok := e["disabled"]; !ok {
		return raw
	}
	delete(e, "disabled")
	out, err := json.Marshal(e)
	if err != nil {
		return raw
	}
	return out
}

// checkServerCommand says why a stdio server's command would not start
// here ("" when it would): a path that is not an executable file, or a
// name not on $PATH. The gateway keeps retrying such a server, so the
// entry is written anyway (the gateway's $PATH may differ) with a
// warning.
func (m *Main) checkServerCommand(name, command string) string {
	if strings.ContainsRune(command, '/') || strings.ContainsRune(command, filepath.Separator) {
		st, err := os.Stat(command)
		switch {
		case err != nil:
			return fmt.Sprintf("server %s: %s does not exist here; the gateway will keep failing to start it until it does (capbroker server add %s --replace -- COMMAND fixes the entry)", name, command, name)
		case st.IsDir() || (runtime.GOOS != "windows" && st.Mode().Perm()&0o111 == 0):
			return fmt.Sprintf("server %s: %s is not an executable file; the gateway will keep failing to start it until it is (capbroker server add %s --replace -- COMMAND fixes the entry)", name, command, name)
		}
		if !filepath.IsAbs(command) {
			return fmt.Sprintf("server %s: %s is a relative path, resolved from the gateway's working folder, not this one; give its absolute path", name, command)
		}
		return ""
	}
	if _, err := lookPath(command, m.Getenv("PATH")); err != nil {
		return fmt.Sprintf("server %s: %s is not on $PATH here; the gateway will keep failing to start it until it is (install it, or give its absolute path: capbroker server add %s --replace -- /path/to/%s ...)", name, command, name, command)
	}
	return ""
}
