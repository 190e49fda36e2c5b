package tensor

import "golang.org/x/sys/cpu"

// dot4x2AVX2 sets out[2r+c] to the dot product of row r of x0..x3 with
// w0 (c = 0) or w1 (c = 1), over n floats, n a multiple of 8.
//
//go:noescape
func dot4x2AVX2(x0, x1, x2, x3, w0, w1 *float32, n int, out *[8]float32)

// HaveAVX2 reports whether the CPU runs the assembly kernels (AVX2 and FMA).
var HaveAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// dequantAVX2 sets dst[64g+k] to float32(int8(q[64g+k])) · scale[g] for
// the given number of groups of 64 weights.
//
//go:noescape
func dequantAVX2(dst *float32, q *byte, scale *float32, groups int)
