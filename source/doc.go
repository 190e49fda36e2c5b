// Package source discovers an agent's capabilities wherever they live and
// turns them into cards: Claude Code plugins and marketplaces, Agent
// Skills, loose agents and commands, tool definition files, and the tools
// of MCP servers.
//
// # Discovering
//
// One call reads everything and merges it into a catalog:
//
//	opts := &source.Options{Roots: source.DefaultRoots(clientconfig.ClaudeDir(clientconfig.Env{Home: home, Getenv: os.Getenv}), wd)}
//	res, err := source.Discover(ctx, opts)
//	// res.Catalog: the merged cards; res.Report: sources, counts, skipped
//
// [Discover] fails only when ctx is done. Everything else that goes wrong
// (a file that cannot be parsed, a server that hangs) is left out and
// listed in [Report.Skipped] with its path and the reason, while the rest
// still loads. Repairs (a BOM removed, YAML read line by line) are listed
// in [Report.Warnings].
//
// # Where to look
//
// [Options.Roots] are scanned as whatever they hold:
//
//   - a folder is walked: every .claude-plugin/plugin.json makes a plugin,
//     every .claude-plugin/marketplace.json a marketplace (its local
//     entries without a plugin.json become plugins too; remote entries
//     are reported, not fetched), a folder with agents/ but no manifest a
//     plugin named after the folder, with a warning (one with only
//     commands/ is reported as skipped), every SKILL.md a skill, owned by the
//     plugin that lists it or the nearest plugin above it, else
//     standalone; .claude folders give loose agents and commands; an MCP
//     config at the top of the folder is connected; other .json, .yaml
//     and .jsonl files outside plugins and skills are read as tool files
//     when they hold tools with schemas, else counted in [Report.Ignored];
//   - a file is a SKILL.md, a plugin.json or marketplace.json (its plugin
//     folder is scanned), an MCP config (it has "mcpServers" or
//     "servers") or a tool file.
//
// [DefaultRoots] gives the places Claude Code uses: ./.claude and
// ./.mcp.json of the project, ~/.claude/{agents,commands,skills,plugins}
// of the user. A capbroker.yaml ([LoadConfig]) adds roots, tool files and
// MCP configs. Plugin MCP servers are counted, and connected only with
// [Options.PluginMCP].
//
// # Project trust
//
// Opening a folder must not run its code. MCP servers defined in the
// project — roots with [Root.Project] (DefaultRoots marks ./.mcp.json and
// ./.claude), [Options.ProjectMCPConfigs], and what a project's own
// capbroker.yaml names ([Config.Project]) — are planned only when
// [Options.Trust] approves them (package source/trust decides from
// Claude Code's approvals and capbroker's own); the others are listed in
// [Report.Unapproved] with their command line and the reason, and are
// neither started nor connected. Skills, agents, commands and tool files
// are read as text wherever they are.
//
// # Secrets and environment
//
// Errors of MCP servers show the values their config expanded from
// ${VAR}s as ${VAR} again (see mcpconfig.Server.Redact), in the report and
// so in the index. A stdio server gets only mcpconfig.SafeEnv and what its
// config names ("env", "inheritEnv"), unless [Options.InheritEnv].
//
// # Card names
//
// Plugin agents, commands and skills are named plugin:name (commands in
// subfolders plugin:ns:name); standalone ones keep their own name, with
// the root's scope as Source. MCP tools are server__tool with the tool's
// own name in OriginalName. Tool files keep the names they define. When
// an agent, a command and a skill of one plugin share a name, the agent
// keeps it and the others become name~command, name~skill. The catalog
// then namespaces names offered by two sources (see [card.NewCatalog]).
//
// # Sources and caching
//
// Discovery happens in two steps. [Plan] walks the roots and parses the
// small files that give a tree its shape (manifests, marketplaces, MCP
// configs) and returns one [Source] per plugin, marketplace, loose group,
// tool file and MCP server. Each source has a [Stamp] (its files' sizes
// and times, a digest of a server definition); a [Cache] given in
// [Options.Cache] returns the stored [Batch] of a source whose stamp still
// matches, so only changed sources are read again. The index package is
// that cache, and it also holds back MCP tools whose description or schema
// changed since they were approved ([Options.Hold]).
package source
