# Installs the reference MCP servers the discovery tests start over stdio and
# streamable HTTP, into "$CAPBROKER_DEPS/npm" (binaries end up in
# $CAPBROKER_DEPS/npm/node_modules/.bin: mcp-server-everything,
# mcp-server-filesystem, mcp-server-memory). Pinned versions; a second run
# with everything in place does nothing. Sourced by scripts/test-all.sh.
#
#   CAPBROKER_DEPS=.deps bash scripts/setup.d/20-npm-mcp.sh

_capbroker_npm_mcp() {
	local deps="${CAPBROKER_DEPS:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/.deps}"
	local dir="$deps/npm"
	local pkgs=(
		"@modelcontextprotocol/server-everything@2026.8.31"
		"@modelcontextprotocol/server-filesystem@2026.8.31"
		"@modelcontextprotocol/server-memory@2026.8.31"
	)
	if ! command -v npm >/dev/null 2>&1; then
		if command -v apt-get >/dev/null 2>&1; then
			apt-get update -qq && apt-get install -y -qq nodejs npm
		else
			echo "20-npm-mcp: npm is missing and apt-get is not available" >&2
			return 1
		fi
	fi
	mkdir -p "$dir"
	local missing=()
	local p name want have
	for p in "${pkgs[@]}"; do
		name="${p%@*}"
		want="${p##*@}"
		have=""
		if [ -f "$dir/node_modules/$name/package.json" ]; then
			have=$(node -p "require('$dir/node_modules/$name/package.json').version" 2>/dev/null || true)
		fi
		[ "$have" = "$want" ] || missing+=("$p")
	done
	if [ ${#missing[@]} -eq 0 ]; then
		echo "20-npm-mcp: MCP servers already installed in $dir"
		return 0
	fi
	[ -f "$dir/package.json" ] || printf '{"name":"capbroker-test-deps","private":true}\n' >"$dir/package.json"
	echo "20-npm-mcp: installing ${missing[*]} into $dir"
	npm install --prefix "$dir" --no-audit --no-fund --save-exact "${missing[@]}"
}
_capbroker_npm_mcp
