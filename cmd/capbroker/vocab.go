package main

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/capbroker/capbroker/source/mcpconfig"
)

// alias registers old as a hidden name of the flag named name: it sets
// the same value, and using it prints once, on stderr, that it is
// deprecated and what to use instead. The CLI's vocabulary: --config is
// capbroker.yaml, --mcp-config an MCP servers file, --tools tool files,
// --addr an HTTP listen address, --start-timeout and --call-timeout the
// two MCP time limits, $CAPBROKER_TOKEN the bearer token.
func alias(fs *pflag.FlagSet, old, name string) {
	f := fs.Lookup(name)
	if f == nil {
		panic("alias: no flag " + name)
	}
	fs.AddFlag(&pflag.Flag{Name: old, Usage: aliasUsage + name, Value: f.Value, DefValue: f.DefValue, NoOptDefVal: f.NoOptDefVal,
		Hidden: true, Annotations: map[string][]string{aliasOf: {name}}})
}

const (
	aliasOf    = "capbroker/alias-of"
	aliasUsage = "deprecated: use --"
)

// warnAliases warns once about each deprecated flag name the command line
// used (see [alias]).
func (m *Main) warnAliases(cmd *cobra.Command) {
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if to, ok := f.Annotations[aliasOf]; ok {
			m.warnOnce("--"+f.Name, fmt.Sprintf("warning: --%s is deprecated; use --%s (%s)", f.Name, to[0], cmd.CommandPath()))
		}
	})
}

// envToken is the bearer token of the HTTP faces from the environment:
// $CAPBROKER_TOKEN, else the gateway's former $CAPBROKER_GATEWAY_TOKEN
// (with a warning).
func (m *Main) envToken() string {
	if t := m.Getenv("CAPBROKER_TOKEN"); t != "" {
		return t
	}
	if t := m.Getenv("CAPBROKER_GATEWAY_TOKEN"); t != "" {
		m.warnOnce("CAPBROKER_GATEWAY_TOKEN", "warning: $CAPBROKER_GATEWAY_TOKEN is deprecated; set $CAPBROKER_TOKEN (serve and gateway read the same variable)")
		return t
	}
	return ""
}

// warnOnce prints msg on stderr the first time key is warned about.
func (m *Main) warnOnce(key, msg string) {
	if _, dup := m.warned.LoadOrStore(key, true); !dup {
		fmt.Fprintln(m.Stderr, msg)
	}
}

// gatewayConfigFlags sorts the gateway's --config values: --config names
// capbroker.yaml, as in every command; a file given there that is an MCP
// servers file (its top level has mcpServers, servers or mcp), as the
// gateway's --config used to take, is read as --mcp-config, with a
// warning.
func (m *Main) gatewayConfigFlags(mcpConfigs []string, yamlPath string) ([]string, string, error) {
	if yamlPath == "" || !isServersFile(yamlPath) {
		return mcpConfigs, yamlPath, nil
	}
	m.warnOnce("gateway --config", fmt.Sprintf("warning: gateway --config now names capbroker.yaml; %s is an MCP servers file, read as --mcp-config %s (use that flag)", yamlPath, yamlPath))
	return append(mcpConfigs, yamlPath), "", nil
}

// isServersFile reports whether path is an MCP servers file, as the one
// MCP config parser reads them (mcpServers, servers or mcp.servers, JSON
// with comments too).
func isServersFile(path string) bool {
	_, _, err := mcpconfig.Load(path, nil)
	return err == nil
}
