//go:build !amd64

package tensor

func qdot7AVX2(u *uint8, ustride int, w *int8, s *float32, ws *int32, groups int, qp *uint32, acc *[qrows * blockOut]float32,
	bias, dst *float32, dstride, n int, xo, wt *float32, ncols int, add bool, pf int) {
	panic("unreachable")
}
