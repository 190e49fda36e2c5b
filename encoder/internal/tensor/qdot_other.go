//go:build !amd64

package tensor

// HaveVNNI is false off amd64.
const HaveVNNI = false

// HaveAVXVNNI is false off amd64.
const HaveAVXVNNI = false

func qdotVNNI(x *int16, xstride int, w *int8, bstride int, s *float32, sstride int, groups int, acc *[qrows * 2 * blockOut]float32,
	xs, bias, dst *float32, dstride, n int, add bool) {
	panic("unreachable")
}

func qdotAVX2(x *int16, xstride int, w *int8, s *float32, groups int, acc *[qrows * 2 * blockOut]float32,
	xs, bias, dst *float32, dstride, n int, add bool, pf int) {
	panic("unreachable")
}

func qdot1AVX2(x *int16, w *int8, s *float32, groups int, xs, bias, dst *float32, add bool, pf int) {
	panic("unreachable")
}

func absMaxAVX2(x *float32, n int) float32 { panic("unreachable") }

func roundAVX2(q *int16, x *float32, n int, mul float32) { panic("unreachable") }

func geluAVX2(x *float32, n int) { panic("unreachable") }

func geluAVX512(x *float32, n int) { panic("unreachable") }

func expAVX2(x *float32, n int, sub float32) float32 { panic("unreachable") }

func qdot8VNNI(u *uint8, ustride int, w *int8, bstride int, s *float32, ws *int32, sstride int, groups int,
	qp *uint32, bias, dst *float32, dstride, n int, xo, wt *float32, ncols int, add bool) {
	panic("unreachable")
}

func qdot8AVXVNNI(u *uint8, ustride int, w *int8, s *float32, ws *int32, groups int, qp *uint32, acc *[qrows * blockOut]float32,
	bias, dst *float32, dstride, n int, xo, wt *float32, ncols int, add bool, pf int) {
	panic("unreachable")
}

func quant8AVX2(u *uint8, x *float32, groups int, qp *uint32, levels float32) {
	panic("unreachable")
}

func quant8AVX512(u *uint8, x *float32, groups int, qp *uint32, levels float32) {
	panic("unreachable")
}

func layerNormAVX2(dst, src *float32, d int, scale, bias *float32, eps float64) {
	panic("unreachable")
}

func layerNorm4AVX512(dst, src *float32, d int, scale, bias *float32, eps float64, tmp *float64) {
	panic("unreachable")
}

func scoresAVX2(dst, q, kt *float32, tp int) { panic("unreachable") }

func mixAVX2(dst, p, v *float32, vstride, t int) { panic("unreachable") }

func scaleMaxAVX2(x *float32, n int, scale float32) float32 { panic("unreachable") }

func mulAVX2(x *float32, n int, s float32) { panic("unreachable") }

func attendAVX2(dst *float32, dstride int, q, k, v *float32, stride, t, tp int, scale float32, kt, sc *float32) {
	panic("unreachable")
}

func attendAVX512(dst *float32, dstride int, q, k, v *float32, stride, t, tp int, scale float32, kt, sc *float32) {
	panic("unreachable")
}

func add3AVX2(dst, a, b, c *float32, n int) { panic("unreachable") }

func addF64AVX2(acc *float64, x *float32, n int) { panic("unreachable") }

func scaleF64AVX2(dst *float32, src *float64, n int, s float64) { panic("unreachable") }
