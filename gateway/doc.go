// Package gateway is capbroker's MCP gateway: one MCP server in front of
// all of a user's MCP servers that exposes only what each session needs.
//
// A user puts "capbroker gateway --config servers.json" in their MCP
// client's configuration instead of their ten servers; the client sees a
// handful of tools instead of hundreds, and finds the rest on demand.
//
// # Upstreams
//
// [LoadConfig] reads the servers in the shape clients already use
// ({"mcpServers": {name: {command, args, env} | {url, headers}}}). [New]
// makes a [Gateway] over them and [Gateway.Start] connects to each one, over
// stdio (the command runs as a child process) or streamable HTTP. Each
// upstream keeps one connection; when it drops (the process crashed, the
// server went away) it is restarted with exponential backoff
// ([Options.MinBackoff] to [Options.MaxBackoff]) and its tools come back.
// Every call has a timeout (per server, else [Options.CallTimeout]), so an
// upstream that hangs fails its own calls and never blocks the others.
// An upstream's list_changed notifications re-list it and refresh every
// session.
//
// Tool and prompt names are namespaced server__tool ([NamespaceAlways]) or
// only where two servers offer the same name ([NamespaceCollisions]);
// collisions are resolved deterministically by card.NewCatalog and
// reported by [Gateway.Warnings].
//
// # Modes
//
// Each client session gets its own MCP server holding exactly its tools:
//
//   - [ModeAll]: every upstream tool, a faithful pass-through;
//   - [ModeSearch] (default): the floor of the task family
//     ([Options.Family], coding by default: read_file, write_file...) plus
//     find_capability; what it finds is added to the session, and the SDK
//     sends notifications/tools/list_changed;
//   - [ModeCall]: the floor, find_capability and call_capability(name,
//     arguments), for clients that ignore list_changed.
//
// A call to a tool the session was not given is answered with an error
// that names find_capability. The exposed set of each session is kept in
// an [ExposedStore] ([Options.Store], in memory by default) under the
// session's name (the Capbroker-Session header, the "session" query
// parameter, or --session for stdio), so a client that reconnects under the
// same name sees the same tools.
//
// # Faithful proxying
//
// Arguments and results pass through untouched: every content type,
// structuredContent, isError, _meta. Resources, resource templates,
// subscriptions, prompts and completion are proxied to the server that
// offers them. Requests and notifications an upstream sends while a call
// runs (logging, progress, sampling, elicitation) go back to the client
// session that made the call, on that call's stream; progress tokens are
// rewritten per call and mapped back. Cancelling a call cancels it
// upstream. Upstream JSON-RPC errors reach the client with their code; a
// failure of the upstream itself (timeout, crash, not connected) becomes a
// tool result with isError set and a message that says what happened.
//
// # Safety
//
// Irreversible tools (by card risk: MCP annotations, else the verb of the
// name) are held back unless [Options.AllowIrreversible] or the server's
// allowIrreversible allows them; an allowed irreversible call asks the user
// through MCP elicitation when the client supports it, and otherwise
// follows [Options.ConfirmUnasked]. Over HTTP ([Gateway.Handler],
// [Listen]), an address without a host binds loopback, any other address
// needs a bearer token, the SDK's DNS-rebinding protection stays on and
// cross-origin browser requests are refused.
//
// # Observability
//
// [Metrics] exports Prometheus counters and latencies per upstream, at
// /metrics over HTTP. A [Tracer] ([Options.Trace]) receives every
// session's selection, finds and calls with token counts.
package gateway
