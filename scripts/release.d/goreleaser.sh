# shellcheck shell=bash
# Installs GoReleaser v2.15.1 (from the Go module proxy, built with the Go
# toolchain: about 10 minutes of CPU the first time) into
# $CAPBROKER_DEPS/bin, for the release job: "scripts/release-check.sh
# --full" builds the six archives of .goreleaser.yaml with it.
# scripts/test-all.sh does not need it: its release check builds this
# machine's archive with go build as .goreleaser.yaml says
# (release_test.go). A second run with it in place does nothing.
#
#   CAPBROKER_DEPS=.deps bash scripts/release.d/goreleaser.sh

_capbroker_goreleaser() {
	local root
	root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
	local deps="${CAPBROKER_DEPS:-$root/.deps}" want=v2.15.1
	if [ -x "$deps/bin/goreleaser" ] && [ "$(cat "$deps/bin/.goreleaser.version" 2>/dev/null)" = "$want" ]; then
		echo "goreleaser: $want already installed in $deps/bin"
		return 0
	fi
	echo "goreleaser: installing $want into $deps/bin (compiles it: several minutes the first time)"
	mkdir -p "$deps/bin"
	GOBIN="$deps/bin" go install "github.com/goreleaser/goreleaser/v2@$want" || return 1
	echo "$want" >"$deps/bin/.goreleaser.version"
}
_capbroker_goreleaser
