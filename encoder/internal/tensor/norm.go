package tensor

import (
	"math"
	"slices"
	"sync"
)

// lnBufs holds the AVX-512 layer norm's scratch: four rows in float64.
var lnBufs = sync.Pool{New: func() any { return new([]float64) }}

// LayerNorm normalizes each row of src over its d values into dst (which
// may be src): zero mean, unit variance (with eps added to the variance),
// then times scale plus bias. Sums run in float64 (on amd64 with AVX2,
// four lanes at a time: the same values to within the order of the
// float64 sums). Where the VNNI kernel runs (AVX-512) and d is a
// multiple of 16, four rows a call: each row's two accumulators of four
// lanes in one register, the four rows' sums side by side so that their
// chains of additions overlap, each value converted to float64 once (17
// rows 2.2 times as fast as a row at a time, BenchmarkLayerNorm), the
// same bits as the AVX2 loop.
func LayerNorm(dst, src []float32, rows, d int, scale, bias []float32, eps float64) {
	if UseAVX2 && d%8 == 0 && d > 0 && rows > 0 {
		_, _, _, _ = src[rows*d-1], dst[rows*d-1], scale[d-1], bias[d-1]
		r := 0
		if avx512() && d%16 == 0 && rows >= 4 {
			tp := lnBufs.Get().(*[]float64)
			tmp := slices.Grow((*tp)[:0], 4*d)[:4*d]
			for ; r+4 <= rows; r += 4 {
				layerNorm4AVX512(&dst[r*d], &src[r*d], d, &scale[0], &bias[0], eps, &tmp[0])
			}
			*tp = tmp
			lnBufs.Put(tp)
		}
		for ; r < rows; r++ {
			layerNormAVX2(&dst[r*d], &src[r*d], d, &scale[0], &bias[0], eps)
		}
		return
	}
	for r := 0; r < rows; r++ {
		x := src[r*d : (r+1)*d]
		y := dst[r*d : (r+1)*d]
		var mean float64
		for _, v := range x {
			mean += float64(v)
		}
		mean /= float64(d)
		var variance float64
		for _, v := range x {
			dv := float64(v) - mean
			variance += dv * dv
		}
		variance /= float64(d)
		inv := 1 / math.Sqrt(variance+eps)
		for i, v := range x {
			y[i] = float32((float64(v)-mean)*inv)*scale[i] + bias[i]
		}
	}
}

// Grow returns b resliced to n values, or a new slice when b is too
// small. The values are not cleared.
func Grow(b []float32, n int) []float32 {
	if cap(b) < n {
		return make([]float32, n)
	}
	return b[:n]
}
