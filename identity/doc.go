// Package identity maps bearer tokens to the identities a gateway serves:
// who a request is, and what that identity may do.
//
// An identities file (YAML) lists each identity with the SHA-256 of its
// token, never the token itself, so the file (a Kubernetes Secret, say)
// leaks no credential:
//
//	identities:
//	  - name: ci-bot
//	    token_sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08
//	    sessions: 20        # most MCP sessions open at once (0: the gateway's bound)
//	    rate: 10            # requests per second, sustained (0: unbounded)
//	    burst: 20           # requests at once above the rate (default: rate)
//	    profile:
//	      servers: [github] # only these upstreams' tools (empty: every server)
//	      tools: ["github__*"]   # only tools matching one of these (empty: every tool)
//	      deny: ["*delete*"]     # never a tool matching one of these
//
// "capbroker identity new NAME" makes a token and prints it once with the
// entry to add. Tokens are random (24 bytes) so one SHA-256 suffices;
// [Set.Lookup] compares digests in constant time. [Load] refuses a file
// with a bad name, a digest that is not 64 hex digits, two identities of
// one name or one digest, or an unknown field, saying which entry.
package identity
