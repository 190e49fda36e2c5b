package dense

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/capbroker/capbroker/internal/testenv"
)

func randomVectors(seed uint64, n, dim int) ([]string, [][]float32) {
	r := rand.New(rand.NewPCG(seed, 7))
	names := make([]string, n)
	vecs := make([][]float32, n)
	flat := make([]float32, n*dim)
	for i := range vecs {
		names[i] = fmt.Sprintf("tool_%07d", i)
		vecs[i] = flat[i*dim : (i+1)*dim : (i+1)*dim]
		for j := range vecs[i] {
			vecs[i][j] = float32(r.NormFloat64())
		}
	}
	return names, vecs
}

// bruteForce ranks by float64 cosine, ties by name.
func bruteForce(names []string, vecs [][]float32, q []float32, k int) []Scored {
	norm := func(v []float32) float64 {
		var s float64
		for _, x := range v {
			s += float64(x) * float64(x)
		}
		return math.Sqrt(s)
	}
	qn := norm(q)
	out := make([]Scored, len(vecs))
	for i, v := range vecs {
		var d float64
		for j := range v {
			d += float64(v[j]) * float64(q[j])
		}
		s := 0.0
		if n := norm(v); n > 0 && qn > 0 {
			s = d / (n * qn)
		}
		out[i] = Scored{Index: i, Name: names[i], Score: s}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Score != out[j].Score {
			return out[i].Score > out[j].Score
		}
		return out[i].Name < out[j].Name
	})
	if k > 0 && k < len(out) {
		out = out[:k]
	}
	return out
}

func TestVectorsExactCosine(t *testing.T) {
	names, vecs := randomVectors(1, 3000, 96)
	_, queries := randomVectors(2, 20, 96)
	for _, parallel := range []int{1, 4} {
		v, err := NewVectors(names, vecs, &VectorOptions{Parallel: parallel})
		if err != nil {
			t.Fatal(err)
		}
		for qi, q := range queries {
			got, err := v.Search(q, 10)
			if err != nil {
				t.Fatal(err)
			}
			want := bruteForce(names, vecs, q, 10)
			if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-5)); diff != "" {
				t.Fatalf("parallel %d query %d (-want +got):\n%s", parallel, qi, diff)
			}
		}
	}
}

func TestVectorsParallelMatchesSerial(t *testing.T) {
	names, vecs := randomVectors(3, 3*parallelMin+17, 32)
	// Duplicates, so ties cross chunk boundaries.
	for i := 0; i < len(vecs); i += 1000 {
		vecs[i] = vecs[5]
	}
	_, queries := randomVectors(4, 5, 32)
	queries = append(queries, vecs[5])
	serial, _ := NewVectors(names, vecs, &VectorOptions{Parallel: 1})
	par, _ := NewVectors(names, vecs, &VectorOptions{Parallel: 3})
	for _, int8 := range []bool{false, true} {
		if int8 {
			serial, _ = NewVectors(names, vecs, &VectorOptions{Parallel: 1, Int8: true})
			par, _ = NewVectors(names, vecs, &VectorOptions{Parallel: 3, Int8: true})
		}
		for qi, q := range queries {
			a, _ := serial.Search(q, 25)
			b, _ := par.Search(q, 25)
			if diff := cmp.Diff(a, b); diff != "" {
				t.Errorf("int8 %v query %d: parallel differs from serial:\n%s", int8, qi, diff)
			}
		}
	}
	// The duplicates of vecs[5] tie at the top, in name order.
	got, _ := serial.Search(vecs[5], 3)
	if got[0].Name != "tool_0000000" || got[1].Name != "tool_0000005" || got[2].Name != "tool_0001000" {
		t.Errorf("ties not in name order: %v", got)
	}
}

