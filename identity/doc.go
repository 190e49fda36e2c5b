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
//	      always: [github__get_pull_request]  # pinned in its sessions' lists
//	  - name: reviewer
//	    token_sha256: 60303ae22b998861bce3b28f33eec1be758a213c86c93c076dbe9f558c11c752
//	    profile: review     # a named profile (see below)
//
// The list alone, without "identities:", is read the same (what
// "capbroker identity new NAME >> FILE" leaves in a new file).
// "capbroker identity new NAME" makes a token and prints it once with the
// entry to add. Tokens are random (24 bytes) so one SHA-256 suffices;
// [Set.Lookup] compares digests in constant time. [Load] refuses a file
// with a bad name, a digest that is not 64 hex digits, two identities of
// one name or one digest, or an unknown field, saying which entry.
//
// # Named profiles
//
// [Profiles] are profiles defined once for every client, by name, in a
// profiles file ({"profiles": {"review": {"servers": [...], "tools":
// [...], "deny": [...], "always": [...]}}}, JSON with comments;
// "capbroker profile" edits it): a client's gateway ("gateway --profile
// NAME"), an identity ("profile: NAME") or a project's capbroker.yaml
// chooses one. [ParseProfiles] refuses a bad name, an unknown key or a
// bad pattern, naming the file and the profile; [Profiles.Lookup] says
// where an unknown name was named and which profiles there are.
package identity
