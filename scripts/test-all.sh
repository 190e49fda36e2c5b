#!/usr/bin/env bash
# Installs everything the tests need on a fresh Debian machine (Node packages
# into .deps/, PostgreSQL, Chromium), starts the services, and runs every
# test. Safe to run again: each step skips what is already there.
#
#   scripts/test-all.sh            # install + go vet + go test ./...
#   scripts/test-all.sh -run Foo   # extra arguments go to go test
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
export CAPBROKER_DEPS="$ROOT/.deps"
mkdir -p "$CAPBROKER_DEPS"

# Each setup.d script installs and starts one component and may export
# variables the tests read (CAPBROKER_TEST_POSTGRES, ...). They run in name order.
for f in "$ROOT"/scripts/setup.d/*.sh; do
	[ -e "$f" ] || continue
	echo "== setup: $(basename "$f")"
	# shellcheck source=/dev/null
	source "$f"
done

echo "== go vet"
go vet ./...
echo "== go test"
go test -count=1 -timeout 40m "$@" ./...
go test -race -count=1 -timeout 20m "$@" ./session/... ./store/...
# The ranker's pooled per-search memory, under the race detector.
go test -race -count=1 -timeout 10m -run 'Concurrent' "$@" ./rank
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
# The release archives (GoReleaser snapshot) and, where Docker runs, the image.
echo "== release snapshot"
scripts/release-check.sh
