package tensor

// Products with 7-bit inputs on AVX2. A CPU with AVX2 but no AVX-512
// VNNI has no instruction that multiplies unsigned 8-bit inputs by
// signed 8-bit weights into int32 lanes: VPMADDUBSW multiplies them but
// sums each pair into an int16 lane, with saturation, and 255·127·2 =
// 64,770 does not fit. With the inputs rounded to 0..127 instead of
// 0..255 (each group of 64 its own range, as the 8-bit kernel's; the
// same outlier columns) every pair fits:
//
//	|u1·w1 + u2·w2| <= 2·127·128 = 32,512 < 32,768
//
// for u in [0, 127] and w in [−128, 127], so VPMADDUBSW never saturates,
// and VPMADDWD with ones widens each output's two pairs into its int32
// lane: the standard sequence, exact. A group's sum, (u − z)·w over 64
// inputs with z <= 127 and |Σw| <= 64·128, stays below 2^21 and
// converts to float32 exactly, as the 8-bit kernel's (the kernel and
// qdot8Go agree bit for bit: TestPacked7Spec).
//
// The kernel is off by default (UseU7): it multiplies about 1.3 times as
// fast as the int16 kernel (VPMADDWD) on the test machine, but half the
// steps of the 8-bit rounding double its error, and the golden vectors'
// worst cosine with the reference falls from 0.99947 (int16) to 0.99876,
// under the 0.999 the encoder promises (docs/speed.md, "An 8-bit kernel
// for AVX2").

// UseU7 packs layers for the 7-bit AVX2 kernel where no 8-bit one runs
// (Pack with UseVNNI and UseAVXVNNI off); off by default (see above),
// benchmarks and tests turn it on.
var UseU7 = false

// levels7 is the largest input of the 7-bit kernel.
const levels7 = 127

// applyPacked7 is Apply on the 7-bit kernel.
func (l *Linear) applyPacked7(dst, src []float32, rows int, add bool) {
	l.applyBlocks(dst, src, rows, add, qdot7AVX2)
}
