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

// HaveVNNI reports whether the CPU runs the AVX-512 VNNI kernel.
var HaveVNNI = cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VNNI

// qdotVNNI computes, for rows r < n (n <= 4) of int16 at x (xstride
// bytes apart) and outputs c < 32 of two packed blocks (at w and
// w+bstride bytes; scales at s and s+sstride bytes), the sum over groups
// of the group's int32 dot product times its scale (see qdotGo), then
// stores it times xs[r] plus bias[c] (plus what is there when add is
// set) at dst + r·dstride bytes + 4c. acc is scratch.
//
//go:noescape
func qdotVNNI(x *int16, xstride int, w *int8, bstride int, s *float32, sstride int, groups int, acc *[qrows * 2 * blockOut]float32,
	xs, bias, dst *float32, dstride, n int, add bool)

// qdotAVX2 is qdotVNNI for one packed block of 16 outputs (with n = 3
// it computes three rows, else four); each line of weights it reads
// prefetches the one pf bytes on.
//
//go:noescape
func qdotAVX2(x *int16, xstride int, w *int8, s *float32, groups int, acc *[qrows * 2 * blockOut]float32,
	xs, bias, dst *float32, dstride, n int, add bool, pf int)

// qdot1AVX2 is qdotAVX2 for one row (n = 1, no acc).
//
//go:noescape
func qdot1AVX2(x *int16, w *int8, s *float32, groups int, xs, bias, dst *float32, add bool, pf int)

// absMaxAVX2 returns the largest magnitude of n floats at x, n a
// multiple of 16.
//
//go:noescape
func absMaxAVX2(x *float32, n int) float32

// roundAVX2 sets q[i] to x[i]·mul rounded to the nearest integer, ties
// to even, over n values, n a multiple of 16.
//
//go:noescape
func roundAVX2(q *int16, x *float32, n int, mul float32)

// geluAVX2 is GELU's Go loop (gelu1) over n values, n a multiple of 8.
//
//go:noescape
func geluAVX2(x *float32, n int)

// geluAVX512 is geluAVX2 16 values at a time (AVX-512F), n a multiple of
// 32.
//
//go:noescape
func geluAVX512(x *float32, n int)

// expAVX2 sets x[i] to e^(x[i]-sub) over n values (a multiple of 8,
// each x[i]-sub <= 0) and returns their sum.
//
//go:noescape
func expAVX2(x *float32, n int, sub float32) float32

// qdot8VNNI computes, for rows r < n (n <= 4) of 8-bit inputs at u
// (ustride bytes apart) and outputs c < 32 of two Packed8 blocks (at w
// and w+bstride bytes; scales and weight sums at s and ws, the second
// block's sstride bytes on), per group g the exact int32 sum of
// (u − z)·w, times the weight scale times the row's step (qp, per row
// and group: the step's bits and −z), summed in float32 with one fused
// multiply-add a group, plus bias[c] (plus what is there when add is
// set), plus, when ncols > 0, each of the row's 4 outlier values (at xo,
// 4 a row) times its weights (4 rows of wt, dstride bytes apart), one
// fused multiply-add each, stored at dst + r·dstride bytes + 4c (see
// qdot8Go).
//
//go:noescape
func qdot8VNNI(u *uint8, ustride int, w *int8, bstride int, s *float32, ws *int32, sstride int, groups int,
	qp *uint32, bias, dst *float32, dstride, n int, xo, wt *float32, ncols int, add bool)

// quant8AVX2 is quantGroup8 over groups of 64 floats at x, to 0..levels
// (255 or 127).
//
//go:noescape
func quant8AVX2(u *uint8, x *float32, groups int, qp *uint32, levels float32)

// quant8AVX512 is quant8AVX2 16 values to a register (AVX-512F and BW):
// the same bits.
//
//go:noescape
func quant8AVX512(u *uint8, x *float32, groups int, qp *uint32, levels float32)

// layerNormAVX2 is LayerNorm's loop over one row of d floats, d a
// multiple of 8.
//
//go:noescape
func layerNormAVX2(dst, src *float32, d int, scale, bias *float32, eps float64)

// layerNorm4AVX512 is layerNormAVX2 over four rows of d floats (d a
// multiple of 16), the rows' sums interleaved (AVX-512F), tmp (4·d) its
// scratch: the same bits.
//
//go:noescape
func layerNorm4AVX512(dst, src *float32, d int, scale, bias *float32, eps float64, tmp *float64)

// scoresAVX2 is Scores for tp a multiple of 8.
//
//go:noescape
func scoresAVX2(dst, q, kt *float32, tp int)

// attendAVX2 is Attend for t > 0, tp = t rounded up to a multiple of 8.
//
//go:noescape
func attendAVX2(dst *float32, dstride int, q, k, v *float32, stride, t, tp int, scale float32, kt, sc *float32)

// attendAVX512 is attendAVX2 16 lanes to a register (AVX-512F), tp = t
// rounded up to a multiple of 16: the same bits.
//
//go:noescape
func attendAVX512(dst *float32, dstride int, q, k, v *float32, stride, t, tp int, scale float32, kt, sc *float32)

// mixAVX2 is Mix.
//
//go:noescape
func mixAVX2(dst, p, v *float32, vstride, t int)

// scaleMaxAVX2 sets x[i] *= scale over n values (a multiple of 8) and
// returns the largest.
//
//go:noescape
func scaleMaxAVX2(x *float32, n int, scale float32) float32

// mulAVX2 sets x[i] *= s over n values, a multiple of 8.
//
//go:noescape
func mulAVX2(x *float32, n int, s float32)

// add3AVX2 is Add3 over n values, a multiple of 8.
//
//go:noescape
func add3AVX2(dst, a, b, c *float32, n int)

// addF64AVX2 is AddF64 over n values, a multiple of 8.
//
//go:noescape
func addF64AVX2(acc *float64, x *float32, n int)

// scaleF64AVX2 is ScaleF64 over n values, a multiple of 8.
//
//go:noescape
func scaleF64AVX2(dst *float32, src *float64, n int, s float64)
