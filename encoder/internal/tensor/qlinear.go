package tensor

import (
	"math"
	"sync"
	"unsafe"
)

// Integer products with int16 inputs. A layer whose weights are int8 (a
// weight table's) and that is packed with UseVNNI and UseAVXVNNI off (a
// CPU with AVX2 but neither AVX-512 VNNI nor AVX-VNNI; the others take
// the 8-bit path of q8.go) multiplies them by its input quantized to int16, one scale a row, with
// integer multiply-adds: VPMADDWD (AVX2), or VPDPWSSD where VNNI is on
// again (tests, benchmarks). Without them the product stays in float32
// (a Go loop over decoded rows, faster in Go than integer lanes). Each
// group of 64 weights sums exactly in int32 and is then scaled by its
// weight scale into a float32 lane, in the same order on both kernels,
// so they agree bit for bit. The only error beyond the int8 weights' is
// the input's rounding to int16 (a 65,535th of a row's range, well
// inside the golden tolerance).

// blockOut is how many outputs a packed block holds.
const blockOut = 16

// Packed is an int8 matrix laid out for the integer kernels: blocks of
// 16 outputs; within a block, each pair of inputs k, k+1 holds the 16
// outputs' two weights side by side (32 bytes), pairs in input order.
// Scales follow the same blocks: per block, per group, 16 floats.
type Packed struct {
	Q     []int8
	Scale []float32
}

// PackSize is how many bytes of an [Arena] [Linear.PackIn] takes with
// the kernels in use now (0 when l cannot be packed).
func (l *Linear) PackSize() int {
	if !l.CanPack() {
		return 0
	}
	in, out := l.In, l.Out
	groups := in / Group
	if UseVNNI || UseAVXVNNI || UseSDOT || UseU7 && UseAVX2 {
		return arenaSize[int8](in*out) + 2*arenaSize[float32](out*groups) + arenaSize[float32](MaxOutliers*out)
	}
	return arenaSize[int8](in*out) + arenaSize[float32](out*groups)
}

// CanPack reports whether l's weights can run on the integer kernels:
// int8, whole groups, outputs in pairs of blocks.
func (l *Linear) CanPack() bool {
	return l.W.F == nil && l.W.Q != nil && l.In%Group == 0 && l.Out%(2*blockOut) == 0
}

// Pack lays l's int8 weights out for the integer kernels (once; a
// model packs its layers on first use): for the 8-bit kernels where one
// runs (UseVNNI, UseAVXVNNI or UseSDOT), else for the int16 ones. It
// does nothing if they cannot run there ([Linear.CanPack]).
func (l *Linear) Pack() { l.PackIn(nil) }

// PackIn is [Linear.Pack] with the packed arrays cut from a (nil: the
// heap).
func (l *Linear) PackIn(a *Arena) {
	if l.P != nil || l.P8 != nil || !l.CanPack() {
		return
	}
	if UseVNNI || UseAVXVNNI || UseSDOT {
		l.pack8(a, 255)
		return
	}
	if UseU7 && UseAVX2 {
		l.pack8(a, levels7)
		return
	}
	in, out := l.In, l.Out
	groups := in / Group
	p := &Packed{Q: arenaSlice[int8](a, in*out), Scale: arenaSlice[float32](a, out*groups)}
	// Pairs of int8 move as one uint16.
	src := unsafe.Slice((*uint16)(unsafe.Pointer(&l.W.Q[0])), in*out/2)
	dst := unsafe.Slice((*uint16)(unsafe.Pointer(&p.Q[0])), in*out/2)
	half := in / 2
	var rows [blockOut][]uint16
	for b := 0; b < out/blockOut; b++ {
		for o := range rows {
			rows[o] = src[(b*blockOut+o)*half : (b*blockOut+o+1)*half]
			sc := l.W.Scale[(b*blockOut+o)*groups : (b*blockOut+o+1)*groups]
			for g, v := range sc {
				p.Scale[(b*groups+g)*blockOut+o] = v
			}
		}
		blk := dst[b*half*blockOut : (b+1)*half*blockOut]
		for s := range half {
			d := (*[blockOut]uint16)(blk[s*blockOut:])
			for o := range d {
				d[o] = rows[o][s]
			}
		}
	}
	l.P = p
}

// qrows is how many input rows a kernel call covers.
const qrows = 4

// qbuf holds a product's int16 input.
type qbuf struct {
	x     []int16
	scale []float32
	out   [qrows * 2 * blockOut]float32
}

var qbufs = sync.Pool{New: func() any { return new(qbuf) }}

