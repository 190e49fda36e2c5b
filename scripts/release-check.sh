#!/usr/bin/env bash
# The release check.
#
#   scripts/release-check.sh          # this machine's archive only (what CI runs)
#   scripts/release-check.sh --full   # the release job: all six archives with GoReleaser
#
# By default it runs release_test.go with CAPBROKER_RELEASE_CHECK=1: the
# config of every target is checked (TestReleaseConfig), then this
# machine's archive is built with go build exactly as .goreleaser.yaml says
# (flags, ldflags with this commit, archive name and files) and its binary
# must name the commit (TestReleaseOneArchive): about 2.5 min of CPU, no
# GoReleaser needed.
#
# --full builds every archive as a snapshot (nothing is published) with
# GoReleaser (scripts/release.d/goreleaser.sh installs it; it compiles for
# about 10 min of CPU the first time): goreleaser check, then goreleaser
# release --snapshot --clean, then one archive per platform (linux, darwin,
# windows x amd64, arm64), checksums.txt that verifies, and a linux/amd64
# binary that names the commit it was built from; then the container image,
# where a Docker daemon runs. The archives go to dist/ (gitignored).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
if [ "${1:-}" != --full ]; then
	start=$SECONDS
	CAPBROKER_RELEASE_CHECK=1 go test -count=1 -run '^TestRelease' -v . | grep -E '^(---|ok|FAIL|PASS)|\.tar\.gz'
	echo "release-check: this machine's archive built and checked in $((SECONDS - start)) s (--full builds all six with GoReleaser)"
	exit 0
fi
DEPS=${CAPBROKER_DEPS:-$ROOT/.deps}
GORELEASER=$DEPS/bin/goreleaser
[ -x "$GORELEASER" ] || GORELEASER=$(command -v goreleaser || true)
if [ -z "$GORELEASER" ]; then
	echo "release-check: goreleaser is missing; install it with: bash scripts/release.d/goreleaser.sh" >&2
	exit 1
fi
"$GORELEASER" check

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
