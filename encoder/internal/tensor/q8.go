package tensor

import (
	"math"
	"slices"
	"sync"
	"unsafe"
)

// Products with int8 inputs. On a CPU with AVX-512 VNNI a layer's input
// is rounded to 8 bits and multiplied by its int8 weights with VPDPBUSD
// (unsigned 8-bit × signed 8-bit, four products summed into each int32
// lane: twice the multiply-adds of an instruction of the int16 kernel);
// on one with AVX-VNNI but no AVX-512 (Intel's client CPUs since Alder
// Lake) with the same instruction on ymm registers (q8avxvnni.go), with
// AMX on tiles (q8amx.go), and on arm64 with NEON's SDOT, signed × signed
// (q8_arm64.go): the same bits everywhere.
// Eight bits are too few for a whole row of a transformer's activations,
// so the rounding is finer than a row's:
//
//   - each group of 64 inputs of a row (the weights' scale group) gets its
//     own range: the smallest and largest value (and zero), in 255 steps,
//     so a row's large values only coarsen their own group, and inputs
//     that are all of one sign (GELU's) use every step;
//   - a few input columns of a layer whose values dwarf the rest (BERT's
//     layer norms put them in the same few dimensions whatever the text:
//     28 against a median of 1.7) are taken out of the rounding and
//     added in float32 ([Linear.Outliers], found once by [Linear.Observe]).
//
// The integer sum of each group is exact: the kernels sum (u − z)·w, u the
// 8-bit input and z its group's zero point (the correction −z·Σw is one
// VPDPWSSD a group and block; SDOT sums (u − 128)·w, corrected by
// (128 − z)·Σw with one MLA), so every kernel and the Go specification
// agree bit for bit. On the golden inputs the vectors stay within cosine 0.999 of
// the reference (worst 0.9992; internal/bert's TestInt8InPlace).

// MaxOutliers is how many input columns of a layer are kept out of the
// 8-bit rounding.
const MaxOutliers = 4

// Packed8 is an int8 matrix laid out for the 8-bit kernel: blocks of 16
// outputs; within a block, each quad of inputs k..k+3 holds the 16
// outputs' four weights side by side (64 bytes), quads in input order.
// Scale and WSum follow the blocks: per block, per group, 16 values.
type Packed8 struct {
	// Levels is the largest 8-bit input the kernel takes: 255 for the
	// VNNI kernel, 127 for the AVX2 one (q7.go).
	Levels int
	Q      []int8
	Scale  []float32
	// WSum holds each output's sum of its group's int8 weights (at most
	// 64·128 in magnitude, so its low half is the same sum as an int16:
	// the amd64 kernels multiply that half by −z with VPDPWSSD or
	// VPMADDWD, the pair's high half by zero; arm64's reads the whole).
	WSum []int32
	// Cols are the outlier columns, Wt their weights (as float32, one row
	// of Out a column, MaxOutliers rows, zero past len(Cols)).
	Cols []int
	Wt   []float32
}

// Observe records, column by column, the largest magnitude of the rows
// the layer multiplies while obs is set (see [Linear.Outliers]).
func (l *Linear) Observe(on bool) {
	if !on {
		l.obs = nil
		return
	}
	if l.seen == nil {
		l.seen = make([]float32, l.In)
	}
	l.obs = l.seen
}

// observe is Apply's record of its input, while observing.
func (l *Linear) observe(src []float32, rows int) {
	for r := range rows {
		for k, v := range src[r*l.In : (r+1)*l.In] {
			l.obs[k] = max(l.obs[k], float32(math.Abs(float64(v))))
		}
	}
}

// Outliers sets the input columns kept out of the 8-bit rounding: the
// n (at most [MaxOutliers]) columns of largest magnitude that
// [Linear.Observe] recorded, none if nothing was observed. It may be
// called before [Linear.Pack] or after (the layer must not be in use).
func (l *Linear) Outliers(n int) {
	l.cols = nil
	if l.seen != nil && n > 0 {
		idx := make([]int, l.In)
		for k := range idx {
			idx[k] = k
		}
		slices.SortStableFunc(idx, func(a, b int) int {
			switch {
			case l.seen[a] > l.seen[b]:
				return -1
			case l.seen[a] < l.seen[b]:
				return 1
			}
			return 0
		})
		l.cols = slices.Clone(idx[:min(n, MaxOutliers, l.In)])
		slices.Sort(l.cols)
	}
	if l.P8 != nil {
		l.P8.setOutliers(l, l.cols)
	}
}

