package clientconfig

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Client IDs, as "capbroker client add" takes them.
const (
	ClaudeCode    = "claude-code"
	ClaudeDesktop = "claude-desktop"
	VSCode        = "vscode"
	Cursor        = "cursor"
)

// Client is an MCP client application.
type Client struct {
	ID   string // claude-code, claude-desktop, vscode, cursor
	Name string // Claude Code, Claude Desktop, VS Code, Cursor
}

// Clients lists the clients capbroker can route, in the order
// "capbroker client list" prints them.
func Clients() []Client {
	return []Client{{ClaudeCode, "Claude Code"}, {ClaudeDesktop, "Claude Desktop"}, {VSCode, "VS Code"}, {Cursor, "Cursor"}}
}

// Lookup returns the client with this ID, or an error that lists them.
func Lookup(id string) (Client, error) {
	var ids []string
	for _, c := range Clients() {
		if c.ID == id {
			return c, nil
		}
		ids = append(ids, c.ID)
	}
	return Client{}, fmt.Errorf("unknown client %q (want one of %s)", id, strings.Join(ids, ", "))
}

// Env is where a client's files are: the user's home, the working folder
// (the project), %APPDATA% on Windows, the operating system (GOOS) and
// the environment ($CLAUDE_CONFIG_DIR, $XDG_CONFIG_HOME).
type Env struct {
	Home, WorkDir, AppData, GOOS string
	Getenv                       func(string) string
}

func (e Env) getenv(k string) string {
	if e.Getenv == nil {
		return ""
	}
	return e.Getenv(k)
}

// Rank orders server definitions of one name: the lower wins.
type Rank int

// Precedence of server definitions, most specific first, as Claude Code
// orders its scopes (local, project, user).
const (
	RankLocal   Rank = iota // ~/.claude.json, this project's entry
	RankProject             // files in the working folder
	RankNamed               // capbroker.yaml's mcp_configs and roots
	RankUser                // ~/.claude.json, user scope
	RankDesktop             // Claude Desktop
	RankEditor              // VS Code, Cursor user configs
)

// File is one configuration file a client reads MCP servers from.
type File struct {
	Client string // a client ID
	Label  string // "Claude Code (project)"
	Path   string
	Rank   Rank
	// Key is the object holding the servers: "mcpServers", or "servers"
	// for VS Code.
	Key string
	// Project is true for a file in the working folder.
	Project bool
}

// ClaudeDir is Claude Code's user folder (agents, commands, skills,
// plugins): $CLAUDE_CONFIG_DIR when set, as Claude Code reads it, else
// ~/.claude; "" when neither is known.
func ClaudeDir(env Env) string {
	if d := env.getenv("CLAUDE_CONFIG_DIR"); d != "" {
		return d
	}
	if env.Home == "" {
		return ""
	}
	return filepath.Join(env.Home, ".claude")
}

// ClaudeJSON is Claude Code's own file (user servers, each project's
// servers and approvals): $CLAUDE_CONFIG_DIR/.claude.json when that is
// set, else ~/.claude.json; "" when neither is known.
func ClaudeJSON(env Env) string {
	if d := env.getenv("CLAUDE_CONFIG_DIR"); d != "" {
		return filepath.Join(d, ".claude.json")
	}
	if env.Home == "" {
		return ""
	}
	return filepath.Join(env.Home, ".claude.json")
}

// appDirs returns Claude Desktop's and VS Code's user folders.
func appDirs(env Env) (desktop, code string) {
	switch env.GOOS {
	case "darwin":
		support := filepath.Join(env.Home, "Library", "Application Support")
		return filepath.Join(support, "Claude"), filepath.Join(support, "Code", "User")
	case "windows":
		appData := env.AppData
		if appData == "" {
			appData = filepath.Join(env.Home, "AppData", "Roaming")
		}
		return filepath.Join(appData, "Claude"), filepath.Join(appData, "Code", "User")
	}
	cfg := env.getenv("XDG_CONFIG_HOME")
	if cfg == "" {
		cfg = filepath.Join(env.Home, ".config")
	}
	return filepath.Join(cfg, "Claude"), filepath.Join(cfg, "Code", "User")
}

// Files lists the MCP client files the gateway reads by default besides
// ~/.claude.json (read separately: it holds two scopes): the project's
// files, then Claude Desktop's, VS Code's and Cursor's user files. With no
// home, only the project's.
func Files(env Env) []File {
	out := []File{
		{ClaudeCode, "Claude Code (project)", filepath.Join(env.WorkDir, ".mcp.json"), RankProject, "mcpServers", true},
		{VSCode, "VS Code (workspace)", filepath.Join(env.WorkDir, ".vscode", "mcp.json"), RankProject, "servers", true},
		{Cursor, "Cursor (project)", filepath.Join(env.WorkDir, ".cursor", "mcp.json"), RankProject, "mcpServers", true},
	}
	if env.Home == "" {
		return out
	}
	desktop, code := appDirs(env)
	return append(out,
		File{ClaudeDesktop, "Claude Desktop", filepath.Join(desktop, "claude_desktop_config.json"), RankDesktop, "mcpServers", false},
		File{VSCode, "VS Code (user)", filepath.Join(code, "mcp.json"), RankEditor, "servers", false},
		File{Cursor, "Cursor (user)", filepath.Join(env.Home, ".cursor", "mcp.json"), RankEditor, "mcpServers", false},
	)
}

// UserFile is the file of a client's user-wide servers: the one "capbroker
// client add" routes through the gateway.
func UserFile(id string, env Env) (File, error) {
	if _, err := Lookup(id); err != nil {
		return File{}, err
	}
	if env.Home == "" && !(id == ClaudeCode && env.getenv("CLAUDE_CONFIG_DIR") != "") {
		return File{}, fmt.Errorf("%s: no home folder ($HOME is not set)", id)
	}
	if id == ClaudeCode {
		return File{ClaudeCode, "Claude Code (user)", ClaudeJSON(env), RankUser, "mcpServers", false}, nil
	}
	for _, f := range Files(env) {
		if f.Client == id && !f.Project {
			return f, nil
		}
	}
	return File{}, fmt.Errorf("%s: no user file known", id)
}

// Installed reports whether the client seems installed for this user (its
// folder or file exists), and the path that says so or was looked for.
func Installed(id string, env Env) (bool, string) {
	var paths []string
	switch id {
	case ClaudeCode:
		paths = []string{ClaudeJSON(env), ClaudeDir(env)}
	case ClaudeDesktop, VSCode:
		desktop, code := appDirs(env)
		if id == VSCode {
			paths = []string{code}
		} else {
			paths = []string{desktop}
		}
	case Cursor:
		paths = []string{filepath.Join(env.Home, ".cursor")}
	}
	for _, p := range paths {
		if p == "" {
			continue
		}
		if _, err := os.Stat(p); err == nil {
			return true, p
		}
	}
	if len(paths) == 0 {
		return false, ""
	}
	return false, paths[0]
}

// ServersFile is where "capbroker client add" keeps a client's servers
// behind the gateway: <config>/capbroker/clients/<client>.json, <config>
// being $XDG_CONFIG_HOME or ~/.config (%APPDATA% on Windows).
func ServersFile(id string, env Env) string {
	dir := env.getenv("XDG_CONFIG_HOME")
	if dir == "" {
		if env.GOOS == "windows" && env.AppData != "" {
			dir = env.AppData
		} else {
			dir = filepath.Join(env.Home, ".config")
		}
	}
	return filepath.Join(dir, "capbroker", "clients", id+".json")
}
