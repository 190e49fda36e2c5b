// Package mcp lists the tools of MCP servers and turns each into a card,
// using the official Go SDK client.
//
// # Connecting
//
// [List] connects to one server described by an [mcpconfig.Server]: a
// stdio server is started as a child process (its own process group,
// killed when the deadline passes), a remote one is reached over
// streamable HTTP or legacy SSE with the configured headers
// ([RemoteTransport], which the gateway shares). Tools the config's
// includeTools/excludeTools/disabledTools leave out get no card. It initializes the
// session, lists every tool following pagination cursors, and closes the
// session. The whole exchange is bounded by [Options.Timeout], so a server
// that hangs costs at most that long, and one that crashes is reported
// with the last lines it wrote to stderr. A remote server that refuses
// the requests as unauthorized (401, or 403 with a challenge) gives an
// error wrapping [ErrNeedsAuth] that says whether it wants OAuth and what
// to do ([AuthWatch]): run capbroker login, which is [Login] — OAuth
// authorization code with PKCE and dynamic client registration through the
// go-sdk's auth.AuthorizationCodeHandler, the redirect received on a
// 127.0.0.1 listener. Its token is kept in a [TokenStore] (0600, for that
// server name and URL only) and sent by [List] when [Options.Tokens] is
// set, refreshed when expired and stored again. A stdio server
// gets only mcpconfig.SafeEnv and what its config names
// ([Options.InheritEnv] passes all), and errors show the config's ${VAR}
// values as ${VAR}.
//
// # Cards
//
// Each tool becomes a [card.KindTool] card named server__tool (see
// [card.Namespaced]) with OriginalName set to the tool's own name, the
// name the server must be called with. The input schema and annotations
// are kept as the server sent them (re-encoded as JSON), Source is the
// server name, Path the config file, and Meta records the server,
// transport and the tool's title. Risk comes from the annotations, else
// from the name.
package mcp
