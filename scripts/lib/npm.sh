# Shared by the setup.d scripts that install npm packages project-local.
# Source it; it defines two functions.

# capbroker_need_npm makes sure npm is on PATH (from Debian's packages when
# it is not).
capbroker_need_npm() {
	command -v npm >/dev/null 2>&1 && return 0
	if command -v apt-get >/dev/null 2>&1; then
		apt-get -o DPkg::Lock::Timeout=600 update -qq &&
			DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq nodejs npm
		return
	fi
	echo "npm is missing and apt-get is not available" >&2
	return 1
}

# capbroker_npm_install DIR PKG@VERSION...: npm-installs into DIR the
# packages not already there at their pinned version; a second run with
# everything in place does nothing.
capbroker_npm_install() {
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
		echo "npm packages already installed in $dir: $*"
		return 0
	fi
	[ -f "$dir/package.json" ] || printf '{"name":"capbroker-test-deps","private":true}\n' >"$dir/package.json"
	echo "installing ${missing[*]} into $dir"
	npm install --prefix "$dir" --no-audit --no-fund --save-exact "${missing[@]}"
}
