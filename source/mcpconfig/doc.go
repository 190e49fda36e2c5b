// Package mcpconfig reads the MCP server definitions users already keep
// for their clients, so capbroker connects to the same servers.
//
// # Formats
//
// Three shapes are recognized, by their top-level key:
//
//   - "mcpServers": Claude Code's .mcp.json, a plugin's .mcp.json, Claude
//     Desktop's claude_desktop_config.json, ~/.claude.json (its top-level
//     servers), Cursor and most other clients.
//   - "servers": VS Code's mcp.json (.vscode/mcp.json or the user
//     profile), JSON with comments and trailing commas.
//   - "mcp": {"servers": ...}: the same as nested in VS Code's settings.json.
//
// Each entry is a stdio server (command, args, env, cwd) or a remote one
// (url, headers) over streamable HTTP ("type": "http") or the older SSE
// transport ("type": "sse"). Without a type, a command means stdio and a
// url means HTTP.
//
// # Other clients' keys
//
// "envFile" (VS Code, Cursor) adds KEY=VALUE lines from a file, relative
// to the config file, under "env"; its values are [Server.Secrets].
// "includeTools"/"excludeTools" (Gemini CLI) and "disabledTools"
// (Windsurf) become [Server.IncludeTools] and [Server.ExcludeTools]
// ([Server.ToolAllowed]). "httpUrl" (Gemini) and "serverUrl" (Windsurf)
// are URLs, "transportType" (Cline) a type. A numeric "timeout" is seconds
// in Cline's and Roo Code's configs, milliseconds elsewhere
// ([Server.Timeout]). Codex's TOML and Zed's "context_servers" are not
// read: [Parse] fails with [ErrCodexTOML] or [ErrZed], and clientconfig.Unsupported
// names such files found in their usual places.
//
// # Variables
//
// Strings are expanded the way the clients do: ${VAR} and ${VAR:-default}
// (Claude Code), ${env:VAR}, ${workspaceFolder} and ${userHome} (VS Code),
// and ${CLAUDE_PLUGIN_ROOT} for plugin configs, from [Options.Getenv] and
// [Options.Vars]. ${input:id} values are prompted for by VS Code; a server
// that needs one is reported and left out.
//
// Values that came from the environment are kept in [Server.Secrets]:
// [Server.Redact] and [Server.CommandLine] show them as ${VAR} again, so
// statuses, logs and errors never carry an API key that a config put in
// a URL or an argument. [Environ] builds a stdio server's environment:
// [SafeEnv] (PATH, HOME, locale, TMPDIR...) plus the server's own "env",
// plus what its "inheritEnv" names (true: everything).
package mcpconfig
