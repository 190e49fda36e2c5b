package tensor

// rowBlock is how many input rows one pass over a weight matrix serves:
// the block of inputs stays in cache while each weight row is read once.
const rowBlock = 64

// UseAVX2 turns the assembly kernels on where the CPU has them; tests
// turn it off to check the portable path against them.
var UseAVX2 = HaveAVX2

// Linear is a dense layer y = x·Wᵀ + b with W stored as Out rows of In
// weights (one row per output), so each output is one contiguous dot
// product.
type Linear struct {
	In, Out int
	W       Weights   // Out×In
	B       []float32 // Out
	// P, once [Linear.Pack] has run, holds W laid out for the integer
	// kernels, which Apply then uses; P8 instead where the 8-bit kernel
	// runs (AVX-512 VNNI, or AMX where the CPU has it: q8amx.go; AVX-VNNI
	// without AVX-512: q8avxvnni.go; NEON's SDOT on arm64: q8_arm64.go),
	// or the 7-bit one is turned on (UseU7).
	P  *Packed
	P8 *Packed8

	obs, seen []float32 // see Observe
	cols      []int     // see Outliers
}

// Apply computes dst = src·Wᵀ + b over rows of src (dst += … when add is
// set). An int8 weight row is decoded once a block of rows, into a buffer
// on the stack, and serves every row of the block, so a short text
// decodes each weight once and a batch of cards once per rowBlock rows.
// A nil B adds no bias.
func (l *Linear) Apply(dst, src []float32, rows int, add bool) {
	in, out := l.In, l.Out
	if l.obs != nil {
		l.observe(src, rows)
	}
	if l.P8 != nil && l.P8.Levels == levels7 && UseAVX2 && rows > 0 {
		l.applyPacked7(dst, src, rows, add)
		return
	}
	if l.P8 != nil && UseAMX && UseVNNI && UseAVX2 && rows > 0 {
		l.applyPacked8AMX(dst, src, rows, add)
		return
	}
	if l.P8 != nil && UseVNNI && UseAVX2 && rows > 0 {
		l.applyPacked8(dst, src, rows, add)
		return
	}
	if l.P8 != nil && UseAVXVNNI && UseAVX2 && rows > 0 {
		l.applyBlocks(dst, src, rows, add, qdot8AVXVNNI)
		return
	}
	if l.P8 != nil && UseSDOT && rows > 0 {
		l.applyBlocks(dst, src, rows, add, qdot8SDOT)
		return
	}
	if l.P != nil && UseAVX2 && rows > 0 {
		l.applyPacked(dst, src, rows, add)
		return
	}
	if UseAVX2 && in%8 == 0 && out%2 == 0 && rows > 0 {
		l.applyAVX2(dst, src, rows, add)
		return
	}
	var buf [MaxStackCols]float32
	wbuf := buf[:]
	if in > MaxStackCols {
		wbuf = make([]float32, in)
	}
	for r0 := 0; r0 < rows; r0 += rowBlock {
		r1 := min(r0+rowBlock, rows)
		for j := 0; j < out; j++ {
			w := l.W.Row(wbuf, j, in)
			b := l.bias(j)
			r := r0
			for ; r+4 <= r1; r += 4 {
				s0, s1, s2, s3 := dot4Go(src[r*in:(r+1)*in], src[(r+1)*in:(r+2)*in],
					src[(r+2)*in:(r+3)*in], src[(r+3)*in:(r+4)*in], w)
				store(dst, r*out+j, s0+b, add)
				store(dst, (r+1)*out+j, s1+b, add)
				store(dst, (r+2)*out+j, s2+b, add)
				store(dst, (r+3)*out+j, s3+b, add)
			}
			for ; r < r1; r++ {
				store(dst, r*out+j, dot1Go(src[r*in:(r+1)*in], w)+b, add)
			}
		}
	}
}

