// Package trust decides whether an MCP server defined in a project (a
// cloned repository's ./.mcp.json, ./.vscode/mcp.json, ./.cursor/mcp.json,
// or what its capbroker.yaml names) may be started.
//
// Opening a folder must not run its code: Claude Code asks before it
// starts a project's servers, and capbroker does too. A project server is
// approved when
//
//   - Claude Code approved it for that project in ~/.claude.json:
//     projects[dir].enabledMcpjsonServers names it, or
//     projects[dir].enableAllProjectMcpServers is true (for servers of
//     dir/.mcp.json, the only file Claude Code reads); a name in
//     disabledMcpjsonServers is refused whatever else says;
//   - or "capbroker approve --servers" approved it: [Store] keeps, in
//     capbroker's data directory (servers-approved.json), the file, the
//     name and a digest of the definition as written, so a definition
//     changed since is not approved any more.
//
// [Policy.Check] is what discovery's Options.Trust calls. The store is
// written to a temporary file that is renamed over the old one, so an
// interrupted approval leaves the old file or the new one.
package trust
