package tensor

import "math"

// HeadDim is the width of an attention head the attention helpers take.
const HeadDim = 32

// Scores sets dst[j] = Σ_c q[c]·kt[c·tp+j] over c < HeadDim, for j < tp:
// a query's scores against a head's keys laid out transposed (kt holds
// HeadDim rows of tp), so that eight keys are scored at once. On amd64
// with AVX2 (tp a multiple of 8) four accumulators take c mod 4 and are
// summed as (a0+a1)+(a2+a3); the Go loop sums in the same order.
func Scores(dst, q, kt []float32, tp int) {
	_, _, _ = dst[tp-1], q[HeadDim-1], kt[HeadDim*tp-1]
	if UseAVX2 && tp%8 == 0 {
		scoresAVX2(&dst[0], &q[0], &kt[0], tp)
		return
	}
	for j := range tp {
		var a [4]float32
		for c := 0; c < HeadDim; c += 4 {
			for i := range a {
				a[i] = fma32(q[c+i], kt[(c+i)*tp+j], a[i])
			}
		}
		dst[j] = (a[0] + a[1]) + (a[2] + a[3])
	}
}

// Mix sets dst[c] = Σ_j p[j]·v[j·vstride+c] over j < t, for c <
// HeadDim: a query's attention weights times a head's values, read
// where they lie. Even and odd j are summed apart, then added.
func Mix(dst, p, v []float32, vstride, t int) {
	if t == 0 {
		clear(dst[:HeadDim])
		return
	}
	_, _, _ = dst[HeadDim-1], p[t-1], v[(t-1)*vstride+HeadDim-1]
	if UseAVX2 {
		mixAVX2(&dst[0], &p[0], &v[0], vstride, t)
		return
	}
	var even, odd [HeadDim]float32
	for j := range t {
		acc := &even
		if j%2 == 1 {
			acc = &odd
		}
		for c := range acc {
			acc[c] = fma32(p[j], v[j*vstride+c], acc[c])
		}
	}
	for c := range HeadDim {
		dst[c] = even[c] + odd[c]
	}
}

// fma32 is a·b + c with one rounding, as the kernels' FMA.
func fma32(a, b, c float32) float32 {
	return float32(math.FMA(float64(a), float64(b), float64(c)))
}
