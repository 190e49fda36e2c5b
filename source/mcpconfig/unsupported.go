package mcpconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/capbroker/capbroker/internal/safefile"
	"github.com/capbroker/capbroker/source/internal/jsonc"
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

// Unsupported looks for the MCP client configs capbroker cannot read —
// Codex's ~/.codex/config.toml ($CODEX_HOME/config.toml) with
// [mcp_servers], and Zed's settings.json with "context_servers"
// ($XDG_CONFIG_HOME/zed, ~/.config/zed; %APPDATA%\Zed on Windows) — and
// returns one Problem per file found, naming the format. Nothing found
// gives nil. getenv may be nil.
func Unsupported(home string, getenv func(string) string) []Problem {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	var out []Problem
	codex := getenv("CODEX_HOME")
	if codex == "" && home != "" {
		codex = filepath.Join(home, ".codex")
	}
	if codex != "" {
		p := filepath.Join(codex, "config.toml")
		if data, err := safefile.ReadFile(p, safefile.MaxConfig); err == nil && bytes.Contains(data, []byte("[mcp_servers")) {
			out = append(out, Problem{Path: p, Reason: ErrCodexTOML.Error() + "; its servers are not fronted"})
		}
	}
	var zed []string
	if x := getenv("XDG_CONFIG_HOME"); x != "" {
		zed = append(zed, filepath.Join(x, "zed", "settings.json"))
	}
	if home != "" {
		zed = append(zed, filepath.Join(home, ".config", "zed", "settings.json"))
	}
	if a := getenv("APPDATA"); a != "" {
		zed = append(zed, filepath.Join(a, "Zed", "settings.json"))
	}
	for _, p := range zed {
		data, err := safefile.ReadFile(p, safefile.MaxConfig)
		if errors.Is(err, os.ErrNotExist) || err != nil {
			continue
		}
		var top map[string]json.RawMessage
		if _, err := jsonc.Unmarshal(data, &top); err != nil {
			continue
		}
		if cs, ok := top["context_servers"]; ok && len(bytes.TrimSpace(cs)) > 2 {
			out = append(out, Problem{Path: p, Reason: ErrZed.Error() + "; its servers are not fronted"})
		}
		break // the first settings file found is Zed's
	}
	return out
}
