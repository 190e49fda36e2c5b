//go:build !arm64

package tensor

// HaveSDOT is false off arm64.
const HaveSDOT = false

func qdot8SDOT(u *uint8, ustride int, w *int8, s *float32, ws *int32, groups int, qp *uint32, acc *[qrows * blockOut]float32,
	bias, dst *float32, dstride, n int, xo, wt *float32, ncols int, add bool, pf int) {
	panic("unreachable")
}
