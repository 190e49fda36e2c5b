package tensor

// HaveNEON is true on arm64: Advanced SIMD is part of every Armv8-A core.
const HaveNEON = true

// scoresNEON is Scores for tp a multiple of 8: eight keys at a time,
// the four accumulators (c mod 4) in two registers each, summed as
// (a0+a1)+(a2+a3): the Go loop's bits.
//
//go:noescape
func scoresNEON(dst, q, kt *float32, tp int)

// mixNEON is Mix for t > 0: a head's 32 values in eight registers, even
// and odd j in their own, added at the end: the Go loop's bits.
//
//go:noescape
func mixNEON(dst, p, v *float32, vstride, t int)

// geluNEON is GELU over n values at x, n a multiple of 8: gelu1's
// operations in its order, so the same bits.
//
//go:noescape
func geluNEON(x *float32, n int)
