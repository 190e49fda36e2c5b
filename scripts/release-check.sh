#!/usr/bin/env bash
# Builds the release archives as a snapshot (nothing is published) and checks
# them: goreleaser release --snapshot --clean with .goreleaser.yaml, then one
# archive per platform (linux, darwin, windows x amd64, arm64), checksums.txt
# that verifies, and a linux/amd64 binary that names the commit it was built
# from. Then the container image, where a Docker daemon runs. Run by
# scripts/test-all.sh after the tests; GoReleaser comes from
# scripts/setup.d/50-goreleaser.sh.
#
#   scripts/release-check.sh
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
DEPS=${CAPBROKER_DEPS:-$ROOT/.deps}
GORELEASER=$DEPS/bin/goreleaser
[ -x "$GORELEASER" ] || GORELEASER=$(command -v goreleaser || true)
if [ -z "$GORELEASER" ]; then
	echo "release-check: goreleaser is missing; install it with scripts/setup.d/50-goreleaser.sh" >&2
	exit 1
fi

# GoReleaser reads the commit from git, and gives up on the whole git state
# (the binary then names commit "none") where no remote is configured, as in
# a repository made with git init or a worktree of one. There it builds from
# a local clone of HEAD, whose origin is this checkout.
if [ -z "$(git remote)" ]; then
	clone=$(mktemp -d)
	trap 'rm -rf "$clone"' EXIT
	git clone --quiet --no-hardlinks "$ROOT" "$clone/capbroker"
	git -C "$clone/capbroker" checkout --quiet "$(git rev-parse HEAD)"
	echo "release-check: no git remote here; building from a clone of HEAD in $clone"
	cd "$clone/capbroker"
fi

start=$SECONDS
"$GORELEASER" release --snapshot --clean
echo "release-check: goreleaser snapshot took $((SECONDS - start)) s"

fail() { echo "release-check: $*" >&2; exit 1; }
for os in linux darwin windows; do
	for arch in amd64 arm64; do
		ext=tar.gz
		[ "$os" = windows ] && ext=zip
		n=$(find dist -maxdepth 1 -name "capbroker_*_${os}_${arch}.${ext}" | wc -l)
		[ "$n" = 1 ] || fail "want one ${os}/${arch} .${ext} archive in dist/, found $n"
	done
done
(cd dist && sha256sum -c --quiet checksums.txt) || fail "dist/checksums.txt does not verify"
[ "$(grep -c . dist/checksums.txt)" = 6 ] || fail "dist/checksums.txt should list 6 archives"
bin=$(find dist -path '*linux_amd64*' -name capbroker -type f | head -n 1)
[ -n "$bin" ] || fail "no linux/amd64 binary under dist/"
head=$(git rev-parse HEAD)
out=$("$bin" version)
case "$out" in
*"commit $head"*) echo "release-check: $out" ;;
*) fail "$bin version printed \"$out\"; want it to name commit $head" ;;
esac

# The container image needs a Docker daemon; where there is none (as on the
# CI machine) this step alone is skipped, and says so.
if command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then
	docker build --build-arg COMMIT="$head" -t capbroker:release-check .
	out=$(docker run --rm capbroker:release-check version)
	case "$out" in
	*"commit $head"*) echo "release-check: image: $out" ;;
	*) fail "the image's capbroker version printed \"$out\"; want commit $head" ;;
	esac
	user=$(docker image inspect -f '{{.Config.User}}' capbroker:release-check)
	case "$user" in "" | 0 | 0:* | root | root:*) fail "the image runs as root (USER \"$user\")" ;; esac
else
	echo "release-check: SKIPPED the Dockerfile build: no Docker daemon here (docker info failed or docker is not installed)"
fi
