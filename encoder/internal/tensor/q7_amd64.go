package tensor

// qdot7AVX2 computes, for rows r < n (n <= 4; four rows are read) of
// inputs 0..127 at u (ustride bytes apart) and the 16 outputs c of one
// Packed8 block (at w; scales and weight sums at s and ws), what
// qdot8VNNI computes for them (see qdot8Go), with AVX2's VPMADDUBSW and
// VPMADDWD: per group the exact int32 sum of (u − z)·w, times the weight
// scale times the row's step, summed in float32 with one fused
// multiply-add a group (in acc, 4 rows of 16), plus bias[c] (plus dst
// when add is set), plus, when ncols > 0, each of the row's 4 outlier
// values (at xo) times its weights (4 rows of wt, dstride bytes apart),
// stored at dst + r·dstride bytes + 4c. Each line of weights it reads
// prefetches the one pf bytes on.
//
//go:noescape
func qdot7AVX2(u *uint8, ustride int, w *int8, s *float32, ws *int32, groups int, qp *uint32, acc *[qrows * blockOut]float32,
	bias, dst *float32, dstride, n int, xo, wt *float32, ncols int, add bool, pf int)
