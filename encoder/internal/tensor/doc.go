// Package tensor holds what the built-in sentence encoders share: weight
// matrices stored as float32 or as int8 with a float32 scale per 64
// weights of a row ([Weights], [Quantize]), the dense layer that decodes
// an int8 row only as a product needs it ([Linear.Apply], with a 4-row ×
// 2-output AVX2/FMA kernel on amd64 and a portable Go loop elsewhere),
// layer normalization, and the little-endian weight table format a
// model's generator writes and the binary embeds ([Writer], [Reader]).
//
// A model package (bert) owns its shapes and the order of its table;
// this package knows only matrices, vectors and numbers.
package tensor