// setOutliers sets p's outlier columns of l and their float32 weights.
func (p *Packed8) setOutliers(l *Linear, cols []int) {
	in, out, groups := l.In, l.Out, l.In/Group
	p.Cols = slices.Clone(cols)
	clear(p.Wt)
	for j, c := range p.Cols {
		for o := range out {
			p.Wt[j*out+o] = float32(int8(l.W.Q[o*in+c])) * l.W.Scale[o*groups+c/Group]
		}
	}
}

// pack8 lays l's int8 weights out for the 8-bit kernel (levels 255) or
// the 7-bit one (127: q7.go); the layout is the same.
func (l *Linear) pack8(a *Arena, levels int) {
	in, out := l.In, l.Out
	groups := in / Group
	p := &Packed8{
		Levels: levels,
		Q:      arenaSlice[int8](a, in*out),
		Scale:  arenaSlice[float32](a, out*groups),
		WSum:   arenaSlice[int32](a, out*groups),
		Wt:     arenaSlice[float32](a, MaxOutliers*out),
	}
	// Quads of int8 move as one uint32.
	src := unsafe.Slice((*uint32)(unsafe.Pointer(&l.W.Q[0])), in*out/4)
	dst := unsafe.Slice((*uint32)(unsafe.Pointer(&p.Q[0])), in*out/4)
	quads := in / 4
	for b := 0; b < out/blockOut; b++ {
		blk := dst[b*quads*blockOut : (b+1)*quads*blockOut]
		for o := range blockOut {
			row := l.W.Q[(b*blockOut+o)*in : (b*blockOut+o+1)*in]
			sc := l.W.Scale[(b*blockOut+o)*groups : (b*blockOut+o+1)*groups]
			for g, v := range sc {
				i := (b*groups+g)*blockOut + o
				p.Scale[i] = v
				var s int32
				for _, w := range row[g*Group : (g+1)*Group] {
					s += int32(int8(w))
				}
				p.WSum[i] = s
			}
			r32 := src[(b*blockOut+o)*quads : (b*blockOut+o+1)*quads]
			for s, q := range r32 {
				blk[s*blockOut+o] = q
			}
		}
	}
	p.setOutliers(l, l.cols)
	l.P8 = p
}

// q8buf holds a product's 8-bit input.
type q8buf struct {
	u []uint8
	// qp holds, per row and group, the step (float32 bits) and −z (the
	// low half of an int32), side by side.
	qp  []uint32
	tmp []float32
	xo  []float32                 // the outlier columns' values, MaxOutliers a row
	amx *amxBuf                   // the AMX kernel's configuration and scratch
	acc [qrows * blockOut]float32 // a block kernel's sums (q8block.go)
}

var q8bufs = sync.Pool{New: func() any { return new(q8buf) }}

// quantize8 rounds rows of src (in values each) to 8 bits, a range a
// group (see [quantGroup8]), into b, the outlier columns cols taken out
// (rounded as zeros, their values kept in b.xo); rows is padded to a
// multiple of qrows with rows of zeros.
func (b *q8buf) quantize8(src []float32, rows, in int, cols []int, levels int) {
	padded := (rows + qrows - 1) / qrows * qrows
	groups := in / Group
	b.u = slices.Grow(b.u[:0], padded*in)[:padded*in]
	b.qp = slices.Grow(b.qp[:0], 2*padded*groups)[:2*padded*groups]
	// The groups of many rows in one call (a row's groups follow the
	// last row's in u and qp as in src): all the rows, or, with outlier
	// columns, as many as a copy of 16 KB holds (it stays in L1), their
	// outlier columns zeroed.
	if len(cols) == 0 {
		if rows > 0 {
			quantRow8(b.u[:rows*in], src[:rows*in], b.qp[:2*rows*groups], levels)
		}
	} else {
		step := max(1, 4096/in)
		b.tmp = slices.Grow(b.tmp[:0], step*in)[:step*in]
		b.xo = slices.Grow(b.xo[:0], rows*MaxOutliers)[:rows*MaxOutliers]
		clear(b.xo)
		for r0 := 0; r0 < rows; r0 += step {
			n := min(step, rows-r0)
			x := b.tmp[:n*in]
			copy(x, src[r0*in:(r0+n)*in])
			for r := r0; r < r0+n; r++ {
				for j, c := range cols {
					b.xo[r*MaxOutliers+j] = src[r*in+c]
					x[(r-r0)*in+c] = 0
				}
			}
			quantRow8(b.u[r0*in:(r0+n)*in], x, b.qp[2*r0*groups:2*(r0+n)*groups], levels)
		}
	}
	clear(b.u[rows*in:])
	clear(b.qp[2*rows*groups:])
}

