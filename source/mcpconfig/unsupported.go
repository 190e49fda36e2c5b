package mcpconfig

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
)

// Formats of MCP client configs that capbroker does not read. The errors
// say what to do instead.
var (
	ErrCodexTOML = errors.New(`Codex's config.toml ([mcp_servers] tables in TOML) is not supported; ` +
		`copy the servers into a JSON file as {"mcpServers": {name: {"command", "args", "env"}}} and name it with --mcp-config or under mcp_configs in capbroker.yaml`)
	ErrZed = errors.New(`Zed's settings.json "context_servers" is not supported; ` +
		`copy the servers into a JSON file as {"mcpServers": {name: {"command", "args", "env"}}} and name it with --mcp-config or under mcp_configs in capbroker.yaml`)
)

// isCodexTOML reports whether a config is Codex's TOML: a .toml file, or
// text with an [mcp_servers.name] table.
func isCodexTOML(path string, data []byte) bool {
	if strings.EqualFold(filepath.Ext(path), ".toml") {
		return true
	}
	t := bytes.TrimSpace(data)
	return len(t) > 0 && t[0] != '{' && bytes.Contains(data, []byte("[mcp_servers"))
}
