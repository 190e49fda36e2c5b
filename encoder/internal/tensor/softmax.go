package tensor

import "math"

// Softmax turns the first n values of row, each times scale, into
// probabilities (in place) and clears the rest of row: attention's
// weights over a sequence of n. row's length must be a multiple of 8 on
// the AVX2 path, which computes the exponentials 8 at a time (Cephes'
// expf, within 2 ulp); elsewhere math.Exp.
func Softmax(row []float32, n int, scale float32) {
	if UseAVX2 && len(row)%8 == 0 && len(row) > 0 {
		// The padding's exponentials are 0 (below -87 after the max is
		// taken off), and its scaled values never the largest.
		for j := n; j < len(row); j++ {
			row[j] = -math.MaxFloat32
		}
		mx := scaleMaxAVX2(&row[0], len(row), scale)
		sum := expAVX2(&row[0], len(row), mx)
		mulAVX2(&row[0], len(row), 1/sum)
		return
	}
	mx := float32(math.Inf(-1))
	for j, v := range row[:n] {
		v *= scale
		row[j] = v
		mx = max(mx, v)
	}
	var sum float32
	for j, v := range row[:n] {
		e := float32(math.Exp(float64(v - mx)))
		row[j] = e
		sum += e
	}
	inv := 1 / sum
	for j := range row[:n] {
		row[j] *= inv
	}
	clear(row[n:])
}
