package tensor

import "golang.org/x/sys/cpu"

// HaveAVXVNNI reports whether the CPU runs the AVX-VNNI kernel: AVX2,
// FMA and AVX-VNNI (VPDPBUSD and VPDPWSSD on ymm, VEX-encoded).
var HaveAVXVNNI = HaveAVX2 && cpu.X86.HasAVXVNNI

// qdot8AVXVNNI is qdot8VNNI for one Packed8 block of 16 outputs (at w;
// scales and weight sums at s and ws) on AVX-VNNI (ymm registers, VEX
// encodings, no AVX-512): for rows r < n (n <= 4; four rows are read,
// two when n <= 2) of 8-bit inputs at u (ustride bytes apart), per group the exact int32
// sum of (u − z)·w, times the weight scale times the row's step (qp),
// summed in float32 with one fused multiply-add a group, plus bias[c]
// (plus dst when add is set), plus, when ncols > 0, each of the row's 4
// outlier values (at xo) times its weights (4 rows of wt, dstride bytes
// apart), stored at dst + r·dstride bytes + 4c (see qdot8Go). Each line
// of weights it reads prefetches the one pf bytes on. It takes a
// [blockKernel]'s arguments but keeps its float sums in its own frame,
// not in acc.
//
//go:noescape
func qdot8AVXVNNI(u *uint8, ustride int, w *int8, s *float32, ws *int32, groups int, qp *uint32, acc *[qrows * blockOut]float32,
	bias, dst *float32, dstride, n int, xo, wt *float32, ncols int, add bool, pf int)
