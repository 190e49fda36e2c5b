//go:build !amd64

package tensor

// HaveAVX2 is false off amd64: only the portable kernels run.
const HaveAVX2 = false

func dot4x2AVX2(x0, x1, x2, x3, w0, w1 *float32, n int, out *[8]float32) {
	panic("unreachable")
}

func dequantAVX2(dst *float32, q *byte, scale *float32, groups int) {
	panic("unreachable")
}