func TestVectorsInt8CloseToExact(t *testing.T) {
	names, vecs := randomVectors(5, 2000, 128)
	exact, _ := NewVectors(names, vecs, nil)
	q8, _ := NewVectors(names, vecs, &VectorOptions{Int8: true})
	if !q8.Int8() || exact.Int8() {
		t.Fatal("Int8() wrong")
	}
	var overlap, total int
	for qi := range 50 {
		q := vecs[qi*7] // a stored vector: its own best match
		a, _ := exact.Search(q, 10)
		b, _ := q8.Search(q, 10)
		if b[0].Index != qi*7 {
			t.Errorf("query %d: int8 top-1 is %d", qi, b[0].Index)
		}
		for i := range b {
			if math.Abs(b[i].Score-a[i].Score) > 0.02 {
				t.Errorf("query %d rank %d: int8 score %.4f vs exact %.4f", qi, i, b[i].Score, a[i].Score)
			}
		}
		ia := map[int]bool{}
		for _, s := range a {
			ia[s.Index] = true
		}
		for _, s := range b {
			if ia[s.Index] {
				overlap++
			}
			total++
		}
	}
	if float64(overlap)/float64(total) < 0.8 {
		t.Errorf("int8 top-10 overlaps exact top-10 by %d/%d", overlap, total)
	}
}

func TestVectorsEdgeCases(t *testing.T) {
	names := []string{"b", "a", "zero"}
	vecs := [][]float32{{1, 0}, {1, 0}, {0, 0}}
	v, err := NewVectors(names, vecs, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := v.Search([]float32{2, 0}, 0)
	want := []Scored{{Index: 1, Name: "a", Score: 1}, {Index: 0, Name: "b", Score: 1}, {Index: 2, Name: "zero", Score: 0}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("k=0 (-want +got):\n%s", diff)
	}
	if _, err := v.Search([]float32{1, 2, 3}, 1); err == nil || !strings.Contains(err.Error(), "3 dimensions") {
		t.Errorf("wrong query length: %v", err)
	}
	if _, err := NewVectors([]string{"x", "y"}, [][]float32{{1, 2}, {1}}, nil); err == nil || !strings.Contains(err.Error(), "vector 1 (y)") {
		t.Errorf("ragged vectors: %v", err)
	}
	if _, err := NewVectors([]string{"x"}, [][]float32{{float32(math.NaN())}}, nil); err == nil || !strings.Contains(err.Error(), "NaN") {
		t.Errorf("NaN: %v", err)
	}
	if _, err := NewVectors([]string{"x"}, nil, nil); err == nil {
		t.Error("names without vectors accepted")
	}
	empty, _ := NewVectors(nil, nil, nil)
	if got, err := empty.Search([]float32{1}, 3); got != nil || err != nil {
		t.Errorf("empty store: %v, %v", got, err)
	}
}

// benchStores holds the benchmark stores, built once per size.
var benchStores sync.Map // string -> *Vectors

// benchDim is the vector length of the benchmarks: small open models
// (all-MiniLM, bge-small) use 384; nomic-embed-text 768; OpenAI 1536.
const benchDim = 384

func benchStore(b *testing.B, n int, int8 bool) *Vectors {
	key := fmt.Sprint(n, int8)
	if v, ok := benchStores.Load(key); ok {
		return v.(*Vectors)
	}
	names, vecs := randomVectors(uint64(n), n, benchDim)
	v, err := NewVectors(names, vecs, &VectorOptions{Int8: int8})
	if err != nil {
		b.Fatal(err)
	}
	benchStores.Store(key, v)
	return v
}

// BenchmarkSearch measures one exact top-10 search over random vectors
// (no endpoint is called).
func BenchmarkSearch(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		for _, int8 := range []bool{false, true} {
			name := fmt.Sprintf("n=%dk/dim=%d/float32", n/1000, benchDim)
			if int8 {
				name = strings.Replace(name, "float32", "int8", 1)
			}
			b.Run(name, func(b *testing.B) {
				v := benchStore(b, n, int8)
				_, qs := randomVectors(99, 16, benchDim)
				b.ReportAllocs()
				b.ResetTimer()
				cpu0 := testenv.CPUTime()
				i := 0
				for b.Loop() {
					if _, err := v.Search(qs[i%len(qs)], 10); err != nil {
						b.Fatal(err)
					}
					i++
				}
				// CPU time, summed over cores, is steadier than wall time
				// on a shared machine.
				if c := testenv.CPUTime() - cpu0; c > 0 {
					b.ReportMetric(float64(c.Nanoseconds())/float64(b.N), "cpu-ns/op")
				}
			})
		}
	}
}

