// Package clientconfig knows the MCP clients capbroker fronts: which files
// each of them reads its MCP servers from, in which order they win, the
// shape of each file, and how to route a client through capbroker's
// gateway and back.
//
// # Clients and files
//
//   - claude-code: ~/.claude.json ($CLAUDE_CONFIG_DIR/.claude.json when that
//     is set): user servers at the top level ("mcpServers") and each
//     project's local servers under projects[path]; the project's
//     .mcp.json. Strict JSON.
//   - claude-desktop: claude_desktop_config.json in Claude's folder
//     (~/Library/Application Support/Claude on macOS, %APPDATA%\Claude on
//     Windows, ~/.config/Claude elsewhere); "mcpServers". Strict JSON.
//   - vscode: the user profile's mcp.json (Code/User beside Claude's
//     folder) and the workspace's .vscode/mcp.json; "servers", each with a
//     "type". JSON with comments.
//   - cursor: ~/.cursor/mcp.json and the project's .cursor/mcp.json;
//     "mcpServers".
//
// [Files] lists them, most specific first, with a [Rank] that says which
// definition of a server name wins: this project's entry in ~/.claude.json,
// then the project's files, then capbroker.yaml's, then the user files.
// [ClaudeServers] reads ~/.claude.json's two scopes; [IsConfigName] tells
// a client file by its name; [Unsupported] names the client configs
// capbroker cannot read (Codex's TOML, Zed's context_servers) where they
// are found. The servers inside every file are parsed by package
// source/mcpconfig, the one MCP config parser: discovery, the gateway and
// "capbroker client" all read client files through this package and that
// one.
//
// # Routing a client through the gateway
//
// [PlanAdd] moves the servers of a client's user file into a servers file
// of capbroker's own (one per client) and puts a single entry in their
// place that runs "capbroker gateway --mcp-config <that file>": the
// client then sees the gateway, and the gateway fronts the user's servers.
// Entries the gateway cannot front (a VS Code ${input:...} prompt) stay
// where they are, with a note. [PlanRemove] undoes it: the servers go
// back, the gateway entry goes. A plan is a set of whole-file changes that
// [Plan.Diff] shows and [Plan.Apply] writes, each file backed up first and
// replaced atomically; a plan that changes nothing (the client already
// routes through the gateway) writes nothing. A symbolic link is written
// through (it stays a link); a read-only file, or a file that defines a
// server name twice, is refused before anything is written. The servers
// file holds what the client's file held (tokens, keys): it is written
// 0600 in a 0700 folder, its servers in the client's order, and
// [PlanRemove] puts them back in that order. With [Gateway.URL] set
// ("client add --shared") the entry connects to one shared gateway over
// HTTP instead of starting one ([IsSharedGateway] tells it).
//
// # Managing the servers behind the gateway
//
// [Servers], [SetServer], [RemoveServer] and [SetServerField] read and
// edit a servers file in place ("capbroker server"): the order and every
// untouched byte stay, the file stays private. [Profiles], [SetProfile]
// and [RemoveProfile] do the same for the user's profiles file
// ([ProfilesFile], "capbroker profile"), one for every client.
//
// Strict JSON files keep their key order and are written indented by two
// spaces, as the clients write them; a VS Code file with comments keeps
// them (edited with github.com/tailscale/hujson).
package clientconfig
