package dense

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestDots: dotsF32 against dotF32 a vector at a time (with AVX2, the
// assembly against the Go loop, bit for bit) and against the float64 dot
// product, over lengths around the multiples of 8 and counts around the
// multiples of 4.
func TestDots(t *testing.T) {
	defer func(h bool) { haveAVX2 = h }(haveAVX2)
	avx := haveAVX2
	rng := rand.New(rand.NewPCG(7, 8))
	for _, d := range []int{1, 3, 7, 8, 9, 15, 16, 17, 31, 383, 384, 385, 1539} {
		for _, n := range []int{0, 1, 2, 3, 4, 5, 7, 8, 9, 13} {
			q := make([]float32, d)
			m := make([]float32, n*d+5) // a longer store than scored
			for _, x := range [][]float32{q, m} {
				for i := range x {
					x[i] = float32(rng.NormFloat64())
				}
			}
			goLoop := make([]float32, n)
			haveAVX2 = false
			dotsF32(goLoop, q, m)
			for i := range n {
				var want float64
				for j := range d {
					want += float64(q[j]) * float64(m[i*d+j])
				}
				if got := float64(goLoop[i]); math.Abs(got-want) > 1e-5*float64(d) {
					t.Fatalf("d %d, n %d: vector %d: %v, want %v", d, n, i, got, want)
				}
				if one := dotF32(q, m[i*d:(i+1)*d]); math.Float32bits(one) != math.Float32bits(goLoop[i]) {
					t.Fatalf("d %d, n %d: vector %d: dotsF32 %v, dotF32 %v", d, n, i, goLoop[i], one)
				}
			}
			if !avx {
				continue
			}
			haveAVX2 = true
			got := make([]float32, n+1)
			got[n] = 42
			dotsF32(got[:n], q, m)
			for i := range n {
				if math.Float32bits(got[i]) != math.Float32bits(goLoop[i]) {
					t.Fatalf("d %d, n %d: vector %d: AVX2 %v, Go %v", d, n, i, got[i], goLoop[i])
				}
			}
			if got[n] != 42 {
				t.Fatalf("d %d, n %d: wrote past out", d, n)
			}
		}
	}
}

// BenchmarkDots scores a query against a catalog's vectors (384
// dimensions) with each loop this CPU runs: 527 vectors (the server
// benchmark's catalog, in cache) and 10,000.
func BenchmarkDots(b *testing.B) {
	defer func(h bool) { haveAVX2 = h }(haveAVX2)
	avx := haveAVX2
	rng := rand.New(rand.NewPCG(9, 10))
	for _, n := range []int{527, 10_000} {
		q := make([]float32, benchDim)
		m := make([]float32, n*benchDim)
		for _, x := range [][]float32{q, m} {
			for i := range x {
				x[i] = float32(rng.NormFloat64())
			}
		}
		out := make([]float32, n)
		for _, k := range []struct {
			name string
			avx  bool
		}{{"avx2", avx}, {"go", false}} {
			if k.name == "avx2" && !avx {
				continue
			}
			b.Run(fmt.Sprintf("n=%d/%s", n, k.name), func(b *testing.B) {
				haveAVX2 = k.avx
				runs := 0
				for b.Loop() {
					dotsF32(out, q, m)
					runs++
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(runs*n), "ns/vector")
			})
		}
	}
}

// TestSimilarities: a query's similarities at any positions (runs of
// consecutive ones, scattered ones, repeats) are Search's scores of those
// vectors, bit for bit, and a position out of range is an error.
func TestSimilarities(t *testing.T) {
	names, vecs := randomVectors(3, 150, 24)
	v, err := NewVectors(names, vecs, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, qs := randomVectors(4, 1, 24)
	all, err := v.Search(qs[0], 0)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]float64, v.Len())
	for _, s := range all {
		want[s.Index] = s.Score
	}
	idx := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23,
		24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45,
		46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 66, 149,
		7, 7, 3, 99, 100, 101, 0}
	got, err := v.Similarities(qs[0], idx)
	if err != nil {
		t.Fatal(err)
	}
	for j, i := range idx {
		if got[j] != want[i] {
			t.Fatalf("similarity %d (vector %d) = %v, Search %v", j, i, got[j], want[i])
		}
	}
	if _, err := v.Similarities(qs[0], []int{3, 150}); err == nil {
		t.Error("Similarities(vector 150 of 150): no error")
	}
}
