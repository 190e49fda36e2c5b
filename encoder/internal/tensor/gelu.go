package tensor

// GELU sets each x[i] to x[i]·Φ(x[i]), Φ read from phi: its values at
// -8, -8 + 1/512, ..., 8 and one more knot past 8 (8·1024 + 2 values),
// linear between knots; 0 at or below -8 and x[i] itself at or above 8.
// On amd64 with AVX2 it runs 8 values at a time (gathering the knots)
// with the same operations in the same order, so the results are the
// same bits.
func GELU(x, phi []float32) {
	const lo, steps = 8, 512
	_ = phi[2*lo*steps+1]
	n := 0
	if UseAVX2 && len(x) >= 8 {
		n = len(x) &^ 7
		geluAVX2(&x[0], n, &phi[0])
	}
	for i := n; i < len(x); i++ {
		v := x[i]
		switch {
		case v <= -lo:
			x[i] = 0
		case v >= lo:
			// Φ is 1 to float32 precision.
		default:
			f := (v + lo) * steps
			k := int(f)
			f -= float32(k)
			x[i] = v * (phi[k] + f*(phi[k+1]-phi[k]))
		}
	}
}
