package tensor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
)

// qdot8Go is the 8-bit kernel's product in Go, its specification (see
// qdot8VNNI): rows of (u − z)·w summed exactly in int32 a group, each
// group's sum times (weight scale × step) added to a float32 lane with
// one rounding, then the bias, then dst when add is set.
func qdot8Go(l *Linear, dst []float32, b *q8buf, rows int, add bool) {
	in, out := l.In, l.Out
	groups := in / Group
	p := l.P8
	for r := range rows {
		u := b.u[r*in : (r+1)*in]
		for o := range out {
			blk, c := o/blockOut, o%blockOut
			var f float32
			for g := range groups {
				nz := int32(int16(uint16(b.qp[2*(r*groups+g)+1])))
				step := math.Float32frombits(b.qp[2*(r*groups+g)])
				var acc int32
				for k := g * Group; k < (g+1)*Group; k++ {
					w := int32(p.Q[blk*in*blockOut+(k/4)*4*blockOut+4*c+k%4])
					acc += (int32(u[k]) + nz) * w
				}
				t := p.Scale[(blk*groups+g)*blockOut+c] * step
				f = float32(math.FMA(float64(float32(acc)), float64(t), float64(f)))
			}
			var bias float32
			if l.B != nil {
				bias = l.B[o]
			}
			v := f + bias
			if add {
				v = dst[r*out+o] + v
			}
			dst[r*out+o] = v
		}
		for j := range p.Cols {
			x := b.xo[r*MaxOutliers+j]
			for o := range out {
				dst[r*out+o] = float32(math.FMA(float64(x), float64(p.Wt[j*out+o]), float64(dst[r*out+o])))
			}
		}
	}
}

// packed8Go is applyPacked8 with the Go specifications of its parts.
func packed8Go(l *Linear, dst, src []float32, rows int, add bool) {
	defer func(avx2, neon bool) { UseAVX2, UseNEON = avx2, neon }(UseAVX2, UseNEON)
	UseAVX2, UseNEON = false, false // quantGroup8
	b := new(q8buf)
	b.quantize8(src, rows, l.In, l.P8.Cols, l.P8.Levels)
	qdot8Go(l, dst, b, rows, add)
}

func pack8For(t testing.TB, l *Linear, cols int, src []float32, rows int) {
	t.Helper()
	defer func(vnni, avx2 bool) { UseVNNI, UseAVX2 = vnni, avx2 }(UseVNNI, UseAVX2)
	UseVNNI, UseAVX2 = true, true
	l.Observe(true)
	l.observe(src, rows)
	l.Observe(false)
	l.Outliers(cols)
	l.Pack()
	if l.P8 == nil {
		t.Fatalf("%dx%d not packed for the 8-bit kernel", l.In, l.Out)
	}
}

