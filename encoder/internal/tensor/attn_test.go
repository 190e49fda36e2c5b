package tensor

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestAttentionHelpers checks Scores and Mix against their definitions
// (float64 sums) and, with AVX2, the assembly against the Go loops, bit
// for bit, for sequence lengths around the multiples of 8.
func TestAttentionHelpers(t *testing.T) {
	defer func() { UseAVX2 = HaveAVX2 }()
	rng := rand.New(rand.NewPCG(51, 52))
	for _, n := range []int{1, 2, 7, 8, 9, 17, 31, 128} {
		tp := (n + 7) &^ 7
		q := make([]float32, HeadDim)
		kt := make([]float32, HeadDim*tp)
		const vstride = 3 * 384
		v := make([]float32, (n-1)*vstride+HeadDim)
		p := make([]float32, tp)
		for _, x := range [][]float32{q, kt, v, p} {
			for i := range x {
				x[i] = float32(rng.NormFloat64())
			}
		}
		var got [2][]float32
		var mixed [2][HeadDim]float32
		for k, avx := range []bool{false, true} {
			if avx && !HaveAVX2 {
				continue
			}
			UseAVX2 = avx
			got[k] = make([]float32, tp)
			Scores(got[k], q, kt, tp)
			Mix(mixed[k][:], p, v, vstride, n)
		}
		for j := range tp {
			var want float64
			for c := range HeadDim {
				want += float64(q[c]) * float64(kt[c*tp+j])
			}
			if d := math.Abs(float64(got[0][j]) - want); d > 1e-5*(1+math.Abs(want)) {
				t.Fatalf("n %d: score %d = %v, want %v", n, j, got[0][j], want)
			}
			if got[1] != nil && math.Float32bits(got[1][j]) != math.Float32bits(got[0][j]) {
				t.Fatalf("n %d: score %d: AVX2 %v, Go %v", n, j, got[1][j], got[0][j])
			}
		}
		for c := range HeadDim {
			var want float64
			for j := range n {
				want += float64(p[j]) * float64(v[j*vstride+c])
			}
			if d := math.Abs(float64(mixed[0][c]) - want); d > 1e-5*(1+math.Abs(want)) {
				t.Fatalf("n %d: mix %d = %v, want %v", n, c, mixed[0][c], want)
			}
			if HaveAVX2 && math.Float32bits(mixed[1][c]) != math.Float32bits(mixed[0][c]) {
				t.Fatalf("n %d: mix %d: AVX2 %v, Go %v", n, c, mixed[1][c], mixed[0][c])
			}
		}
	}
}