// quantizeRows rounds rows of src (in values each) to int16, one scale a
// row (its largest magnitude ÷ 32767), into b; rows is padded to a
// multiple of qrows with zero rows.
func (b *qbuf) quantizeRows(src []float32, rows, in int) {
	padded := (rows + qrows - 1) / qrows * qrows
	if cap(b.x) < padded*in {
		b.x = make([]int16, padded*in)
	}
	b.x = b.x[:padded*in]
	if cap(b.scale) < padded {
		b.scale = make([]float32, padded)
	}
	b.scale = b.scale[:padded]
	for r := range rows {
		quantizeRow(b.x[r*in:(r+1)*in], src[r*in:(r+1)*in], &b.scale[r])
	}
	clear(b.x[rows*in:])
	clear(b.scale[rows:])
}

// quantizeRow sets q to x in steps of its largest magnitude ÷ 32767,
// rounded to the nearest step (ties to even), and *scale to that step.
// A row that is all zeros (or holds a NaN) becomes zeros.
func quantizeRow(q []int16, x []float32, scale *float32) {
	q = q[:len(x)]
	var mx float32
	simd := UseAVX2 && len(x)%16 == 0 && len(x) > 0
	if simd {
		mx = absMaxAVX2(&x[0], len(x))
	} else {
		for _, v := range x {
			mx = max(mx, float32(math.Abs(float64(v))))
		}
	}
	if mx == 0 || mx != mx || mx > math.MaxFloat32 {
		clear(q)
		*scale = 0
		return
	}
	*scale = mx / 32767
	inv := 32767 / mx
	if simd {
		roundAVX2(&q[0], &x[0], len(x), inv)
		return
	}
	for i, v := range x {
		// |v·inv| <= 32767 (to within a rounding that cannot reach 32768).
		q[i] = int16(math.RoundToEven(float64(v * inv)))
	}
}

// UseVNNI turns the AVX-512 VNNI kernel on where the CPU has it, and
// with it the other AVX-512 kernels (see avx512); tests turn it off to
// check the AVX2 (or AVX-VNNI) and portable kernels.
var UseVNNI = HaveVNNI

// applyPacked is Apply on the integer kernels.
func (l *Linear) applyPacked(dst, src []float32, rows int, add bool) {
	in, out := l.In, l.Out
	_ = src[rows*in-1]
	_ = dst[rows*out-1]
	b := qbufs.Get().(*qbuf)
	defer qbufs.Put(b)
	b.quantizeRows(src, rows, in)
	groups := in / Group
	bstride := in * blockOut // bytes (int8) of a block
	sstride := groups * blockOut
	p := l.P
	bias := zeros32[:]
	// Each pair of weight blocks (2·16 outputs) serves every row while
	// it is in cache.
	for j := 0; j < out; j += 2 * blockOut {
		blk := j / blockOut
		w := p.Q[blk*bstride:]
		s := p.Scale[blk*sstride:]
		if l.B != nil {
			bias = l.B[j : j+2*blockOut]
		}
		for r0 := 0; r0 < rows; r0 += qrows {
			n := min(qrows, rows-r0)
			x := b.x[r0*in:]
			o := dst[r0*out+j:]
			xs := b.scale[r0:]
			switch {
			case UseVNNI:
				qdotVNNI(&x[0], 2*in, &w[0], bstride, &s[0], 4*sstride, groups, &b.out,
					&xs[0], &bias[0], &o[0], 4*out, n, add)
			case UseAVX2 && n <= 2:
				// One row at a time: the four-row kernel would multiply
				// two or three rows of zeros (with three it skips the
				// fourth).
				for r := range n {
					xr := x[r*in:]
					or := o[r*out:]
					qdot1AVX2(&xr[0], &w[0], &s[0], groups, &xs[r], &bias[0], &or[0], add, prefetchBlocks*bstride)
					qdot1AVX2(&xr[0], &w[bstride], &s[sstride], groups, &xs[r], &bias[blockOut], &or[blockOut], add,
						prefetchBlocks*bstride)
				}
			case UseAVX2:
				qdotAVX2(&x[0], 2*in, &w[0], &s[0], groups, &b.out,
					&xs[0], &bias[0], &o[0], 4*out, n, add, prefetchBlocks*bstride)
				qdotAVX2(&x[0], 2*in, &w[bstride], &s[sstride], groups, &b.out,
					&xs[0], &bias[blockOut], &o[blockOut], 4*out, n, add, prefetchBlocks*bstride)
			}
		}
	}
}

// prefetchBlocks is how many blocks ahead of the one they read the AVX2
// kernels prefetch: a layer's weights (10.6 MB for MiniLM) do not stay
// in cache from one text to the next, and the block read two pairs of
// blocks on is the one the kernel reads next but one.
const prefetchBlocks = 4

// zeros32 is the bias of a layer without one.
var zeros32 [2 * blockOut]float32
