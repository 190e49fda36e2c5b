package tensor

// A blockKernel multiplies up to qrows rows of rounded inputs by one
// Packed8 block (16 outputs) a call: qdot8AVXVNNI (8-bit inputs) and
// qdot7AVX2 (7-bit) on amd64, qdot8SDOT (8-bit) on arm64. All take the
// same arguments (see qdot8SDOT).
type blockKernel func(u *uint8, ustride int, w *int8, s *float32, ws *int32, groups int, qp *uint32, acc *[qrows * blockOut]float32,
	bias, dst *float32, dstride, n int, xo, wt *float32, ncols int, add bool, pf int)

// applyBlocks is Apply on a block kernel: the input rounded to the
// packed layer's levels, then each block of weights times every row,
// qrows a call, while the block is in cache.
func (l *Linear) applyBlocks(dst, src []float32, rows int, add bool, kernel blockKernel) {
	in, out := l.In, l.Out
	p := l.P8
	b := l.rounded8(dst, src, rows)
	defer q8bufs.Put(b)
	groups := in / Group
	bstride := in * blockOut
	sstride := groups * blockOut
	bias := zeros32[:]
	// (The kernel's accumulators are b's: a func value's arguments
	// escape.)
	for j := 0; j < out; j += blockOut {
		blk := j / blockOut
		if l.B != nil {
			bias = l.B[j : j+blockOut]
		}
		xo, ncols := &zeros32[0], len(p.Cols)
		for r0 := 0; r0 < rows; r0 += qrows {
			n := min(qrows, rows-r0)
			if ncols > 0 {
				xo = &b.xo[r0*MaxOutliers]
			}
			kernel(&b.u[r0*in], in, &p.Q[blk*bstride], &p.Scale[blk*sstride], &p.WSum[blk*sstride], groups,
				&b.qp[2*r0*groups], &b.acc, &bias[0], &dst[r0*out+j], 4*out, n, xo, &p.Wt[j], ncols, add, prefetchBlocks*bstride)
		}
	}
}

// HavePacked reports whether an integer kernel of packed layers runs on
// this CPU ([Linear.Pack]): AVX2 on amd64, SDOT on arm64. Elsewhere the
// products stay in float32.
var HavePacked = HaveAVX2 || HaveSDOT

// HaveA8 reports whether the packed products round their inputs to 8
// bits on this CPU (AVX-512 VNNI, AMX or AVX-VNNI on amd64, SDOT on
// arm64): the
// vectors of the "-a8" model name, within cosine 0.9995 of the float
// kernels'.
var HaveA8 = HaveVNNI || HaveAVXVNNI || HaveSDOT

// UseSDOT turns the arm64 8-bit kernel (qdot8SDOT) on where the CPU has
// it; tests turn it off to check the portable path against it.
var UseSDOT = HaveSDOT
