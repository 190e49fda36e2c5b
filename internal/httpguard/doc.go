// Package httpguard keeps web pages a user visits away from capbroker's
// HTTP faces on that user's machine: `capbroker serve` (package httpapi)
// and the gateway's streamable HTTP transport, with its /status and
// /metrics.
//
// A [Guard] wraps a handler and refuses, with 403 and a message that says
// what to configure:
//
//   - a Host header that names neither an IP address, "localhost" or a
//     name under ".localhost", nor one of [Options.Hosts]. This stops DNS
//     rebinding: a page at attacker.example whose name then resolves to
//     127.0.0.1 is same-origin with the server in the browser's eyes, but
//     its requests still say "Host: attacker.example". (An IP address in
//     Host cannot be rebound: the page's origin is then the server's own.)
//   - a request from a browser page of another origin: a state-changing
//     request (POST, PUT, PATCH, DELETE) refused by
//     [http.CrossOriginProtection] (Sec-Fetch-Site, else Origin against
//     Host), and a request of any method whose Origin header names
//     another origin than the Host's, unless listed in [Options.Origins].
//
// Requests without Origin or Sec-Fetch-Site (curl, SDKs, MCP clients) pass
// the origin checks: they are not made by a page. Bearer tokens stay the
// faces' own concern; the guard runs before them, so a refused request
// learns nothing of the token.
package httpguard
