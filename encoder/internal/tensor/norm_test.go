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

// TestLayerNorm4 checks the AVX-512 layer norm of four rows a call
// against the AVX2 one, bit for bit, in place and not, for row counts
// around the multiples of four (the rest a row at a time on AVX2).
func TestLayerNorm4(t *testing.T) {
	if !HaveVNNI || !HaveAVX2 {
		t.Skip("no AVX-512 on this machine")
	}
	defer restoreKernels()
	rng := rand.New(rand.NewPCG(43, 44))
	for _, d := range []int{16, 384, 1536} {
		for _, rows := range []int{1, 3, 4, 5, 6, 7, 8, 9, 17, 18, 19} {
			src := make([]float32, rows*d)
			for i := range src {
				src[i] = float32(rng.NormFloat64())*2 + 0.3
			}
			for r := range rows {
				src[r*d+rng.IntN(d)] = 60 * float32(rng.NormFloat64())
			}
			scale, bias := make([]float32, d), make([]float32, d)
			for i := range scale {
				scale[i], bias[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64())
			}
			want, got := make([]float32, len(src)), make([]float32, len(src))
			UseVNNI, UseAVX2 = false, true
			LayerNorm(want, src, rows, d, scale, bias, 1e-12)
			UseVNNI = true
			LayerNorm(got, src, rows, d, scale, bias, 1e-12)
			inplace := append([]float32(nil), src...)
			LayerNorm(inplace, inplace, rows, d, scale, bias, 1e-12)
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) || math.Float32bits(inplace[i]) != math.Float32bits(want[i]) {
					t.Fatalf("d %d, %d rows: [%d] = %v (in place %v), AVX2 %v", d, rows, i, got[i], inplace[i], want[i])
				}
			}
		}
	}
}

// BenchmarkLayerNorm normalizes a task's 17 rows of 384 with each loop
// this CPU runs.
func BenchmarkLayerNorm(b *testing.B) {
	defer restoreKernels()
	rng := rand.New(rand.NewPCG(45, 46))
	const rows, d = 17, 384
	src := make([]float32, rows*d)
	for i := range src {
		src[i] = float32(rng.NormFloat64())
	}
	scale, bias := make([]float32, d), make([]float32, d)
	for i := range scale {
		scale[i], bias[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64())
	}
	dst := make([]float32, len(src))
	for _, k := range vectorKernels() {
		b.Run(k.name, func(b *testing.B) {
			k.on()
			for b.Loop() {
				LayerNorm(dst, src, rows, d, scale, bias, 1e-12)
			}
		})
	}
}
