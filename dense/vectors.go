package dense

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
)

// VectorOptions tunes a [Vectors] store. A nil *VectorOptions keeps
// float32 vectors and searches on every available core.
type VectorOptions struct {
	// Int8 stores each vector as int8 with one float32 scale per vector:
	// 4x less memory, scores within about 0.01 of exact. The query is
	// quantized the same way and dot products are summed in int32. In
	// pure Go this costs about 1.5x the CPU of float32; use it when memory,
	// not time, is short.
	Int8 bool
	// Parallel bounds the goroutines of one search. If zero,
	// GOMAXPROCS. Small stores are always searched on one goroutine.
	Parallel int
}

// Vectors is an immutable store of L2-normalized vectors searched by exact
// cosine similarity. It is safe for concurrent searches.
type Vectors struct {
	names    []string
	dim      int
	f32      []float32 // n*dim, normalized; nil with Int8
	i8       []int8    // n*dim with Int8
	scale    []float32 // per vector, with Int8: value = i8 * scale
	parallel int
}

// Scored is one search result.
type Scored struct {
	// Index is the vector's position in the slice given to NewVectors.
	Index int
	Name  string
	// Score is the cosine similarity in [-1,1].
	Score float64
}

// NewVectors normalizes and stores vecs; names[i] names vecs[i] and breaks
// score ties. All vectors must have the same length. A zero vector is kept
// and scores 0 against every query.
func NewVectors(names []string, vecs [][]float32, opts *VectorOptions) (*Vectors, error) {
	if len(names) != len(vecs) {
		return nil, fmt.Errorf("vectors: %d names for %d vectors", len(names), len(vecs))
	}
	var o VectorOptions
	if opts != nil {
		o = *opts
	}
	if o.Parallel <= 0 {
		o.Parallel = runtime.GOMAXPROCS(0)
	}
	v := &Vectors{names: slices.Clone(names), parallel: o.Parallel}
	if len(vecs) == 0 {
		return v, nil
	}
	v.dim = len(vecs[0])
	n := len(vecs)
	if o.Int8 {
		v.i8 = make([]int8, n*v.dim)
		v.scale = make([]float32, n)
	} else {
		v.f32 = make([]float32, n*v.dim)
	}
	buf := make([]float32, v.dim)
	for i, x := range vecs {
		if len(x) != v.dim {
			return nil, fmt.Errorf("vectors: vector %d (%s) has %d dimensions, vector 0 has %d", i, names[i], len(x), v.dim)
		}
		if err := normalize(buf, x); err != nil {
			return nil, fmt.Errorf("vectors: vector %d (%s): %w", i, names[i], err)
		}
		if o.Int8 {
			v.scale[i] = quantize(v.i8[i*v.dim:(i+1)*v.dim], buf)
		} else {
			copy(v.f32[i*v.dim:], buf)
		}
	}
	return v, nil
}

// Len returns the number of vectors.
func (v *Vectors) Len() int { return len(v.names) }

// Dim returns the vectors' length (0 for an empty store).
func (v *Vectors) Dim() int { return v.dim }

// Int8 reports whether the store is quantized.
func (v *Vectors) Int8() bool { return v.i8 != nil }

// normalize writes x / |x| into dst. A zero vector stays zero.
func normalize(dst, x []float32) error {
	var ss float64
	for _, f := range x {
		if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
			return fmt.Errorf("holds %v", f)
		}
		ss += float64(f) * float64(f)
	}
	if ss == 0 {
		clear(dst)
		return nil
	}
	inv := 1 / math.Sqrt(ss)
	for i, f := range x {
		dst[i] = float32(float64(f) * inv)
	}
	return nil
}

// quantize writes x as int8 into dst, scaled so the largest magnitude is
// 127, and returns the scale that maps dst back.
func quantize(dst []int8, x []float32) float32 {
	var m float32
	for _, f := range x {
		m = max(m, abs32(f))
	}
	if m == 0 {
		clear(dst)
		return 0
	}
	s := 127 / m
	for i, f := range x {
		dst[i] = int8(math.Round(float64(f * s)))
	}
	return m / 127
}

