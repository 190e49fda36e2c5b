package tensor

import "unsafe"

// The 8-bit product on AMX (Intel's Advanced Matrix Extensions, from
// Sapphire Rapids on). A TDPBUSD multiplies a tile of up to 16 rows of
// 64 unsigned 8-bit inputs by a tile of 64×16 signed 8-bit weights into
// 16×16 int32 sums: exactly one group of one Packed8 block (its 16
// quads of 64 bytes are the weight tile as they lie), 16 times the work
// of the VNNI kernel's instruction. Each group's sums are stored, then
// corrected, scaled and added in float32 by the same AVX-512
// instructions as the VNNI kernel's, so the two give the same bits.
//
// A tile's state lives in the thread, so one assembly call configures
// the tiles, runs a whole layer over up to 16 rows and releases them:
// Go does not preempt assembly, and the goroutine cannot move to
// another thread in between.

// amxRows is how many rows one AMX call multiplies: two tiles' rows,
// 16 and 12, whose float sums stay in 28 of the 32 vector registers, so
// a task's pieces (17 to 28) read each weight once.
const amxRows = 28

// UseAMX turns the AMX kernel on where the CPU and the operating system
// allow it; tests turn it off to compare it with the VNNI kernel.
var UseAMX = HaveAMX

// amxBuf is an AMX call's memory, 64-byte aligned: the tile
// configuration and two groups' stored sums (one being written while the
// other is read), 2 KB each.
type amxBuf [64 + 64 + 4*1024]byte

// parts returns b's configuration for n rows (n <= amxRows) and its
// scratch.
func (b *amxBuf) parts(n int) (cfg, scratch *byte) {
	off := (64 - int(uintptr(unsafe.Pointer(&b[0]))%64)) % 64
	c := b[off : off+64]
	clear(c)
	c[0] = 1 // palette 1
	// Tile t's bytes a row at 16+2t (uint16), its rows at 48+t.
	tile := func(t, rows int) {
		if rows > 0 {
			c[16+2*t], c[48+t] = 64, byte(rows)
		}
	}
	n0, n1 := min(n, 16), max(n-16, 0)
	tile(0, n0)
	tile(1, n0)
	tile(2, 16)
	tile(3, n1)
	tile(4, n1)
	return &c[0], &b[off+64]
}

// applyPacked8AMX is applyPacked8 on AMX.
func (l *Linear) applyPacked8AMX(dst, src []float32, rows int, add bool) {
	in, out := l.In, l.Out
	p := l.P8
	b := l.rounded8(dst, src, rows)
	defer q8bufs.Put(b)
	if b.amx == nil {
		b.amx = new(amxBuf)
	}
	groups := in / Group
	var bias *float32
	if l.B != nil {
		bias = &l.B[0]
	}
	ncols := len(p.Cols)
	for r0 := 0; r0 < rows; r0 += amxRows {
		n := min(amxRows, rows-r0)
		cfg, scratch := b.amx.parts(n)
		xo := &zeros32[0]
		if ncols > 0 {
			xo = &b.xo[r0*MaxOutliers]
		}
		qdot8AMX(cfg, scratch, &b.u[r0*in], in, &p.Q[0], out/blockOut, &p.Scale[0], &p.WSum[0], groups,
			&b.qp[2*r0*groups], bias, &dst[r0*out], out, n, xo, &p.Wt[0], ncols, add)
	}
}