func BenchmarkNewVectors10k(b *testing.B) {
	names, vecs := randomVectors(1, 10_000, benchDim)
	for b.Loop() {
		if _, err := NewVectors(names, vecs, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// TestScoreRows scores several queries in one pass, a query given twice
// among them, and checks each score against Similarities (which scores a
// vector at a time) bit for bit, on small and large stores, float32 and
// int8, on one goroutine and several; and that a query scored in a batch
// is searched exactly as alone (SearchMoments, whose scores go to memory
// released by the search before: reused memory holds no stale score).
func TestScoreRows(t *testing.T) {
	for _, tc := range []struct {
		n        int
		int8     bool
		parallel int
	}{
		{5, false, 1},
		{300, false, 3},
		{300, true, 1},
		{2*parallelMin + 17, false, 3},
		{2*parallelMin + 17, true, 3},
		{2*parallelMin + 17, false, 1},
	} {
		t.Run(fmt.Sprintf("n=%d/int8=%v/parallel=%d", tc.n, tc.int8, tc.parallel), func(t *testing.T) {
			names, vecs := randomVectors(11, tc.n, 48)
			v, err := NewVectors(names, vecs, &VectorOptions{Int8: tc.int8, Parallel: tc.parallel})
			if err != nil {
				t.Fatal(err)
			}
			_, qs := randomVectors(12, 3, 48)
			qs = append(qs, qs[1], vecs[2]) // qs[1] twice; a stored vector
			sc, err := v.scoreRows(qs)
			if err != nil {
				t.Fatal(err)
			}
			defer sc.release()
			rows := sc.rows
			if &rows[3][0] != &rows[1][0] {
				t.Error("a query given twice was scored twice")
			}
			all := make([]int, tc.n)
			for i := range all {
				all[i] = i
			}
			for j, q := range qs {
				want, err := v.Similarities(q, all)
				if err != nil {
					t.Fatal(err)
				}
				for i, w := range want {
					if float64(rows[j][i]) != w {
						t.Fatalf("query %d, vector %d: scored %v, Similarities %v", j, i, rows[j][i], w)
					}
				}
				alone, amo, err := v.SearchMoments(q, 20)
				if err != nil {
					t.Fatal(err)
				}
				batch, bmo := v.topOfRow(rows[j], 20)
				if diff := cmp.Diff(alone, batch); diff != "" || amo != bmo {
					t.Errorf("query %d in a batch: moments %+v, alone %+v; hits (-alone +batch):\n%s", j, bmo, amo, diff)
				}
				// The moments are the scores' mean and deviation, their
				// sums taken as the parallel scan took them before the
				// scores were kept (so their bits did not change): in
				// chunks of ceil(n/workers), one after another.
				chunk := tc.n
				if workers := min(tc.parallel, tc.n/parallelMin); workers > 1 {
					chunk = (tc.n + workers - 1) / workers
				}
				var sum, sq float64
				for lo := 0; lo < tc.n; lo += chunk {
					var s1, s2 float64
					for _, w := range want[lo:min(lo+chunk, tc.n)] {
						s1 += w
						s2 += w * w
					}
					sum, sq = sum+s1, sq+s2
				}
				if wmo := moments(sum, sq, tc.n); amo != wmo {
					t.Errorf("query %d: moments %+v, want %+v", j, amo, wmo)
				}
				mean := sum / float64(tc.n)
				if std := math.Sqrt(sq/float64(tc.n) - mean*mean); math.Abs(amo.Mean-mean) > 1e-9 || math.Abs(amo.Std-std) > 1e-9 || amo.N != tc.n {
					t.Errorf("query %d: moments %+v, want mean %v std %v over %d", j, amo, mean, std, tc.n)
				}
			}
			if _, err := v.scoreRows([][]float32{qs[0], qs[0][:10]}); err == nil {
				t.Error("a query of the wrong length: no error")
			}
		})
	}
}
