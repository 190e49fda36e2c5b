// Package tensor holds what the built-in sentence encoders share: weight
// matrices stored as float32 or as int8 with a float32 scale per 64
// weights of a row ([Weights], [Quantize]); the dense layer
// ([Linear.Apply]): int8 weights packed in blocks of 16 outputs
// ([Linear.Pack]) times inputs rounded to int16, summed exactly in int32
// per group of 64 by an AVX-512 VNNI (VPDPWSSD) or AVX2 (VPMADDWD)
// kernel on amd64, or float32 products of rows decoded as needed (a
// 4-row × 2-output AVX2/FMA kernel, a portable Go loop elsewhere);
// products of rows read in place ([MulTStrided]), softmax ([Softmax])
// and GELU ([GELU]) 8 values at a time on AVX2; layer normalization;
// and the little-endian weight table format a model's generator writes
// and the binary embeds ([Writer], [Reader]).
//
// A model package (bert) owns its shapes and the order of its table;
// this package knows only matrices, vectors and numbers.
package tensor
