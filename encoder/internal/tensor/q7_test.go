package tensor

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// pack7For packs l for the 7-bit AVX2 kernel, with up to cols outlier
// columns observed on src.
func pack7For(t testing.TB, l *Linear, cols int, src []float32, rows int) {
	t.Helper()
	defer restoreKernels()
	UseVNNI, UseAVXVNNI, UseAVX2, UseU7 = false, false, true, true
	l.Observe(true)
	l.observe(src, rows)
	l.Observe(false)
	l.Outliers(cols)
	l.Pack()
	if l.P8 == nil || l.P8.Levels != levels7 {
		t.Fatalf("%dx%d not packed for the 7-bit kernel", l.In, l.Out)
	}
}

// TestPacked7Spec: the 7-bit AVX2 kernel gives exactly what the Go
// specification of the 8-bit product gives for inputs rounded to
// 0..127, for every row remainder, with and without bias and outlier
// columns, set and add; with VNNI on or off (the kernel needs only
// AVX2); and at the ends of its ranges, where a pair of products is
// ±2·127·127 or −2·127·128 (an input of 0..255 would saturate there).
func TestPacked7Spec(t *testing.T) {
	if !HaveAVX2 {
		t.Skip("no AVX2 on this machine: the 7-bit kernel does not run")
	}
	defer restoreKernels()
	rng := rand.New(rand.NewPCG(37, 38))
	for _, shape := range [][3]int{{1536, 64, 2}, {384, 96, 4}, {64, 32, 0}, {128, 32, 4}} {
		in, out, cols := shape[0], shape[1], shape[2]
		f := randomLinear(rng, in, out)
		q := *f
		q.W = Quantize(f.W.F, out, in)
		extreme := in == 128
		if extreme {
			// Every weight at an end of int8: +127 or −128, in runs.
			for i := range q.W.Q {
				q.W.Q[i] = 127
				if (i/3)%2 == 1 {
					q.W.Q[i] = 0x80
				}
			}
		}
		for rows := 1; rows <= 9; rows++ {
			src := make([]float32, rows*in)
			for i := range src {
				src[i] = float32(rng.NormFloat64())
			}
			for r := range rows {
				if extreme {
					// All of a row's values equal and positive: z = 0, every
					// input 127; or spread, one group of each.
					for k := range in {
						src[r*in+k] = 3
						if k >= Group && r%2 == 1 {
							src[r*in+k] = float32(k%5) - 4
						}
					}
					continue
				}
				src[r*in+in/3] = 30 // an outlier column
			}
			l := q
			l.P, l.P8 = nil, nil
			pack7For(t, &l, cols, src, rows)
			for _, vnni := range []bool{false, true} {
				if vnni && !HaveVNNI {
					continue
				}
				for _, add := range []bool{false, true} {
					for _, bias := range []bool{true, false} {
						l.B = f.B
						if !bias {
							l.B = nil
						}
						want := make([]float32, rows*out)
						for i := range want {
							want[i] = float32(i % 7)
						}
						got := slices.Clone(want)
						packed8Go(&l, want, src, rows, add)
						UseVNNI, UseAVX2 = vnni, true
						l.Apply(got, src, rows, add)
						restoreKernels()
						for i := range got {
							if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
								t.Fatalf("%dx%d rows %d vnni %v add %v bias %v: [%d] = %v, spec %v", in, out, rows, vnni, add, bias, i, got[i], want[i])
							}
						}
					}
				}
			}
			if extreme {
				b := new(q8buf)
				b.quantize8(src, rows, in, l.P8.Cols, levels7)
				for k := range in {
					if !slices.Contains(l.P8.Cols, k) && b.u[k] != levels7 {
						t.Fatalf("row 0's input %d rounds to %d, want %d (the end of the range)", k, b.u[k], levels7)
					}
				}
			}
		}
	}
}
