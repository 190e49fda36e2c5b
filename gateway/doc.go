// Package gateway is capbroker's MCP gateway: one MCP server in front of
// all of a user's MCP servers that exposes only what each session needs.
//
// A user puts "capbroker gateway" in their MCP client's configuration
// instead of their ten servers; the client sees a handful of tools instead
// of hundreds, and finds the rest on demand.
//
// # Upstreams
//
// [LoadConfig] reads the servers in the shape clients already use
// ({"mcpServers": {name: {command, args, env} | {url, headers}}});
// [FromMCPConfig] turns a definition read by package source/mcpconfig
// from any client's config (.mcp.json, ~/.claude.json, Claude Desktop, VS
// Code, Cursor) into a [ServerConfig]; the capbroker command uses it to
// front, by default, the servers discovery finds. [New]
// makes a [Gateway] over them and [Gateway.Start] connects to each one, over
// stdio (the command runs as a child process), streamable HTTP or legacy
// SSE (the transport package source/mcp builds for discovery too), in the
// background; tools a server's includeTools/excludeTools/disabledTools
// leave out are neither listed nor callable: the gateway never waits on the slowest upstream. It
// answers initialize at once and adds each upstream's tools as it comes
// (list_changed); a client's other requests wait for upstreams still
// starting only up to [Options.StartWait] after Start, and tools that come
// later are still reachable through find_capability (and call_capability)
// for clients that ignore list_changed. A session selected while
// upstreams were starting gets the floor of a late one added. Each
// upstream keeps one connection; when it drops (the process crashed, the
// server went away) it is restarted with exponential backoff
// ([Options.MinBackoff] to [Options.MaxBackoff]) and its tools come back.
// [Gateway.Reconcile] changes the upstreams while the gateway runs (the
// capbroker command calls it when the files it serves from change): added
// servers start, removed ones stop, changed ones restart, unchanged ones
// keep running, and sessions get list_changed.
// Every call has a timeout (per server, else [Options.CallTimeout]), so an
// upstream that hangs fails its own calls and never blocks the others. A
// call to an upstream being restarted waits for it at most 10 s; one that
// failed to start twice in a row fails calls at once, with why (its last
// error and stderr lines) and when it is tried next.
// An upstream's list_changed notifications re-list it and refresh every
// session.
//
// # Pinned digests
//
// With [Options.Pins] (an *index.Index, whose pins.json "capbroker
// discover" and "capbroker approve" share), each upstream tool's digest
// (name, description, input schema) is checked against the one approved:
// a tool seen for the first time is pinned (or held, with the index's
// HoldNew: a renamed tool is new), and one that changed since, at start
// or at run time through list_changed, is held back: not listed, not
// callable. So is every tool while the pins file is lost, corrupt or
// unreadable. The gateway polls the pins ([Options.PinsInterval]) and
// brings an approved tool back by itself, with list_changed.
//
// # Held is not absent
//
// A tool held back (irreversible, changed, new, pins lost) never reads as
// missing: find_capability lists the matching held tools under "held"
// with why and the flag or command that releases each, a call to one is
// answered with the same, and [Gateway.Held] (/status over HTTP) lists
// them all. Both reach the trace: a find's record names the held tools it
// matched (detail "held"), a refused call's has the outcome "held" and why;
// capbroker serve's explorer shows them per session.
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
//   - [ModeAuto] (default): the floor of the task family
//     ([Options.Family], coding by default: read_file, write_file...),
//     find_capability and call_capability(name, arguments); what
//     find_capability finds is added to the session's list (the SDK sends
//     notifications/tools/list_changed) and is callable through
//     call_capability too, so it works with every client: one that
//     refreshes on list_changed calls found tools by name, one that
//     ignores it calls them through call_capability;
//   - [ModeSearch]: the floor plus find_capability; what it finds is added
//     to the session with list_changed (no call_capability);
//   - [ModeCall]: the floor, find_capability and call_capability; the
//     list never changes (a stable prompt-cache prefix);
//   - [ModeAll]: every upstream tool, a faithful pass-through; tools/list
//     is answered from one list per catalog shared by every all-mode
//     session, and a tool is registered on a session's server only when
//     first called, so a session in front of a huge upstream costs no
//     work per tool (a first call of a tool may send a spurious
//     list_changed).
//
// # What an agent sees
//
// A session starts with the floor of its family (no MCP coding floor for
// a client with file tools of its own, see [Options.Client]; a floor tool
// whose description says DEPRECATED gives way to the sibling it names),
// the pins, the selection for [Options.Task] or its plan task, and the
// hatch. Pins are tools every session lists from the start: the tools of a
// server configured with "alwaysLoad": true (Claude Code's per-server
// setting), a tool whose _meta has [AlwaysLoadMeta] ("anthropic/alwaysLoad":
// true), and what [Options.Always] names (capbroker.yaml's always:, a
// server or a tool).
//
// find_capability answers the whole task: a task of several steps
// ([policy.Aspects]) gets two matches a step, best first, within
// [Options.FindBudget] tokens ([DefaultFindBudget], 800). The answer is
// compact JSON: per match its name, one line of description, its
// confidence, a short reason, and, for the confident matches (high,
// medium) alone, its input schema; matching held tools one line each;
// under "down", the servers the session could use that are not
// connected (their tools may be missing; absent when all are up, and a
// server outside the session's profiles is never named). Only confident
// matches join the session's list; the others stay callable by name.
// Past the budget, reasons go first, then the down servers' errors, then
// schemas, then low matches.
//
// # Calls by name
//
// A call to a tool the session was not given runs when the tool is
// allowed, directly (tools/call) or through call_capability, and the
// tool joins the session's list: the trace records it "called by name".
// Names resolve forgivingly (see [catalog.resolveName]): the gateway
// name, a client's prefix (mcp__capbroker__fs__read_file,
// mcp__fs__read_file, functions.x, Goose's capbroker__fs__read_file,
// capbroker:read_file), case and separator slips
// (FS.Read-File), the bare upstream name when one server has it. An
// ambiguous or misspelt name is refused with "did you mean" and the
// candidates; a name close to nothing, with find_capability; a name of a
// server the session could use that is not connected, with that and
// why. A session
// kept within profiles resolves loose and bare names among the tools
// they allow, suggests only those, and refuses a prefixed name of
// another tool as outside the profile. Arguments
// sent as a JSON string holding an object are read as that object; any
// other value, and arguments the server's validation refuses (with a
// JSON-RPC error, or with the error result the TypeScript and Python
// SDKs answer with), get an isError that shows the input schema to send.
//
// # Plan-aware sessions
//
// With [Options.PlanTasks], find_capability also takes "task": the agent
// names the plan task it is starting, and the session's list becomes that
// task's (its capabilities, floor and pins; the task before's tools stay
// callable by name); its finds then rank the task's named tools first.
// Every client can do that: it is a tool call, with no header, reconnect
// or list_changed to honour.
//
// With [Options.Router] set (capbroker gateway sets it when plugin agents
// are installed), auto, search and call modes also list route_capability next
// to find_capability: a task or a workflow phase in, the plugin agent it
// is delegated to (or the built-in default) and its announcement out. It
// is read-only.
//
// A session may start from a plan task instead ([Options.PlanTasks]): the
// [PlanTaskHeader] over HTTP, or [Options.PlanTask] over stdio, names the
// task, and the session starts with the task's capabilities (the plan's
// names first) plus the floor, so an orchestrator that plans runs each
// step's agent with the plan's tools.
//
// # Sessions
//
// The exposed set of each named session is kept in an [ExposedStore]
// ([Options.Store], in memory by default; [StoreSessions] keeps it in
// SQLite or PostgreSQL through package store) under the session's name
// (the Capbroker-Session header, the "session" query parameter, or the key
// given to [Gateway.ServeStdio]), so a client that reconnects under the
// same name, even to a restarted gateway, sees the same tools. A stored
// set only grows: each save adds to it, so saves landing out of order
// lose nothing. Clients connected under one name at the same time share
// what any of them finds: each find adds to the stored set, reads it back
// and gives it to every live session of the name (in auto and search
// modes with list_changed).
//
// A session without a name is anonymous: its tools live in the session
// alone and are never stored, since nobody could ask for them again; it
// is dropped from memory when its MCP session ends (the client deletes
// it, or it stays idle past [HTTPOptions.SessionTimeout]), and its trace
// records carry its MCP session ID. So memory and storage grow with the
// names clients use, not with connections.
//
// # A fleet of replicas
//
// With a session store that keeps MCP sessions ([StoreSessions] over
// SQLite or PostgreSQL: store.MCPSessions), [Gateway.Handler] writes each
// MCP session (its mode, name, plan task, identity, the client's
// initialize request, an anonymous session's tools) to the database
// before answering its initialize, and a replica that gets a request for
// an Mcp-Session-Id it does not hold rebuilds the session from there on
// first touch, replaying the client's initialize to the SDK under the
// same ID: any replica on one database serves any request of any
// session, behind a balancer with no affinity. What a session finds is
// stored before the find is answered and read back by other replicas'
// copies on tools/list and on a call of a tool they lack; a DELETE on any
// replica ends the session everywhere; sessions no replica touched for
// the idle timeout expire. With [StoreOptions.Durable] trace records are
// written before their call is answered. /healthz and /readyz serve
// balancers; [Gateway.Drain] and [Gateway.DrainFunc] ([ServeOptions.Drain])
// stop a replica without losing a call in flight.
//
// On PostgreSQL (store.MCPEvents) every server-sent event is stored
// before it is sent, so a stream cut on one replica resumes with
// Last-Event-ID on another ([HTTPOptions.StreamRetention],
// [HTTPOptions.StreamEvents] bound what is kept; a resumption from events
// no longer kept is refused with 400 and why).
//
// With a store that shares state (store.Shared) the replicas also share
// what is not a session, through the shared_state table, each write
// numbered and announced with LISTEN/NOTIFY: approvals of pinned digests
// ([SharedPinner], an *index.Index: an approval on one replica releases
// the tool on all within a second; a pin taken at first sight never
// replaces an approval), readings of what use teaches (one replica's
// reading makes the others read), heartbeats, and what the caller shares
// ([Gateway.Share], [Gateway.OnShared]: the capbroker command shares the
// files it serves from). A replica reads what it has not seen at Start
// (before its upstreams list tools), on each announcement, after each
// reconnection of its listening connection, and every 30 s. See
// docs/fleet.md.
//
// # Identities
//
// [HTTPOptions.Identities] maps bearer tokens to identities (package
// identity): each has a session quota (counted in the database across a
// fleet), a request rate (on PostgreSQL one token bucket for the fleet,
// in the database, leased a tenth of a second's worth at a time) and a
// profile of the servers and tools it may see and call; a session
// refuses another identity's requests; traces and /metrics name the
// identity, never the token.
//
// # Profiles
//
// [Gateway.SetProfiles] sets the named profiles (package identity's
// Profiles: servers, tool patterns and pins) and those the gateway
// serves: the gateway's own ([Profiles.Serve]: "gateway --profile", a
// project's capbroker.yaml) keep tools outside them out of the catalog
// and pin theirs in every session; an identity's ("profile: NAME" or
// inline) and a request's ([ProfileHeader], ?profile=) keep one session
// within them too, and list their pins. Profiles only narrow. Edits apply
// while the gateway runs: the catalog is rebuilt, new pins join the
// lists, and sessions get list_changed.
//
// The catalog is rebuilt when an upstream's listing changes. Rebuilds may
// overlap; each is numbered when it starts, and an older one never
// replaces the catalog of a newer one. A session is registered before its
// first sync, and every sync reads the catalog in use then, so no session
// misses a rebuild or goes back to an older catalog.
//
// # Faithful proxying
//
// Arguments and results pass through untouched: every content type,
// structuredContent, isError, _meta. Resources, resource templates,
// subscriptions, prompts and completion are proxied to the server that
// offers them. Requests and notifications an upstream sends while a call
// runs (logging, progress, sampling, elicitation) go back to the client
// session that made the call, on that call's stream; progress tokens are
// rewritten per call and mapped back. Log and progress notifications are
// forwarded as the upstream's messages are read (inorder.go), so they
// reach the client in order and before the call's result; a log message
// sent while no call is in flight goes to every session, from a queue.
// MCP does not say which call a sampling or elicitation request (or a log
// message) belongs to, so while calls from two or more client sessions
// are in flight on one upstream the gateway refuses the request with an
// error that says so, and keeps the log message in its own log, rather
// than show one user's prompt or question to another. Cancelling a call
// cancels it
// upstream. Upstream JSON-RPC errors reach the client with their code; a
// failure of the upstream itself (timeout, crash, not connected) becomes a
// tool result with isError set and a message that says what happened.
//
// # Safety
//
// Irreversible tools (by card risk: MCP annotations, else the verb of the
// name) fit the client. For a client that asks its user before every tool
// call ([Clients]: claude-code, claude-desktop, vscode, cursor, named by
// [Options.Client], which "capbroker client add" writes as --client, or
// per HTTP session by [ClientHeader] or ?client=, which "client add
// --shared" writes in the URL; see clientkind.go), they pass through: the client's own prompt is the gate, and the gateway
// does not ask again. Elsewhere they are held back unless
// [Options.AllowIrreversible] or the server's allowIrreversible allows
// them; an allowed irreversible call asks the user through MCP elicitation
// when the client supports it, and otherwise follows
// [Options.ConfirmUnasked]. Every refusal names the flag or key that
// releases it. Over HTTP ([Gateway.Handler],
// [Listen]), an address without a host binds loopback, any other address
// needs a bearer token, and every path (/mcp, /status, /metrics) refuses a
// Host that is not localhost or an IP address (DNS rebinding) and browser
// pages of another origin ([HTTPOptions.AllowedHosts],
// [HTTPOptions.AllowedOrigins] widen that). [Serve] bounds slow bodies and
// idle connections ([ServeOptions]).
//
// # Ranking
//
// Selections (the session's start with [Options.Task]) and find_capability
// rank lexically, or, with [Options.Embedder] (capbroker gateway sets the
// built-in sentence encoder of package encoder, or an embeddings endpoint;
// CAPBROKER_RANKER=lexical leaves it unset), by meaning and words fused
// (package dense). Each catalog the gateway builds (at start, as upstreams
// arrive, on list_changed and approvals) reads its card vectors from
// [Options.EmbedCache] and embeds the cards it lacks in the background,
// ranking by words until they are ready; catalogs built while another is
// still embedding wait for its texts rather than embed them again. It never
// fails for want of meaning: a broken cache costs the caching only, an
// embedder that fails while embedding cards leaves the catalog lexical
// (and is tried again after [Options.RankRetry]), and a task that cannot be
// embedded is ranked by words. [Gateway.Ranking] (/status) says how it
// ranks and why not by meaning, Metrics count the fallbacks, and a find or
// selection ranked by words only says why in its event (Event.Ranking).
// Each find_capability match carries its short reason ("similarity 0.62").
//
// With [Options.Learn] (the session store), ranking learns from use
// (package learn): what sessions asked for before calling a tool, read in
// the background at Start and every [Options.LearnEvery], enters each
// catalog built after. The gateway's records carry what learning needs:
// the called tool's digest, every tool a find returned (matched), and,
// for sessions started without a task ([StoreOptions.NoTask]), that the
// record's task only names the gateway.
//
// # Observability
//
// [Metrics] exports Prometheus counters and latencies per upstream, at
// /metrics over HTTP. A [Tracer] ([Options.Trace]) receives every
// session's selection, resumption, finds, calls and end ([Event]: its
// client closed it or disconnected, it idled out, the gateway stopped)
// with the tokens of its exposed tools against the full catalog's. [StoreSessions]
// writes them as trace.Record rows of the session ("capbroker trace
// --session NAME"); [JSONLTracer] as JSON lines; [Tracers] sends to
// several.
package gateway
