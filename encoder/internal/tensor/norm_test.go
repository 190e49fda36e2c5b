package tensor

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestLayerNorm checks the AVX2 layer norm against the Go loop: the same
// values to within a float32 rounding (only the order of the float64 sums
// differs), in place and not, rows with an outlier as BERT's have.
func TestLayerNorm(t *testing.T) {
	if !HaveAVX2 {
		t.Skip("no AVX2 on this machine: the Go loop is all there is")
	}
	defer func() { UseAVX2 = HaveAVX2 }()
	rng := rand.New(rand.NewPCG(41, 42))
	for _, d := range []int{8, 384, 1536} {
		rows := 5
		src := make([]float32, rows*d)
		for i := range src {
			src[i] = float32(rng.NormFloat64())*2 + 0.3
		}
		src[d/2] = 60
		scale, bias := make([]float32, d), make([]float32, d)
		for i := range scale {
			scale[i], bias[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64())
		}
		want, got := make([]float32, len(src)), make([]float32, len(src))
		UseAVX2 = false
		LayerNorm(want, src, rows, d, scale, bias, 1e-12)
		UseAVX2 = true
		LayerNorm(got, src, rows, d, scale, bias, 1e-12)
		inplace := append([]float32(nil), src...)
		LayerNorm(inplace, inplace, rows, d, scale, bias, 1e-12)
		for i := range want {
			tol := 2e-7 * (math.Abs(float64(want[i])) + math.Abs(float64(bias[i%d])) + 1)
			if math.Abs(float64(got[i]-want[i])) > tol || got[i] != inplace[i] {
				t.Fatalf("d %d: [%d] = %v (in place %v), Go loop %v", d, i, got[i], inplace[i], want[i])
			}
		}
	}
}
