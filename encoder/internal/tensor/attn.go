package tensor

import "math"

// HeadDim is the width of an attention head the attention helpers take.
const HeadDim = 32

// UseNEON turns the arm64 attention kernels on (Scores and Mix with
// NEON: attn_arm64.s); tests turn it off to check them against the Go
// loops.
var UseNEON = HaveNEON

// Scores sets dst[j] = Σ_c q[c]·kt[c·tp+j] over c < HeadDim, for j < tp:
// a query's scores against a head's keys laid out transposed (kt holds
// HeadDim rows of tp), so that eight keys are scored at once. On amd64
// with AVX2, or on arm64 with NEON (tp a multiple of 8), four
// accumulators take c mod 4 and are summed as (a0+a1)+(a2+a3); the Go
// loop sums in the same order.
func Scores(dst, q, kt []float32, tp int) {
	_, _, _ = dst[tp-1], q[HeadDim-1], kt[HeadDim*tp-1]
	if UseAVX2 && tp%8 == 0 {
		scoresAVX2(&dst[0], &q[0], &kt[0], tp)
		return
	}
	if UseNEON && tp%8 == 0 {
		scoresNEON(&dst[0], &q[0], &kt[0], tp)
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
	if UseNEON {
		mixNEON(&dst[0], &p[0], &v[0], vstride, t)
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

// Attend computes one attention head over a sequence of t rows: for
// each row i, the softmax of scale times its query's scores against the
// t keys, times the t values, into dst[i·dstride:][:HeadDim]. The
// queries, keys and values are read where they lie: row i's at
// q[i·stride:], k[i·stride:] and v[i·stride:], HeadDim each (a head's
// columns of a row of [q | k | v]). kt (HeadDim·tp values, tp = t
// rounded up to a multiple of 16) and sc (t·tp) are scratch. It gives the
// bits of the keys transposed into kt, then [Scores], [Softmax] and
// [Mix] a row at a time; on amd64 with AVX2 one assembly call does it
// all (the keys transposed 8×8 at a time), with the same operations, 8
// lanes to a register; or, with AVX-512 where the VNNI kernel runs, 16,
// each step a pass over all the rows (their scores, then their softmax,
// then their mix), so that the rows' chains of operations overlap
// (BenchmarkAttend: a task's 12 heads 14.4 → 9.0 µs).
func Attend(dst []float32, dstride int, q, k, v []float32, stride, t int, scale float32, kt, sc []float32) {
	if t == 0 {
		return
	}
	tp := (t + 15) &^ 15
	last := (t-1)*stride + HeadDim - 1
	_, _, _, _ = q[last], k[last], v[last], dst[(t-1)*dstride+HeadDim-1]
	_, _ = kt[HeadDim*tp-1], sc[t*tp-1]
	if avx512() {
		attendAVX512(&dst[0], dstride, &q[0], &k[0], &v[0], stride, t, tp, scale, &kt[0], &sc[0])
		return
	}
	tp = (t + 7) &^ 7
	if UseAVX2 {
		attendAVX2(&dst[0], dstride, &q[0], &k[0], &v[0], stride, t, tp, scale, &kt[0], &sc[0])
		return
	}
	attendGo(dst, dstride, q, k, v, stride, t, scale, kt, sc)
}

// attendGo is Attend a step at a time. The keys past t (up to tp) are
// copies of key t-1: their scores are dropped by Softmax either way.
func attendGo(dst []float32, dstride int, q, k, v []float32, stride, t int, scale float32, kt, sc []float32) {
	tp := (t + 7) &^ 7
	for i := range tp {
		ki := k[min(i, t-1)*stride:][:HeadDim]
		for c, x := range ki {
			kt[c*tp+i] = x
		}
	}
	for i := range t {
		Scores(sc, q[i*stride:], kt, tp)
		Softmax(sc[:tp], t, scale)
		Mix(dst[i*dstride:], sc, v, stride, t)
	}
}