// quantRow8 rounds rows (x, a whole number of groups), a group of 64 at
// a time, to 0..levels (255 or 127): with AVX-512 where the VNNI kernel
// runs (a group's 64 values in four registers, the ranges of a block of
// groups taken before their steps and their rounding: 1.6 to 1.9 times
// as fast as AVX2, BenchmarkQuant8), else AVX2, or NEON on arm64; the
// same bits.
func quantRow8(u []uint8, x []float32, qp []uint32, levels int) {
	if avx512() {
		quant8AVX512(&u[0], &x[0], len(x)/Group, &qp[0], float32(levels))
		return
	}
	if UseAVX2 {
		quant8AVX2(&u[0], &x[0], len(x)/Group, &qp[0], float32(levels))
		return
	}
	if UseNEON {
		quant8NEON(&u[0], &x[0], len(x)/Group, &qp[0], float32(levels))
		return
	}
	for g := range len(x) / Group {
		quantGroup8(u[g*Group:(g+1)*Group], x[g*Group:(g+1)*Group], qp[2*g:2*g+2], levels)
	}
}

// quantGroup8 is the 8-bit rounding of a group, the specification of the
// assembly: the range [lo, hi] holds the group's values and zero; its
// step is (hi−lo)/L (L = levels: 255, or 127 for the AVX2 kernel), the
// zero point z = round(−lo/step), and each value becomes u =
// round(x/step) + z, clamped to [0, L] (rounding to the nearest, ties to
// even, of x times the float32 L/(hi−lo)). A group of zeros gets step 0
// and u = 0. qp gets the step's bits and −z.
func quantGroup8(u []uint8, x []float32, qp []uint32, levels int) {
	lv := float32(levels)
	var lo, hi float32
	for _, v := range x {
		lo, hi = min(lo, v), max(hi, v)
	}
	d := hi - lo
	var step, inv float32
	if d != 0 {
		step, inv = d/lv, lv/d
	}
	nlo := 0 - lo
	z := int32(math.RoundToEven(float64(nlo * inv)))
	for i, v := range x {
		q := int32(math.RoundToEven(float64(v*inv))) + z
		u[i] = uint8(max(0, min(int32(levels), q)))
	}
	qp[0] = math.Float32bits(step)
	qp[1] = uint32(uint16(int16(-z)))
}

// rounded8 checks that src holds rows inputs and dst rows outputs of l,
// and returns a pooled buffer (q8bufs: put it back) holding src rounded
// for l's 8-bit kernels: what every one of them starts with.
func (l *Linear) rounded8(dst, src []float32, rows int) *q8buf {
	_ = src[rows*l.In-1]
	_ = dst[rows*l.Out-1]
	b := q8bufs.Get().(*q8buf)
	b.quantize8(src, rows, l.In, l.P8.Cols, l.P8.Levels)
	return b
}

// applyPacked8 is Apply on the 8-bit kernel.
func (l *Linear) applyPacked8(dst, src []float32, rows int, add bool) {
	in, out := l.In, l.Out
	p := l.P8
	b := l.rounded8(dst, src, rows)
	defer q8bufs.Put(b)
	groups := in / Group
	bstride := in * blockOut
	sstride := groups * blockOut
	bias := zeros32[:]
	for j := 0; j < out; j += 2 * blockOut {
		blk := j / blockOut
		w := p.Q[blk*bstride:]
		s := p.Scale[blk*sstride:]
		ws := p.WSum[blk*sstride:]
		if l.B != nil {
			bias = l.B[j : j+2*blockOut]
		}
		xo, ncols := &zeros32[0], len(p.Cols)
		for r0 := 0; r0 < rows; r0 += qrows {
			n := min(qrows, rows-r0)
			if ncols > 0 {
				xo = &b.xo[r0*MaxOutliers]
			}
			qdot8VNNI(&b.u[r0*in], in, &w[0], bstride, &s[0], &ws[0], 4*sstride, groups,
				&b.qp[2*r0*groups], &bias[0], &dst[r0*out+j], 4*out, n, xo, &p.Wt[j], ncols, add)
		}
	}
}
