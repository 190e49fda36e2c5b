package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/capbroker/capbroker/source"
	srcmcp "github.com/capbroker/capbroker/source/mcp"
	"github.com/capbroker/capbroker/source/mcpconfig"
)

// tokenStore is where capbroker login keeps OAuth tokens: the data
// directory's oauth folder. Without a data directory there is none.
func (m *Main) tokenStore() *srcmcp.TokenStore {
	dir, err := m.dataDir()
	if err != nil {
		return nil
	}
	return &srcmcp.TokenStore{Dir: filepath.Join(dir, "oauth")}
}

func (m *Main) newLoginCmd() *cobra.Command {
	var timeout time.Duration
	var configs []string
	var yamlPath string
	cmd := &cobra.Command{
		Use: "login SERVER [--mcp-config FILE]...",
		Example: `  capbroker login linear
  capbroker login notion --mcp-config .mcp.json --login-timeout 10m`,
		Short: "Sign in to a remote MCP server with OAuth and store its token",
		Long: `login signs in to a remote MCP server (streamable HTTP) that asks for OAuth:
it registers capbroker with the server's authorization server, prints the
authorization URL to open in a browser, waits for the browser to come back
to a listener on 127.0.0.1, and stores the token (0600) in capbroker's data
directory. Discovery and the gateway then send it to that server, refreshing
it when it expires. SERVER is looked up where the gateway looks (--mcp-config
FILE and --config, as for the gateway).`,
		Args: exactArgs(1, "the name of one MCP server"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			var up *upstreams
			var err error
			if len(configs) > 0 {
				up, err = m.explicitUpstreams(ctx, configs, yamlPath)
			} else {
				up, err = m.plannedUpstreams(ctx, yamlPath)
			}
			if err != nil {
				return err
			}
			var names []string
			for _, s := range up.servers {
				if s.URL == "" {
					continue
				}
				names = append(names, s.Name)
				if s.Name != args[0] {
					continue
				}
				st := m.tokenStore()
				if st == nil {
					return fmt.Errorf("capbroker login %s: no data directory to store the token in: set XDG_DATA_HOME or HOME", s.Name)
				}
				return srcmcp.Login(ctx, mcpconfig.Server{Name: s.Name, Transport: s.Transport(), URL: s.URL, Headers: s.Headers},
					st, &srcmcp.LoginOptions{Out: m.Stdout, Timeout: timeout})
			}
			slices.Sort(names)
			list := "none"
			if len(names) > 0 {
				list = strings.Join(names, ", ")
			}
			return fmt.Errorf("capbroker login: no remote MCP server named %q in the configs capbroker reads (remote servers: %s)", args[0], list)
		},
	}
	cmd.Flags().DurationVar(&timeout, "login-timeout", 5*time.Minute, "how long to wait for the sign-in in the browser")
	alias(cmd.Flags(), "timeout", "login-timeout") // --timeout is --start-timeout's former name elsewhere
	cmd.Flags().StringArrayVar(&configs, "mcp-config", nil, "MCP servers file to find SERVER in (as for the gateway); repeatable; replaces the default places")
	cmd.Flags().StringVar(&yamlPath, "config", "", "capbroker config file (default ./"+source.ConfigName+" when present): mcp_configs")
	return cmd
}