// TestQuant8 checks the assembly rounding (AVX2, and AVX-512 where the
// CPU has it; NEON on arm64) against quantGroup8, bit for bit, on groups of every kind:
// mixed signs, one sign, zeros, outliers; to 8 bits (the VNNI kernel's)
// and to 7 (the AVX2 one's).
func TestQuant8(t *testing.T) {
	type kernel struct {
		name string
		run  func(u *uint8, x *float32, groups int, qp *uint32, levels float32)
	}
	var kernels []kernel
	if HaveAVX2 {
		kernels = append(kernels, kernel{"AVX2", quant8AVX2})
	}
	if HaveVNNI {
		kernels = append(kernels, kernel{"AVX-512", quant8AVX512})
	}
	if HaveNEON {
		kernels = append(kernels, kernel{"NEON", quant8NEON})
	}
	if len(kernels) == 0 {
		t.Skipf("no rounding kernel on %s: quantGroup8 is all there is", runtime.GOARCH)
	}
	rng := rand.New(rand.NewPCG(31, 32))
	for trial := range 400 {
		levels := 255
		if trial%8 >= 4 {
			levels = 127
		}
		x := make([]float32, 3*Group)
		for i := range x {
			switch trial % 5 {
			case 0:
				x[i] = float32(rng.NormFloat64())
			case 1:
				x[i] = float32(math.Abs(rng.NormFloat64())) - 0.17
			case 2:
				x[i] = -float32(rng.ExpFloat64())
			case 3:
				x[i] = float32(rng.NormFloat64()) * 1e-3
			case 4:
				x[i] = float32(math.Abs(rng.NormFloat64())) + 0.05
			}
		}
		clear(x[Group : Group+Group/2]) // a half-empty group
		if trial%7 == 0 {
			clear(x[2*Group:]) // an empty group
		}
		if trial%3 > 0 {
			x[rng.IntN(len(x))] = 40 * float32(rng.NormFloat64()) // an outlier
		}
		want, got := make([]uint8, len(x)), make([]uint8, len(x))
		// gqp and lgqp run on past the groups' pairs: nothing is written
		// there.
		wqp, gqp := make([]uint32, 6), make([]uint32, 6+32)
		for g := range 3 {
			quantGroup8(want[g*Group:(g+1)*Group], x[g*Group:(g+1)*Group], wqp[2*g:2*g+2], levels)
		}
		for _, k := range kernels {
			clear(got)
			clear(gqp)
			k.run(&got[0], &x[0], 3, &gqp[0], float32(levels))
			if slices.ContainsFunc(gqp[6:], func(v uint32) bool { return v != 0 }) {
				t.Fatalf("%s, trial %d: qp written past its end: %x", k.name, trial, gqp[6:])
			}
			if gqp := gqp[:6]; !slices.Equal(got, want) || !slices.Equal(gqp, wqp) {
				for i := range got {
					if got[i] != want[i] {
						t.Fatalf("%s, trial %d (0..%d): u[%d] = %d, spec %d (x %v)", k.name, trial, levels, i, got[i], want[i], x[i])
					}
				}
				t.Fatalf("%s, trial %d (0..%d): qp %x, spec %x", k.name, trial, levels, gqp, wqp)
			}
		}
		// A row of 20 groups (more than quant8AVX512's block of 16).
		long := make([]float32, 20*Group)
		for i := range long {
			long[i] = x[(i*7)%len(x)] * float32(1+i/Group)
		}
		lwant, lgot := make([]uint8, len(long)), make([]uint8, len(long))
		lwqp, lgqp := make([]uint32, 40), make([]uint32, 40+32)
		for g := range 20 {
			quantGroup8(lwant[g*Group:(g+1)*Group], long[g*Group:(g+1)*Group], lwqp[2*g:2*g+2], levels)
		}
		for _, k := range kernels {
			clear(lgot)
			clear(lgqp)
			k.run(&lgot[0], &long[0], 20, &lgqp[0], float32(levels))
			if !slices.Equal(lgot, lwant) || !slices.Equal(lgqp[:40], lwqp) ||
				slices.ContainsFunc(lgqp[40:], func(v uint32) bool { return v != 0 }) {
				t.Fatalf("%s, trial %d (0..%d): a row of 20 groups differs from the spec", k.name, trial, levels)
			}
		}
		// Each value is within half a step of its group's rounding.
		for g := range 3 {
			step := math.Float32frombits(wqp[2*g])
			z := -int32(int16(uint16(wqp[2*g+1])))
			for k := g * Group; k < (g+1)*Group; k++ {
				if int(want[k]) > levels {
					t.Fatalf("trial %d: u[%d] = %d > %d", trial, k, want[k], levels)
				}
				back := float32(int32(want[k])-z) * step
				if d := math.Abs(float64(back - x[k])); d > float64(step)*0.5001+1e-30 {
					t.Fatalf("trial %d: x[%d] = %v rounds to %v (step %v)", trial, k, x[k], back, step)
				}
			}
		}
	}
}

// TestPacked8Spec: the 8-bit kernels (AVX-512 VNNI, AMX and AVX-VNNI,
// each where the CPU has it) give exactly what their Go specification
// gives, for every row remainder (of 4 for VNNI and AVX-VNNI; AMX's
// tiles of 16 and 12 rows, and calls of 28), with and without bias and
// outlier columns, set and add. The avxvnni case runs as on a CPU
// without AVX-512: UseVNNI off, so no AVX-512 kernel runs (the 8-bit
// rounding is quant8AVX2's).
func TestPacked8Spec(t *testing.T) {
	defer restoreKernels()
	for _, k := range []struct {
		name string
		have bool   // the CPU runs the kernel
		on   func() // turns it on (after the layer is packed)
	}{
		{"vnni", HaveVNNI, func() { UseAMX, UseVNNI, UseAVXVNNI, UseAVX2 = false, true, false, true }},
		{"amx", HaveAMX, func() { UseAMX, UseVNNI, UseAVXVNNI, UseAVX2 = true, true, false, true }},
		{"avxvnni", HaveAVXVNNI, func() { UseAMX, UseVNNI, UseAVXVNNI, UseAVX2 = false, false, true, true }},
		{"sdot", HaveSDOT, func() { UseSDOT = true }},
	} {
		t.Run(k.name, func(t *testing.T) {
			if !k.have {
				t.Skipf("this CPU (%s) does not run the %s kernel (or Linux refused AMX)", runtime.GOARCH, k.name)
			}
			testPacked8Spec(t, k.on)
		})
	}
}

