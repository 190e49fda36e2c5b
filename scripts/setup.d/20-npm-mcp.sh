# Installs the reference MCP servers the discovery and gateway tests start
# over stdio and streamable HTTP, into "$CAPBROKER_DEPS/npm" (binaries end
# up in $CAPBROKER_DEPS/npm/node_modules/.bin: mcp-server-everything,
# mcp-server-filesystem, mcp-server-memory). Pinned versions; a second run
# with everything in place does nothing. Sourced by scripts/test-all.sh.
#
#   CAPBROKER_DEPS=.deps bash scripts/setup.d/20-npm-mcp.sh

_capbroker_npm_mcp() {
	local root
	root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
	# shellcheck source=../lib/npm.sh
	source "$root/scripts/lib/npm.sh"
	local deps="${CAPBROKER_DEPS:-$root/.deps}"
	capbroker_need_npm || return 1
	capbroker_npm_install "$deps/npm" \
		"@modelcontextprotocol/server-everything@2026.8.31" \
		"@modelcontextprotocol/server-filesystem@2026.8.31" \
		"@modelcontextprotocol/server-memory@2026.8.31"
}
_capbroker_npm_mcp
