package tensor

// The 8-bit product on AVX-VNNI. Intel's client CPUs since Alder Lake
// (and Sierra Forest, and AMD's Zen 5) have VPDPBUSD and VPDPWSSD on ymm
// registers in a VEX encoding (AVX-VNNI) but no AVX-512. There the
// 8-bit kernel of q8.go runs 256 bits at a time: qdot8AVXVNNI, one
// Packed8 block of 16 outputs (two ymm) times four rows a call, the
// same packing, rounding (quant8AVX2), zero points and outlier columns,
// and the same operations on each output in the same order as
// qdot8VNNI, so the two give the same bits (TestPacked8Spec) and the
// same vectors. The instructions are written as bytes
// (q8avxvnni_amd64.s): Go's assembler encodes them with EVEX only.
//
// Where AVX-512 is there too the zmm kernel (or AMX) runs instead; the
// tests and benchmarks simulate a CPU with AVX-VNNI alone by turning
// UseVNNI off and UseAVXVNNI on, which also turns off every other
// AVX-512 kernel (see avx512).

// UseAVXVNNI turns the AVX-VNNI kernel on where the CPU has it (and
// UseVNNI is off, or the layer is run with it off); tests turn it on
// with UseVNNI off to simulate a CPU without AVX-512.
var UseAVXVNNI = HaveAVXVNNI

// avx512 reports whether the AVX-512 kernels run: where the AVX-512
// VNNI kernel does (UseVNNI stands for the AVX-512 family the kernels
// use: F, BW and VNNI). AVX-VNNI (UseAVXVNNI) is not AVX-512.
func avx512() bool { return UseVNNI && UseAVX2 }

// applyBlocks is Apply on a kernel of one Packed8 block of 16 outputs
// (two ymm registers) a call: the 8-bit AVX-VNNI one, or the 7-bit
// AVX2 one (u7, q7.go). Each block serves every row while it is in
// cache.
func (l *Linear) applyBlocks(dst, src []float32, rows int, add, u7 bool) {
	in, out := l.In, l.Out
	_ = src[rows*in-1]
	_ = dst[rows*out-1]
	p := l.P8
	b := q8bufs.Get().(*q8buf)
	defer q8bufs.Put(b)
	b.quantize8(src, rows, in, p.Cols, p.Levels)
	groups := in / Group
	bstride := in * blockOut
	sstride := groups * blockOut
	bias := zeros32[:]
	var acc [qrows * blockOut]float32 // qdot7AVX2's float sums
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
			if u7 {
				qdot7AVX2(&b.u[r0*in], in, &p.Q[blk*bstride], &p.Scale[blk*sstride], &p.WSum[blk*sstride], groups,
					&b.qp[2*r0*groups], &acc, &bias[0], &dst[r0*out+j], 4*out, n, xo, &p.Wt[j], ncols, add, prefetchBlocks*bstride)
				continue
			}
			qdot8AVXVNNI(&b.u[r0*in], in, &p.Q[blk*bstride], &p.Scale[blk*sstride], &p.WSum[blk*sstride], groups,
				&b.qp[2*r0*groups], &bias[0], &dst[r0*out+j], 4*out, n, xo, &p.Wt[j], ncols, add, prefetchBlocks*bstride)
		}
	}
}

// applyPacked8AVXVNNI is applyPacked8 on the AVX-VNNI kernel.
func (l *Linear) applyPacked8AVXVNNI(dst, src []float32, rows int, add bool) {
	l.applyBlocks(dst, src, rows, add, false)
}
