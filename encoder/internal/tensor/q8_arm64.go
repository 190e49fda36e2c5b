package tensor

import "golang.org/x/sys/cpu"

// HaveSDOT reports whether the CPU runs the arm64 8-bit kernel: NEON's
// SDOT, the dot product instructions of Armv8.2 (every Apple M chip,
// AWS Graviton 2 on, Ampere Altra, Cortex-A76 on).
var HaveSDOT = cpu.ARM64.HasASIMDDP

// qdot8SDOT computes, for rows r < n (n <= 4; four rows are read) of
// 8-bit inputs at u (ustride bytes apart) and the 16 outputs c of one
// Packed8 block (at w; scales and weight sums at s and ws), what
// qdot8VNNI computes for them (see qdot8Go), with SDOT: each input u
// becomes the signed u − 128, and a group's exact int32 sum of (u − z)·w
// is its sum of (u − 128)·w plus (128 − z)·Σw; times the weight scale
// times the row's step, summed in float32 with one fused multiply-add a
// group (in acc, 4 rows of 16), plus bias[c] (plus dst when add is set),
// plus, when ncols > 0, each of the row's 4 outlier values (at xo) times
// its weights (4 rows of wt, dstride bytes apart), stored at dst +
// r·dstride bytes + 4c. Each line of weights it reads prefetches the one
// pf bytes on (into L2).
//
//go:noescape
func qdot8SDOT(u *uint8, ustride int, w *int8, s *float32, ws *int32, groups int, qp *uint32, acc *[qrows * blockOut]float32,
	bias, dst *float32, dstride, n int, xo, wt *float32, ncols int, add bool, pf int)

// quant8NEON is quantGroup8 over groups of 64 floats at x, to
// 0..levels (at most 255).
//
//go:noescape
func quant8NEON(u *uint8, x *float32, groups int, qp *uint32, levels float32)