func abs32(f float32) float32 {
	if f < 0 {
		return -f
	}
	return f
}

// parallelMin is the least number of vectors worth a goroutine.
const parallelMin = 4096

// Search returns the k vectors most similar to query (all when k <= 0),
// best first, ties broken by name. The query need not be normalized.
func (v *Vectors) Search(query []float32, k int) ([]Scored, error) {
	sc, _, err := v.SearchMoments(query, k)
	return sc, err
}

// Moments are the mean and standard deviation of a query's similarity
// over every vector of the store, which z-score fusion scales by.
type Moments struct {
	Mean, Std float64
	// N is the number of vectors they were taken over.
	N int
}

// SearchMoments is [Vectors.Search] that also returns the similarity's
// moments over the whole store, computed from the same scores.
func (v *Vectors) SearchMoments(query []float32, k int) ([]Scored, Moments, error) {
	if len(v.names) == 0 {
		return nil, Moments{}, nil
	}
	scores, err := v.scoreRows([][]float32{query})
	if err != nil {
		return nil, Moments{}, err
	}
	defer scores.release()
	sc, mo := v.topOfRow(scores.rows[0], k)
	return sc, mo, nil
}

func moments(sum, sq float64, n int) Moments {
	mean := sum / float64(n)
	return Moments{Mean: mean, Std: math.Sqrt(max(sq/float64(n)-mean*mean, 0)), N: n}
}

// rowQuery is one distinct query of scoreRows: normalized, quantized
// too for an Int8 store, and the row its scores go to.
type rowQuery struct {
	f     []float32
	i     []int8
	scale float32
	row   []float32
}

// newRowQuery checks a query's length, normalizes it and, for an Int8
// store, quantizes it, as every search of v scores it.
func (v *Vectors) newRowQuery(q []float32) (*rowQuery, error) {
	if len(q) != v.dim {
		return nil, fmt.Errorf("vectors: query has %d dimensions, the store %d", len(q), v.dim)
	}
	u := &rowQuery{f: make([]float32, v.dim)}
	if err := normalize(u.f, q); err != nil {
		return nil, fmt.Errorf("vectors: query: %w", err)
	}
	if v.i8 != nil {
		u.i = make([]int8, v.dim)
		u.scale = quantize(u.i, u.f)
	}
	return u, nil
}

// scores are the similarity rows of a search's query vectors (see
// Vectors.scoreRows). Their memory is reused: a select over 10,000
// cards would otherwise leave 40 KB a query vector to the garbage
// collector. Release them once nothing reads the rows any more.
type scores struct {
	rows [][]float32
	buf  *[]float32
}

// scoreBufs holds released scores' memory (*[]float32).
var scoreBufs sync.Pool

// poisonReleased makes release overwrite the rows with NaN, so that a
// search reading its rows after releasing them gives NaN scores (tests).
var poisonReleased atomic.Bool

// release returns the rows' memory for reuse; the rows must not be read
// after. It may be called on nil scores, and more than once.
func (s *scores) release() {
	if s == nil || s.buf == nil {
		return
	}
	if poisonReleased.Load() {
		b := (*s.buf)[:cap(*s.buf)]
		for i := range b {
			b[i] = float32(math.NaN())
		}
	}
	scoreBufs.Put(s.buf)
	s.buf, s.rows = nil, nil
}

