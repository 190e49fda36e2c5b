package tensor

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestSoftmax: both paths give probabilities within float32's rounding
// of float64's, summing to 1, with the padding cleared.
func TestSoftmax(t *testing.T) {
	defer restoreKernels()
	rng := rand.New(rand.NewPCG(21, 22))
	for _, avx := range []bool{false, HaveAVX2} {
		UseAVX2 = avx
		for n := 1; n <= 40; n++ {
			row := make([]float32, (n+7)&^7)
			for j := range row {
				row[j] = float32(rng.NormFloat64() * 30)
			}
			row[0] = -1e4 // far below the others: its weight is 0
			x := append([]float32(nil), row...)
			Softmax(row, n, 0.25)
			var mx, sum float64 = math.Inf(-1), 0
			for _, v := range x[:n] {
				mx = max(mx, float64(v*0.25))
			}
			for _, v := range x[:n] {
				sum += math.Exp(float64(v*0.25) - mx)
			}
			var total float64
			for j, v := range row {
				want, arg := 0.0, 0.0
				if j < n {
					arg = float64(x[j]*0.25) - mx
					want = math.Exp(arg) / sum
				}
				// float32's rounding of the argument moves e^arg by
				// |arg|·2^-24 relative.
				if math.Abs(float64(v)-want) > (4e-7+6e-8*math.Abs(arg))*want+1e-30 {
					t.Fatalf("avx %v n %d: [%d] = %g, want %g", avx, n, j, v, want)
				}
				total += float64(v)
			}
			if math.Abs(total-1) > 1e-5 {
				t.Fatalf("avx %v n %d: sum %v", avx, n, total)
			}
		}
	}
}
