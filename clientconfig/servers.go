package clientconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/tailscale/hujson"

	"github.com/capbroker/capbroker/internal/safefile"
	"github.com/capbroker/capbroker/source/mcpconfig"
)

// ClaudeServers reads Claude Code's ~/.claude.json at path (see
// [ClaudeJSON]): the servers of the project in workDir (its "local" scope,
// under projects[workDir], [RankLocal]) and the user's (the top level,
// [RankUser]). probs are the servers left out and why, naming the file;
// state says what was found, for a list of the places looked at ("not
// found", "2 user servers, 1 for this project"). A project's servers carry
// no line: they are parsed from an extract of the file.
func ClaudeServers(path, workDir string, opts *mcpconfig.Options) (local, user []mcpconfig.Server, probs []mcpconfig.Problem, state string) {
	data, err := safefile.ReadFile(path, safefile.MaxConfig)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil, "not found"
	}
	if err != nil {
		return nil, nil, nil, err.Error()
	}
	var top struct {
		MCPServers json.RawMessage `json:"mcpServers"`
		Projects   map[string]struct {
			MCPServers json.RawMessage `json:"mcpServers"`
		} `json:"projects"`
	}
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, nil, nil, "not JSON: " + err.Error()
	}
	if len(top.MCPServers) > 0 {
		var ps []mcpconfig.Problem
		user, ps, _ = mcpconfig.Parse(path, data, opts)
		probs = append(probs, ps...)
	}
	if p, ok := top.Projects[workDir]; ok && len(p.MCPServers) > 0 {
		doc, _ := json.Marshal(map[string]json.RawMessage{"mcpServers": p.MCPServers})
		var ps []mcpconfig.Problem
		local, ps, _ = mcpconfig.Parse(path+" (project "+workDir+")", doc, opts)
		for i := range local {
			local[i].Line = 0 // a line of the extract, not of the file
		}
		for i := range ps {
			ps[i].Line = 0
		}
		probs = append(probs, ps...)
	}
	return local, user, probs, fmt.Sprintf("%d user servers, %d for this project", len(user), len(local))
}

// ClaudeProjectServers returns the names of the servers of each project
// in Claude Code's ~/.claude.json at path (its "local" scope, under
// projects[folder].mcpServers), by folder; nil when there are none or the
// file cannot be read. "capbroker client add" leaves them there.
func ClaudeProjectServers(path string) map[string][]string {
	data, err := safefile.ReadFile(path, safefile.MaxConfig)
	if err != nil {
		return nil
	}
	var top struct {
		Projects map[string]struct {
			MCPServers map[string]json.RawMessage `json:"mcpServers"`
		} `json:"projects"`
	}
	if json.Unmarshal(data, &top) != nil {
		return nil
	}
	var out map[string][]string
	for dir, p := range top.Projects {
		for name := range p.MCPServers {
			if out == nil {
				out = map[string][]string{}
			}
			out[dir] = append(out[dir], name)
		}
	}
	for _, names := range out {
		sort.Strings(names)
	}
	return out
}

// IsConfigName reports whether path is named like an MCP client config
// (.mcp.json, mcp.json, claude_desktop_config.json), for notes about
// configs found while scanning folders.
func IsConfigName(path string) bool {
	switch filepath.Base(path) {
	case ".mcp.json", "mcp.json", "claude_desktop_config.json":
		return true
	}
	return false
}

// Unsupported looks for the MCP client configs capbroker cannot read —
// Codex's ~/.codex/config.toml ($CODEX_HOME/config.toml) with
// [mcp_servers], and Zed's settings.json with "context_servers"
// ($XDG_CONFIG_HOME/zed, ~/.config/zed; %APPDATA%\Zed on Windows) — and
// returns one problem per file found, naming the format
// ([mcpconfig.ErrCodexTOML], [mcpconfig.ErrZed]). Nothing found gives nil.
func Unsupported(env Env) []mcpconfig.Problem {
	var out []mcpconfig.Problem
	codex := env.getenv("CODEX_HOME")
	if codex == "" && env.Home != "" {
		codex = filepath.Join(env.Home, ".codex")
	}
	if codex != "" {
		p := filepath.Join(codex, "config.toml")
		if data, err := safefile.ReadFile(p, safefile.MaxConfig); err == nil && bytes.Contains(data, []byte("[mcp_servers")) {
			out = append(out, mcpconfig.Problem{Path: p, Reason: mcpconfig.ErrCodexTOML.Error() + "; its servers are not fronted"})
		}
	}
	var zed []string
	if x := env.getenv("XDG_CONFIG_HOME"); x != "" {
		zed = append(zed, filepath.Join(x, "zed", "settings.json"))
	}
	if env.Home != "" {
		zed = append(zed, filepath.Join(env.Home, ".config", "zed", "settings.json"))
	}
	if a := env.AppData; a != "" {
		zed = append(zed, filepath.Join(a, "Zed", "settings.json"))
	}
	for _, p := range zed {
		data, err := safefile.ReadFile(p, safefile.MaxConfig)
		if err != nil {
			continue
		}
		std, err := hujson.Standardize(bytes.TrimPrefix(data, []byte("\ufeff")))
		var top map[string]json.RawMessage
		if err != nil || json.Unmarshal(std, &top) != nil {
			continue
		}
		if cs, ok := top["context_servers"]; ok && len(bytes.TrimSpace(cs)) > 2 {
			out = append(out, mcpconfig.Problem{Path: p, Reason: mcpconfig.ErrZed.Error() + "; its servers are not fronted"})
		}
		break // the first settings file found is Zed's
	}
	return out
}
