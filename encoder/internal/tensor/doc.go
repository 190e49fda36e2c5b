// Package tensor holds what the built-in sentence encoders share: weight
// matrices stored as float32 or as int8 with a float32 scale per 64
// weights of a row ([Weights], [Quantize]); the dense layer
// ([Linear.Apply]): int8 weights packed in blocks of 16 outputs
// ([Linear.Pack]) times inputs rounded to 8 bits a group of 64 (with a
// few outlier columns a layer added in float32: [Linear.Observe],
// [Linear.Outliers]) by an AVX-512 VNNI VPDPBUSD kernel (or, where
// the CPU has AMX and Linux grants its tiles, by TDPBUSD on tiles of up
// to 16 rows, 28 rows a call, with the same bits: q8amx.go; or, where it
// has AVX-VNNI but no AVX-512, by VPDPBUSD on ymm registers in its VEX
// encoding, written as bytes, a block of 16 outputs and four rows a
// call, with the same bits again and AVX2 around it: q8avxvnni.go; or,
// on arm64 with the dot product instructions, by NEON's SDOT on the same
// layout, the inputs made signed and the sums corrected exactly, the
// same bits once more: q8_arm64.go), or
// rounded to int16 a row by an AVX2 (VPMADDWD) one (four rows a call,
// one at a time past the last multiple of four), summed exactly in int32
// per group of 64 on amd64 (q8.go, qlinear.go); a 7-bit AVX2 kernel (VPMADDUBSW, exact
// in its ranges, off by default: [UseU7], q7.go) for measurement; or
// float32 products of rows
// decoded as needed (a 4-row × 2-output AVX2/FMA kernel, a portable Go
// loop elsewhere); attention's products of a query with a head's keys
// and values ([Scores], [Mix]), a whole head of a sequence in one call
// ([Attend]: keys transposed 8×8, then scores, softmax and mix a query
// at a time on AVX2, or 16 lanes to a register and each step a pass over
// all the queries on AVX-512, the same bits as those steps) and products
// of rows read in place ([MulTStrided]); softmax ([Softmax]) and layer
// normalization ([LayerNorm]) 8 values at a time on AVX2 (layer norm
// four rows a call on AVX-512, the same bits); the 8-bit rounding of a
// product's input 16 values to a register on AVX-512 (the same bits as
// AVX2's); GELU ([GELU]) by a rational
// approximation of erf within 2.7e-7·|x|, 8 values at a time on AVX2 and
// 16 on AVX-512, the same bits as its Go loop. On arm64 NEON runs the
// scores and the mix of attention (8 keys a step), the 8-bit rounding (a
// group of 64 a step) and GELU (8 values a step), each the Go loop's bits (*_arm64.s; tested under
// qemu-aarch64 by scripts/test-all.sh);
// and the little-endian weight table format a model's generator writes
// and the binary embeds ([Writer], [Reader]).
//
// The AVX-512 kernels run only where the AVX-512 VNNI kernel does
// (UseVNNI); a CPU with AVX-VNNI alone runs VEX-encoded instructions
// only (TestAVXVNNIEncoding checks the test binary's).
//
// A model package (bert) owns its shapes and the order of its table;
// this package knows only matrices, vectors and numbers.
package tensor