func store(dst []float32, i int, v float32, add bool) {
	if add {
		dst[i] += v
	} else {
		dst[i] = v
	}
}

// applyAVX2 is Apply with the 4-row × 2-output assembly kernel. Rows
// past the last multiple of 4 repeat the last row and drop its results.
func (l *Linear) applyAVX2(dst, src []float32, rows int, add bool) {
	in, out := l.In, l.Out
	_ = src[rows*in-1]
	_ = dst[rows*out-1]
	var wbuf []float32 // float32 weights need none
	if l.W.F == nil {
		var buf [2 * MaxStackCols]float32
		wbuf = buf[:]
		if in > MaxStackCols {
			wbuf = make([]float32, 2*in)
		}
	}
	var acc [8]float32
	for r0 := 0; r0 < rows; r0 += rowBlock {
		r1 := min(r0+rowBlock, rows)
		for j := 0; j < out; j += 2 {
			var w0, w1 *float32
			if wbuf == nil {
				w0, w1 = &l.W.F[j*in], &l.W.F[(j+1)*in]
			} else {
				w0, w1 = &l.W.Row(wbuf[:in], j, in)[0], &l.W.Row(wbuf[in:], j+1, in)[0]
			}
			b0, b1 := l.bias(j), l.bias(j+1)
			for r := r0; r < r1; r += 4 {
				x := [4]*float32{}
				for k := range x {
					x[k] = &src[min(r+k, r1-1)*in]
				}
				dot4x2AVX2(x[0], x[1], x[2], x[3], w0, w1, in, &acc)
				for k := 0; k < 4 && r+k < r1; k++ {
					o := (r+k)*out + j
					store(dst, o, acc[2*k]+b0, add)
					store(dst, o+1, acc[2*k+1]+b1, add)
				}
			}
		}
	}
}

func (l *Linear) bias(j int) float32 {
	if l.B == nil {
		return 0
	}
	return l.B[j]
}

// MulT computes dst = a·bᵀ for a of rows×k and b of n×k, both float32
// row by row: the product of attention's queries and keys, and of its
// weights and (transposed) values. The AVX2 kernel runs when k is a
// multiple of 8 and n even.
func MulT(dst, a []float32, rows int, b []float32, n, k int) {
	l := Linear{In: k, Out: n, W: Weights{F: b[: n*k : n*k]}}
	l.Apply(dst, a, rows, false)
}

// MulTStrided computes dst[i·dstride + j] = a[i·astride:]·b[j·bstride:]
// over k values, for i < rows and j < n: a product of rows read where
// they lie (attention's queries and keys, heads side by side in one
// row), with no copies. The AVX2 kernel runs when k is a multiple of 8.
func MulTStrided(dst []float32, dstride int, a []float32, astride, rows int, b []float32, bstride, n, k int) {
	if rows == 0 || n == 0 {
		return
	}
	_ = a[(rows-1)*astride+k-1]
	_ = b[(n-1)*bstride+k-1]
	_ = dst[(rows-1)*dstride+n-1]
	if !UseAVX2 || k%8 != 0 {
		for i := range rows {
			for j := range n {
				dst[i*dstride+j] = dot1Go(a[i*astride:i*astride+k], b[j*bstride:j*bstride+k])
			}
		}
		return
	}
	var acc [8]float32
	for i := 0; i < rows; i += 4 {
		var x [4]*float32
		for r := range x {
			x[r] = &a[min(i+r, rows-1)*astride]
		}
		for j := 0; j < n; j += 2 {
			j1 := min(j+1, n-1)
			dot4x2AVX2(x[0], x[1], x[2], x[3], &b[j*bstride], &b[j1*bstride], k, &acc)
			for r := 0; r < 4 && i+r < rows; r++ {
				dst[(i+r)*dstride+j] = acc[2*r]
				if j+1 < n {
					dst[(i+r)*dstride+j+1] = acc[2*r+1]
				}
			}
		}
	}
}
