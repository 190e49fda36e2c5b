package tensor

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestAttentionHelpers checks Scores and Mix against their definitions
// (float64 sums) and the assembly this CPU runs (AVX2, NEON) against the
// Go loops, bit for bit, for sequence lengths around the multiples of 8.
func TestAttentionHelpers(t *testing.T) {
	defer restoreKernels()
	rng := rand.New(rand.NewPCG(51, 52))
	kernels := []struct {
		name      string
		have      bool
		avx, neon bool
	}{{"go", true, false, false}, {"avx2", HaveAVX2, true, false}, {"neon", HaveNEON, false, true}}
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
		got := make([][]float32, len(kernels))
		mixed := make([][HeadDim]float32, len(kernels))
		for k, kn := range kernels {
			if !kn.have {
				continue
			}
			UseAVX2, UseNEON = kn.avx, kn.neon
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
			for k := 1; k < len(kernels); k++ {
				if got[k] != nil && math.Float32bits(got[k][j]) != math.Float32bits(got[0][j]) {
					t.Fatalf("n %d: score %d: %s %v, Go %v", n, j, kernels[k].name, got[k][j], got[0][j])
				}
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
			for k := 1; k < len(kernels); k++ {
				if kernels[k].have && math.Float32bits(mixed[k][c]) != math.Float32bits(mixed[0][c]) {
					t.Fatalf("n %d: mix %d: %s %v, Go %v", n, c, kernels[k].name, mixed[k][c], mixed[0][c])
				}
			}
		}
	}
}

// TestAttend checks one head's attention against its definition
// (float64), and with AVX2 the one-call kernels (AVX2, and AVX-512 where
// the CPU has it) against the step-by-step path on the AVX2 helpers, bit
// for bit, for sequence lengths around the
// multiples of 8; nothing of dst but the head's columns is written.
func TestAttend(t *testing.T) {
	defer restoreKernels()
	rng := rand.New(rand.NewPCG(53, 54))
	const hidden, stride = 384, 3 * 384
	const qo, ko, vo = 2 * HeadDim, hidden + 2*HeadDim, 2*hidden + 2*HeadDim // head 2
	scale := float32(1 / math.Sqrt(HeadDim))
	for _, n := range []int{1, 2, 7, 8, 9, 15, 16, 17, 31, 33, 128} {
		tp := (n + 15) &^ 15
		qkv := make([]float32, n*stride)
		for i := range qkv {
			qkv[i] = float32(rng.NormFloat64() * 2)
		}
		run := func(vnni, avx, fused bool) []float32 {
			UseVNNI, UseAVX2 = vnni, avx
			dst := make([]float32, n*hidden)
			for i := range dst {
				dst[i] = -7
			}
			kt := make([]float32, HeadDim*tp)
			sc := make([]float32, n*tp)
			for i := range kt {
				kt[i] = float32(math.NaN()) // never read as such
			}
			d, q, k, v := dst[2*HeadDim:], qkv[qo:], qkv[ko:], qkv[vo:]
			if fused {
				Attend(d, hidden, q, k, v, stride, n, scale, kt, sc)
			} else {
				attendGo(d, hidden, q, k, v, stride, n, scale, kt, sc)
			}
			return dst
		}
		goPath := run(false, false, false)
		for i := range n {
			s := make([]float64, n)
			var mx, sum float64 = math.Inf(-1), 0
			for j := range n {
				for c := range HeadDim {
					s[j] += float64(qkv[i*stride+qo+c]) * float64(qkv[j*stride+ko+c])
				}
				s[j] *= float64(scale)
				mx = max(mx, s[j])
			}
			for j := range s {
				s[j] = math.Exp(s[j] - mx)
				sum += s[j]
			}
			for c := range hidden {
				got := goPath[i*hidden+c]
				if c < 2*HeadDim || c >= 3*HeadDim {
					if got != -7 {
						t.Fatalf("n %d: row %d column %d written: %v", n, i, c, got)
					}
					continue
				}
				var want float64
				for j := range n {
					want += s[j] / sum * float64(qkv[j*stride+vo+c-2*HeadDim])
				}
				if d := math.Abs(float64(got) - want); d > 1e-5*(1+math.Abs(want)) {
					t.Fatalf("n %d: row %d column %d = %v, want %v", n, i, c, got, want)
				}
			}
		}
		if !HaveAVX2 {
			continue
		}
		steps, fused := run(false, true, false), run(false, true, true)
		fused512 := fused
		if HaveVNNI {
			fused512 = run(true, true, true)
		}
		for i := range steps {
			if math.Float32bits(fused[i]) != math.Float32bits(steps[i]) {
				t.Fatalf("n %d: value %d: one call %v, step by step %v", n, i, fused[i], steps[i])
			}
			if math.Float32bits(fused512[i]) != math.Float32bits(steps[i]) {
				t.Fatalf("n %d: value %d: one call on AVX-512 %v, step by step %v", n, i, fused512[i], steps[i])
			}
			if d := math.Abs(float64(steps[i]) - float64(goPath[i])); d > 1e-5*(1+math.Abs(float64(goPath[i]))) {
				t.Fatalf("n %d: value %d: AVX2 %v, Go %v", n, i, steps[i], goPath[i])
			}
		}
	}
}

// BenchmarkAttend runs the 12 heads of a task's 17 rows with each
// kernel this CPU runs.
func BenchmarkAttend(b *testing.B) {
	defer restoreKernels()
	rng := rand.New(rand.NewPCG(55, 56))
	const hidden, stride, n = 384, 3 * 384, 17
	qkv := make([]float32, n*stride)
	for i := range qkv {
		qkv[i] = float32(rng.NormFloat64() * 2)
	}
	dst := make([]float32, n*hidden)
	tp := (n + 15) &^ 15
	kt, sc := make([]float32, HeadDim*tp), make([]float32, n*tp)
	scale := float32(1 / math.Sqrt(HeadDim))
	for _, k := range vectorKernels() {
		b.Run(k.name, func(b *testing.B) {
			k.on()
			for b.Loop() {
				for h := range hidden / HeadDim {
					qo, ko, vo := h*HeadDim, hidden+h*HeadDim, 2*hidden+h*HeadDim
					Attend(dst[h*HeadDim:], hidden, qkv[qo:], qkv[ko:], qkv[vo:], stride, n, scale, kt, sc)
				}
			}
		})
	}
}
