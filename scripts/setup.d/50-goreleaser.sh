# shellcheck shell=bash
# Installs GoReleaser v2.15.1 (from the Go module proxy, built with the Go
# toolchain) into $CAPBROKER_DEPS/bin, for the release snapshot that
# scripts/test-all.sh builds and checks (.goreleaser.yaml). A second run
# with it in place does nothing. Sourced by scripts/test-all.sh; also runs
# on its own:
#
#   CAPBROKER_DEPS=.deps bash scripts/setup.d/50-goreleaser.sh

_capbroker_goreleaser() {
	local root
	root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
	local deps="${CAPBROKER_DEPS:-$root/.deps}" want=v2.15.1
	if [ -x "$deps/bin/goreleaser" ] && [ "$(cat "$deps/bin/.goreleaser.version" 2>/dev/null)" = "$want" ]; then
		echo "50-goreleaser: goreleaser $want already installed in $deps/bin"
		return 0
	fi
	echo "50-goreleaser: installing goreleaser $want into $deps/bin (compiles it: several minutes the first time)"
	mkdir -p "$deps/bin"
	GOBIN="$deps/bin" go install "github.com/goreleaser/goreleaser/v2@$want" || return 1
	echo "$want" >"$deps/bin/.goreleaser.version"
}
_capbroker_goreleaser