// scoreRows scores every vector against each query: rows[j][i] is query
// j's cosine similarity with vector i, as a float32, the bits
// [Vectors.Search] and [Vectors.Similarities] give. A query given twice
// (the same slice, as [Index.EmbedQueries] returns a text given twice)
// is scored once, and its rows share storage. The store is read once
// for all the queries, a block of vectors at a time, so a task's
// sentences and its steps (the same texts, see [QueryParts]) cost one
// pass over memory, not one each: with 10,000 cards the vectors are 15
// MB, and reading them is what a scan costs (BenchmarkSelect). Stores
// of parallelMin vectors and more are scored on several goroutines.
func (v *Vectors) scoreRows(qs [][]float32) (*scores, error) {
	n := len(v.names)
	var uniq []*rowQuery
	which := make([]int, len(qs)) // qs[j] is uniq[which[j]]
queries:
	for j, q := range qs {
		// A search has a few query vectors: a look back finds a repeat.
		for p := range j {
			if len(q) > 0 && len(qs[p]) == len(q) && &qs[p][0] == &q[0] {
				which[j] = which[p]
				continue queries
			}
		}
		u, err := v.newRowQuery(q)
		if err != nil {
			return nil, err
		}
		which[j] = len(uniq)
		uniq = append(uniq, u)
	}
	// Every score is written below, so reused memory need not be cleared.
	buf, _ := scoreBufs.Get().(*[]float32)
	if buf == nil || cap(*buf) < len(uniq)*n {
		b := make([]float32, len(uniq)*n)
		buf = &b
	}
	flat := (*buf)[:len(uniq)*n]
	for j, u := range uniq {
		u.row = flat[j*n : (j+1)*n : (j+1)*n]
	}
	sc := &scores{rows: make([][]float32, len(qs)), buf: buf}
	for j := range qs {
		sc.rows[j] = uniq[which[j]].row
	}
	workers := min(v.parallel, n/parallelMin)
	if workers <= 1 {
		v.scoreRange(uniq, 0, n)
		return sc, nil
	}
	var wg sync.WaitGroup
	chunk := (n + workers - 1) / workers
	for lo := 0; lo < n; lo += chunk {
		wg.Go(func() { v.scoreRange(uniq, lo, min(lo+chunk, n)) })
	}
	wg.Wait()
	return sc, nil
}

// scoreRange scores vectors [lo,hi) against each query into its row,
// a block of vectors at a time, each block read for all the queries.
func (v *Vectors) scoreRange(qs []*rowQuery, lo, hi int) {
	d := v.dim
	if v.i8 != nil {
		for i := lo; i < hi; i++ {
			w := v.i8[i*d : (i+1)*d]
			for _, u := range qs {
				u.row[i] = float32(dotInt8(u.i, w)) * u.scale * v.scale[i]
			}
		}
		return
	}
	for i0 := lo; i0 < hi; i0 += scanBlock {
		i1 := min(i0+scanBlock, hi)
		for _, u := range qs {
			dotsF32(u.row[i0:i1], u.f, v.f32[i0*d:])
		}
	}
}

// topOfRow returns the k best of a query's scores (all when k <= 0),
// best first, ties broken by name, and their moments. The sums run in
// chunks as the scan of a large store on several goroutines ran them,
// one after another, so a store's moments keep their bits whatever
// scored it.
func (v *Vectors) topOfRow(row []float32, k int) ([]Scored, Moments) {
	n := len(row)
	if k <= 0 || k > n {
		k = n
	}
	h := newHeap(k, v.names)
	chunk := n
	if workers := min(v.parallel, n/parallelMin); workers > 1 {
		chunk = (n + workers - 1) / workers
	}
	var sum, sq float64
	for lo := 0; lo < n; lo += chunk {
		var s1, s2 float64
		for i := lo; i < min(lo+chunk, n); i++ {
			s := row[i]
			h.offer(int32(i), s)
			s1 += float64(s)
			s2 += float64(s) * float64(s)
		}
		sum, sq = sum+s1, sq+s2
	}
	return h.sorted(), moments(sum, sq, n)
}

// scanBlock is how many vectors a call of dotsF32 scores.
const scanBlock = 64