// testPacked8Spec checks the 8-bit kernel that on turns on (after
// packing, which restores the defaults) against qdot8Go.
func testPacked8Spec(t *testing.T, on func()) {
	rng := rand.New(rand.NewPCG(33, 34))
	for _, shape := range [][3]int{{1536, 64, 2}, {384, 96, 4}, {64, 32, 0}, {128, 32, 1}, {192, 64, 3}} {
		in, out, cols := shape[0], shape[1], shape[2]
		f := randomLinear(rng, in, out)
		q := *f
		q.W = Quantize(f.W.F, out, in)
		for _, rows := range []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 15, 16, 17, 27, 28, 29, 45, 57} {
			src := make([]float32, rows*in)
			for i := range src {
				src[i] = float32(rng.NormFloat64())
			}
			for r := range rows {
				src[r*in+in/3] = 30 // an outlier column
			}
			l := q
			l.P, l.P8 = nil, nil
			pack8For(t, &l, cols, src, rows)
			if len(l.P8.Cols) != cols || (cols > 0 && !slices.Contains(l.P8.Cols, in/3)) {
				t.Fatalf("%dx%d: outlier columns %v", in, out, l.P8.Cols)
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
					on()
					l.Apply(got, src, rows, add)
					restoreKernels()
					for i := range got {
						if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
							t.Fatalf("%dx%d rows %d add %v bias %v: [%d] = %v, spec %v", in, out, rows, add, bias, i, got[i], want[i])
						}
					}
				}
			}
		}
	}
}

// TestPackedBound bounds the 8-bit (VNNI, AMX, AVX-VNNI or SDOT: the
// default kernel) and 7-bit (AVX2) products' distance from the float
// product of the same int8 weights: each input moves by at most half its
// group's step (a 255th or a 127th of its range), outlier columns not at
// all.
func TestPackedBound(t *testing.T) {
	for _, tc := range []struct {
		name   string
		have   bool
		pack   func(testing.TB, *Linear, int, []float32, int)
		levels float64
		seed   uint64
	}{
		{"8-bit", HaveVNNI || HaveAVXVNNI || HaveSDOT, pack8For, 255, 35},
		{"7-bit AVX2", HaveAVX2, pack7For, levels7, 39},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !tc.have {
				t.Skipf("this CPU does not run the %s kernel", tc.name)
			}
			defer restoreKernels()
			rng := rand.New(rand.NewPCG(tc.seed, tc.seed+1))
			in, out, rows := 384, 96, 7
			f := randomLinear(rng, in, out)
			q := *f
			q.W = Quantize(f.W.F, out, in)
			src := make([]float32, rows*in)
			for i := range src {
				src[i] = float32(rng.NormFloat64())
			}
			for r := range rows {
				src[r*in+99] = 28
			}
			want := make([]float32, rows*out)
			UseVNNI, UseAVXVNNI, UseAVX2 = false, false, false
			q.Apply(want, src, rows, false)
			restoreKernels()
			l := q
			tc.pack(t, &l, 4, src, rows)
			got := make([]float32, rows*out)
			l.Apply(got, src, rows, false)
			w := make([]float32, in)
			var worst float64
			for i := range got {
				r, o := i/out, i%out
				wr := q.W.Row(w, o, in)
				var bound float64
				for g := range in / Group {
					lo, hi := float32(0), float32(0)
					for k := g * Group; k < (g+1)*Group; k++ {
						if slices.Contains(l.P8.Cols, k) {
							continue
						}
						lo, hi = min(lo, src[r*in+k]), max(hi, src[r*in+k])
					}
					var ws float64
					for k := g * Group; k < (g+1)*Group; k++ {
						ws += math.Abs(float64(wr[k]))
					}
					bound += float64(hi-lo) / tc.levels / 2 * ws
				}
				bound = bound*1.01 + 1e-4*(1+math.Abs(float64(want[i])))
				d := math.Abs(float64(got[i] - want[i]))
				if d > bound {
					t.Fatalf("[%d] = %v, float %v (bound %v)", i, got[i], want[i], bound)
				}
				worst = max(worst, d/bound)
			}
			if worst == 0 {
				t.Fatal("the product equals the float one everywhere: the inputs were not rounded")
			}
			if !slices.Contains(l.P8.Cols, 99) {
				t.Errorf("outlier columns %v miss 99", l.P8.Cols)
			}
		})
	}
}

