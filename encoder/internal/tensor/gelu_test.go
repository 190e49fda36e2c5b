package tensor

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestGELU: the AVX2 loop gives the Go loop's bits, over the table's
// range, its ends, beyond them and a ragged tail.
func TestGELU(t *testing.T) {
	defer restoreKernels()
	phi := make([]float32, 2*8*512+2)
	for k := range phi {
		x := float64(k)/512 - 8
		phi[k] = float32(0.5 * (1 + math.Erf(x/math.Sqrt2)))
	}
	rng := rand.New(rand.NewPCG(17, 18))
	x := make([]float32, 1003)
	for i := range x {
		x[i] = float32(rng.NormFloat64() * 4)
	}
	copy(x, []float32{-8, 8, -8.0001, 8.0001, -20, 20, 0, 7.9999, -7.9999})
	want := append([]float32(nil), x...)
	UseAVX2 = false
	GELU(want, phi)
	UseAVX2 = HaveAVX2
	got := append([]float32(nil), x...)
	GELU(got, phi)
	for i := range got {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("GELU(%v) = %v, Go loop %v", x[i], got[i], want[i])
		}
		if e := float64(x[i]) * 0.5 * (1 + math.Erf(float64(x[i])/math.Sqrt2)); math.Abs(float64(got[i])-e) > 1e-5*(1+math.Abs(e)) {
			t.Fatalf("GELU(%v) = %v, exact %v", x[i], got[i], e)
		}
	}
}

// BenchmarkGELU runs GELU over a feed-forward layer's output of 20 rows
// with each loop this CPU runs.
func BenchmarkGELU(b *testing.B) {
	defer restoreKernels()
	phi := make([]float32, 2*8*512+2)
	for k := range phi {
		phi[k] = float32(0.5 * (1 + math.Erf((float64(k)/512-8)/math.Sqrt2)))
	}
	rng := rand.New(rand.NewPCG(19, 20))
	src := make([]float32, 20*1536)
	for i := range src {
		src[i] = float32(rng.NormFloat64() * 2)
	}
	x := make([]float32, len(src))
	for _, k := range []struct {
		name      string
		vnni, avx bool
	}{{"avx2", false, HaveAVX2}, {"go", false, false}} {
		b.Run(k.name, func(b *testing.B) {
			UseVNNI, UseAVX2 = k.vnni, k.avx
			for b.Loop() {
				copy(x, src)
				GELU(x, phi)
			}
		})
	}
}
