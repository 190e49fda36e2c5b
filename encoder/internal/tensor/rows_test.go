package tensor

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestRows checks Add3, AddF64 and ScaleF64 on AVX2 against their Go
// loops, bit for bit, for lengths around the multiples of 8.
func TestRows(t *testing.T) {
	if !HaveAVX2 {
		t.Skip("no AVX2 on this machine: the Go loops are all there is")
	}
	defer restoreKernels()
	rng := rand.New(rand.NewPCG(61, 62))
	f32 := func(n int) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(rng.NormFloat64() * math.Pow(10, float64(rng.IntN(7)-3)))
		}
		return x
	}
	for _, n := range []int{1, 7, 8, 9, 16, 23, 384} {
		a, b, c := f32(n), f32(n), f32(n)
		acc := make([]float64, n)
		for i := range acc {
			acc[i] = rng.NormFloat64() * 1e3
		}
		s := 1 / math.Sqrt(1e3+rng.Float64())
		var sums [2][]float32
		var accs [2][]float64
		var scaled [2][]float32
		for k, avx := range []bool{false, true} {
			UseAVX2 = avx
			sums[k] = make([]float32, n)
			Add3(sums[k], a, b, c)
			accs[k] = append([]float64(nil), acc...)
			AddF64(accs[k], a)
			AddF64(accs[k], b)
			scaled[k] = make([]float32, n)
			ScaleF64(scaled[k], accs[k], s)
		}
		for i := range n {
			if math.Float32bits(sums[0][i]) != math.Float32bits(sums[1][i]) {
				t.Fatalf("n %d: Add3 [%d] = %v, Go %v", n, i, sums[1][i], sums[0][i])
			}
			if math.Float64bits(accs[0][i]) != math.Float64bits(accs[1][i]) {
				t.Fatalf("n %d: AddF64 [%d] = %v, Go %v", n, i, accs[1][i], accs[0][i])
			}
			if math.Float32bits(scaled[0][i]) != math.Float32bits(scaled[1][i]) {
				t.Fatalf("n %d: ScaleF64 [%d] = %v, Go %v", n, i, scaled[1][i], scaled[0][i])
			}
			if want := (a[i] + b[i]) + c[i]; sums[0][i] != want {
				t.Fatalf("n %d: Go Add3 [%d] = %v, want %v", n, i, sums[0][i], want)
			}
		}
	}
}