// BenchmarkLinear8 compares, in one run, the kernels of int8 weights
// this CPU runs: int16 inputs (VPMADDWD on AVX2, VPDPWSSD with VNNI),
// 7-bit inputs on AVX2 (VPMADDUBSW, q7.go), 8-bit inputs with AVX-512
// VNNI (VPDPBUSD on zmm), on AMX (TDPBUSD) and with AVX-VNNI (VPDPBUSD on
// ymm, as on a CPU without AVX-512: int8-avxvnni); rows=17 (a task's
// pieces) against rows=20 shows what the rows past a multiple of four
// cost.
func BenchmarkLinear8(b *testing.B) {
	if !HaveAVX2 {
		b.Skip("no AVX2")
	}
	defer restoreKernels()
	rng := rand.New(rand.NewPCG(13, 14))
	for _, shape := range [][3]int{{384, 1536, 20}, {384, 1536, 17}, {1536, 384, 20}, {384, 1536, 256}} {
		in, out, rows := shape[0], shape[1], shape[2]
		f := randomLinear(rng, in, out)
		q := *f
		q.W = Quantize(f.W.F, out, in)
		src := make([]float32, rows*in)
		for i := range src {
			src[i] = float32(rng.NormFloat64())
		}
		dst := make([]float32, rows*out)
		p16 := q
		pack16(&p16)
		p7 := q
		pack7For(b, &p7, 4, src, rows)
		p8 := q
		if HaveVNNI || HaveAVXVNNI {
			pack8For(b, &p8, 4, src, rows)
		}
		type kernel struct {
			name               string
			l                  *Linear
			vnni, amx, avxvnni bool
		}
		ks := []kernel{{"int16-avx2", &p16, false, false, false}, {"int7-avx2", &p7, false, false, false}}
		if HaveAVXVNNI {
			ks = append(ks, kernel{"int8-avxvnni", &p8, false, false, true})
		}
		if HaveVNNI {
			ks = append(ks, kernel{"int16-vnni", &p16, true, false, false}, kernel{"int8-vnni", &p8, true, false, false})
			if HaveAMX {
				ks = append(ks, kernel{"int8-amx", &p8, true, true, false})
			}
		}
		for _, k := range ks {
			b.Run(fmt.Sprintf("%dx%d/rows=%d/%s", in, out, rows, k.name), func(b *testing.B) {
				UseAMX, UseVNNI, UseAVXVNNI, UseAVX2 = k.amx, k.vnni, k.avxvnni, true
				defer restoreKernels()
				for b.Loop() {
					k.l.Apply(dst, src, rows, false)
				}
				b.ReportMetric(float64(in*out*rows)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GMAC/s")
			})
		}
	}
}

// BenchmarkQuant8 rounds a task's 17 rows to 8 bits, as a layer's
// product does, with each loop this CPU runs: 384 inputs, four outlier
// columns out (the attention's and the first feed-forward product's), and
// 1536, none out (the second's).
func BenchmarkQuant8(b *testing.B) {
	defer restoreKernels()
	rng := rand.New(rand.NewPCG(21, 22))
	for _, in := range []int{384, 1536} {
		const rows = 17
		src := make([]float32, rows*in)
		for i := range src {
			src[i] = float32(rng.NormFloat64())
		}
		cols := []int{7, 100, 200, 301}
		if in == 1536 {
			cols = nil
		}
		for _, k := range vectorKernels() {
			b.Run(fmt.Sprintf("in=%d/%s", in, k.name), func(b *testing.B) {
				k.on()
				buf := new(q8buf)
				for b.Loop() {
					buf.quantize8(src, rows, in, cols, 255)
				}
			})
		}
	}
}
