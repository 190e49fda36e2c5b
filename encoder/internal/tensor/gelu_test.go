package tensor

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestGELU: the AVX-512, AVX2 and NEON loops give the Go loop's bits, over GELU's range,
// the clamp's ends, beyond them and a ragged tail.
func TestGELU(t *testing.T) {
	defer restoreKernels()
	rng := rand.New(rand.NewPCG(17, 18))
	x := make([]float32, 1003)
	for i := range x {
		x[i] = float32(rng.NormFloat64() * 4)
	}
	copy(x, []float32{-geluClamp, geluClamp, math.Nextafter32(-geluClamp, -9), math.Nextafter32(geluClamp, 9),
		-20, 20, 0, float32(math.Copysign(0, -1)), 5.5, -5.5, 1e-30, -1e-30, math.MaxFloat32, -math.MaxFloat32})
	want := append([]float32(nil), x...)
	UseVNNI, UseAVX2, UseNEON = false, false, false
	GELU(want)
	// 1003 values: 992 on AVX-512, then 8 on AVX2, then 3 in Go; 1000
	// on NEON, then 3 in Go.
	for _, k := range []struct {
		name            string
		vnni, avx, neon bool
	}{{"avx512", HaveVNNI, HaveAVX2, false}, {"avx2", false, HaveAVX2, false}, {"neon", false, false, HaveNEON}} {
		if !k.avx && !k.neon {
			continue // this CPU does not run it
		}
		UseVNNI, UseAVX2, UseNEON = k.vnni, k.avx, k.neon
		got := append([]float32(nil), x...)
		GELU(got)
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%s: GELU(%v) = %v, Go loop %v", k.name, x[i], got[i], want[i])
			}
		}
	}
	for _, c := range []struct{ x, want float32 }{
		{-20, 0}, {-geluClamp, 0}, {-math.MaxFloat32, 0}, {0, 0},
		{20, 20}, {geluClamp, geluClamp}, {math.MaxFloat32, math.MaxFloat32},
	} {
		if g := gelu1(c.x); g != c.want {
			t.Errorf("GELU(%v) = %v, want %v", c.x, g, c.want)
		}
	}
}

// TestGELUError bounds GELU's error against x·Φ(x) from math.Erf, over
// a fine grid of [-12, 12] and every float32 near the clamp: within
// 2.7e-7·|x| (every float32 of ±[1e-4, 12], checked once: 2.65e-7).
func TestGELUError(t *testing.T) {
	worst, at := 0.0, float32(0)
	check := func(x float32) {
		e := float64(x) * 0.5 * (1 + math.Erf(float64(x)/math.Sqrt2))
		g := gelu1(x)
		if d := math.Abs(float64(g)-e) / math.Abs(float64(x)); d > worst {
			worst, at = d, x
		}
	}
	for i := -120000; i <= 120000; i++ {
		if i != 0 {
			check(float32(i) * 1e-4)
		}
	}
	for _, c := range []float32{geluClamp, -geluClamp} {
		x := c
		for range 20000 {
			x = math.Nextafter32(x, 0)
			check(x)
		}
	}
	for x := float32(1e-30); x < 1e-2; x *= 1.01 {
		check(x)
		check(-x)
	}
	if worst > 2.7e-7 {
		t.Errorf("worst |GELU(x) - x·Φ(x)|/|x| = %.3g at %v, want ≤ 2.7e-7", worst, at)
	}
	t.Logf("worst |GELU(x) - x·Φ(x)|/|x| = %.3g at %v", worst, at)
}

// BenchmarkGELU runs GELU over a feed-forward layer's output of 20 rows
// with each loop this CPU runs.
func BenchmarkGELU(b *testing.B) {
	defer restoreKernels()
	rng := rand.New(rand.NewPCG(19, 20))
	src := make([]float32, 20*1536)
	for i := range src {
		src[i] = float32(rng.NormFloat64() * 2)
	}
	x := make([]float32, len(src))
	for _, k := range vectorKernels() {
		b.Run(k.name, func(b *testing.B) {
			k.on()
			for b.Loop() {
				copy(x, src)
				GELU(x)
			}
		})
	}
}