// dotInt8 is dotF32 for int8 vectors, summed exactly in int32 (products
// are at most 127*127; overflow would take over 500,000 dimensions).
func dotInt8(a, b []int8) int32 {
	var s0, s1, s2, s3 int32
	for len(a) >= 8 && len(b) >= 8 {
		s0 += int32(a[0])*int32(b[0]) + int32(a[4])*int32(b[4])
		s1 += int32(a[1])*int32(b[1]) + int32(a[5])*int32(b[5])
		s2 += int32(a[2])*int32(b[2]) + int32(a[6])*int32(b[6])
		s3 += int32(a[3])*int32(b[3]) + int32(a[7])*int32(b[7])
		a, b = a[8:], b[8:]
	}
	for i := range min(len(a), len(b)) {
		s0 += int32(a[i]) * int32(b[i])
	}
	return s0 + s1 + s2 + s3
}

// scoreHeap keeps the best k (score, doc) pairs in a min-heap whose root
// is the worst kept: lower score, or equal score and later name.
type scoreHeap struct {
	k     int
	names []string
	items []heapItem
}

type heapItem struct {
	doc   int32
	score float32
}

func newHeap(k int, names []string) *scoreHeap {
	return &scoreHeap{k: k, names: names, items: make([]heapItem, 0, k)}
}

// better orders by score descending, then name ascending, then position.
func (h *scoreHeap) better(a, b heapItem) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	if na, nb := h.names[a.doc], h.names[b.doc]; na != nb {
		return na < nb
	}
	return a.doc < b.doc
}

func (h *scoreHeap) offer(doc int32, score float32) {
	it := heapItem{doc, score}
	if len(h.items) < h.k {
		h.items = append(h.items, it)
		h.up(len(h.items) - 1)
		return
	}
	root := h.items[0]
	if score < root.score || (score == root.score && !h.better(it, root)) {
		return
	}
	h.items[0] = it
	h.down(0)
}

func (h *scoreHeap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h.better(h.items[p], h.items[i]) {
			return
		}
		h.items[p], h.items[i] = h.items[i], h.items[p]
		i = p
	}
}

func (h *scoreHeap) down(i int) {
	n := len(h.items)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		w := l // the worse child
		if r := l + 1; r < n && h.better(h.items[l], h.items[r]) {
			w = r
		}
		if !h.better(h.items[i], h.items[w]) {
			return
		}
		h.items[i], h.items[w] = h.items[w], h.items[i]
		i = w
	}
}

// sorted returns the kept items best first.
func (h *scoreHeap) sorted() []Scored {
	items := slices.Clone(h.items)
	slices.SortFunc(items, func(a, b heapItem) int {
		switch {
		case h.better(a, b):
			return -1
		case h.better(b, a):
			return 1
		}
		return 0
	})
	out := make([]Scored, len(items))
	for i, it := range items {
		out[i] = Scored{Index: int(it.doc), Name: h.names[it.doc], Score: float64(it.score)}
	}
	return out
}

// Similarities returns the query's cosine similarity to the vectors at
// positions idx, as [Vectors.Search] scores them.
func (v *Vectors) Similarities(query []float32, idx []int) ([]float64, error) {
	u, err := v.newRowQuery(query)
	if err != nil {
		return nil, err
	}
	q, qi, qscale := u.f, u.i, u.scale
	d := v.dim
	out := make([]float64, len(idx))
	for _, i := range idx {
		if i < 0 || i >= len(v.names) {
			return nil, fmt.Errorf("vectors: no vector %d of %d", i, len(v.names))
		}
	}
	if qi != nil {
		for j, i := range idx {
			out[j] = float64(float32(dotInt8(qi, v.i8[i*d:(i+1)*d])) * qscale * v.scale[i])
		}
		return out, nil
	}
	// Runs of consecutive positions are scored a block at a time.
	var buf [scanBlock]float32
	for j := 0; j < len(idx); {
		r := 1
		for r < scanBlock && j+r < len(idx) && idx[j+r] == idx[j]+r {
			r++
		}
		dotsF32(buf[:r], q, v.f32[idx[j]*d:])
		for k, s := range buf[:r] {
			out[j+k] = float64(s)
		}
		j += r
	}
	return out, nil
}
