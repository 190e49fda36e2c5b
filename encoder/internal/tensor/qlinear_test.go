package tensor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/capbroker/capbroker/internal/testenv"
)

// kernels lists the int16 kernels this CPU runs, each with a function
// turning it on.
func kernels() map[string]func() {
	ks := map[string]func(){"go": func() { UseVNNI, UseAVXVNNI, UseAVX2, UseSDOT = false, false, false, false }}
	if HaveAVX2 {
		ks["avx2"] = func() { UseVNNI, UseAVXVNNI, UseAVX2 = false, false, true }
	}
	if HaveVNNI {
		ks["vnni"] = func() { UseVNNI, UseAVXVNNI, UseAVX2 = true, false, true }
	}
	return ks
}

// vectorKernels lists the kernels of the vector steps around the
// products (the 8-bit rounding, layer norm, attention, GELU) that this
// CPU runs, each with what turns it on: AVX-512 (with the VNNI kernel),
// AVX2, NEON, and the Go loops everywhere.
func vectorKernels() []struct {
	name string
	on   func()
} {
	type k = struct {
		name string
		on   func()
	}
	set := func(vnni, avx, neon bool) func() {
		return func() { UseVNNI, UseAVX2, UseNEON = vnni, avx, neon }
	}
	var ks []k
	if HaveVNNI && HaveAVX2 {
		ks = append(ks, k{"avx512", set(true, true, false)})
	}
	if HaveAVX2 {
		ks = append(ks, k{"avx2", set(false, true, false)})
	}
	if HaveNEON {
		ks = append(ks, k{"neon", set(false, false, true)})
	}
	return append(ks, k{"go", set(false, false, false)})
}

func restoreKernels() {
	UseAMX, UseVNNI, UseAVXVNNI, UseAVX2, UseU7 = HaveAMX, HaveVNNI, HaveAVXVNNI, HaveAVX2, false
	UseSDOT, UseNEON = HaveSDOT, HaveNEON
}

// pack16 packs l for the int16 kernels (Pack picks the 8-bit one where
// it runs).
func pack16(l *Linear) {
	defer func(v, av, s bool) { UseVNNI, UseAVXVNNI, UseSDOT = v, av, s }(UseVNNI, UseAVXVNNI, UseSDOT)
	UseVNNI, UseAVXVNNI, UseSDOT = false, false, false
	l.Pack()
}

// TestPacked checks the integer kernels against the float product of the
// same int8 weights: every kernel gives the same bits, within the int16
// rounding of the input of the float result, for every row remainder,
// with and without bias, set and add.
func TestPacked(t *testing.T) {
	defer restoreKernels()
	rng := rand.New(rand.NewPCG(9, 10))
	for _, shape := range [][2]int{{64, 32}, {192, 64}, {384, 96}} {
		in, out := shape[0], shape[1]
		f := randomLinear(rng, in, out)
		q := *f
		q.W = Quantize(f.W.F, out, in)
		ref := q // unpacked: decodes rows to float32
		pack16(&q)
		if q.P == nil {
			t.Fatalf("%dx%d not packed", in, out)
		}
		for rows := 1; rows <= 9; rows++ {
			src := make([]float32, rows*in)
			for i := range src {
				src[i] = float32(rng.NormFloat64()) * 3
			}
			src[0] = 40 // an outlier, as layer norms give
			for _, add := range []bool{false, true} {
				for _, bias := range []bool{true, false} {
					ref.B, q.B = f.B, f.B
					if !bias {
						ref.B, q.B = nil, nil
					}
					want := make([]float32, rows*out)
					UseVNNI, UseAVX2 = false, false
					ref.Apply(want, src, rows, add)
					var first []float32
					var firstName string
					for name, on := range kernels() {
						on()
						got := make([]float32, rows*out)
						q.Apply(got, src, rows, add)
						for i := range got {
							// Rounding the row to int16 moves each input by at
							// most half a step: bound the sum by |w|'s.
							r, j := i/out, i%out
							var mx, wsum float64
							for k := range in {
								mx = max(mx, math.Abs(float64(src[r*in+k])))
								wsum += math.Abs(float64(f.W.F[j*in+k]))
							}
							bound := mx/32767/2*wsum*1.01 + 1e-5*(1+math.Abs(float64(want[i])))
							if d := math.Abs(float64(got[i] - want[i])); d > bound {
								t.Fatalf("%s %dx%d rows %d add %v bias %v: [%d] = %v, float %v", name, in, out, rows, add, bias, i, got[i], want[i])
							}
						}
						if first == nil {
							first, firstName = got, name
							continue
						}
						for i := range got {
							if name != "go" && firstName != "go" && math.Float32bits(got[i]) != math.Float32bits(first[i]) {
								t.Fatalf("%s and %s differ at [%d]: %v, %v", name, firstName, i, got[i], first[i])
							}
						}
					}
				}
			}
		}
	}
}

func BenchmarkLinear(b *testing.B) {
	defer restoreKernels()
	rng := rand.New(rand.NewPCG(13, 14))
	for _, shape := range [][3]int{{384, 1536, 20}, {1536, 384, 20}, {384, 1536, 256}} {
		in, out, rows := shape[0], shape[1], shape[2]
		f := randomLinear(rng, in, out)
		q := *f
		q.W = Quantize(f.W.F, out, in)
		src := make([]float32, rows*in)
		for i := range src {
			src[i] = float32(rng.NormFloat64())
		}
		dst := make([]float32, rows*out)
		run := func(name string, l *Linear, on func()) {
			b.Run(fmt.Sprintf("%dx%d/rows=%d/%s", in, out, rows, name), func(b *testing.B) {
				on()
				b.ReportAllocs()
				cpu0 := testenv.CPUTime()
				for b.Loop() {
					l.Apply(dst, src, rows, false)
				}
				cpu := (testenv.CPUTime() - cpu0).Seconds()
				b.ReportMetric(cpu*1e6/float64(b.N), "cpu-µs/op")
				b.ReportMetric(float64(in*out*rows)*float64(b.N)/cpu/1e9, "GMAC/cpu-s")
			})
		}
		run("float-avx2", &q, func() { UseVNNI, UseAVX2 = HaveVNNI, HaveAVX2 })
		run("float-go", &q, func() { UseVNNI, UseAVX2 = false, false })
		p := q
		pack16(&p)
		for name, on := range kernels() {
			run("int-"+name, &p, on)
		}
	}
}

// qdotGo is the kernels' product in Go, their specification: for qrows rows of x (in int16
// each) and two blocks of weights (at w and w[bstride:], scales at s and
// s[sstride:]), acc[r·32 + c] is the sum over groups of each group's
// int32 dot product times its weight scale, accumulated in float32 with
// one rounding a group (a fused multiply-add, as the kernels do).
func qdotGo(x []int16, in int, w []int8, bstride int, s []float32, sstride, groups int, acc *[qrows * 2 * blockOut]float32) {
	clear(acc[:])
	const pairs = Group / 2
	x0, x1, x2, x3 := x[:in], x[in:2*in], x[2*in:3*in], x[3*in:4*in]
	for blk := range 2 {
		wb := w[blk*bstride : blk*bstride+in*blockOut]
		sb := s[blk*sstride : blk*sstride+groups*blockOut]
		for g := range groups {
			var d0, d1, d2, d3 [blockOut]int32
			for p := g * pairs; p < (g+1)*pairs; p++ {
				a0, b0 := int32(x0[2*p]), int32(x0[2*p+1])
				a1, b1 := int32(x1[2*p]), int32(x1[2*p+1])
				a2, b2 := int32(x2[2*p]), int32(x2[2*p+1])
				a3, b3 := int32(x3[2*p]), int32(x3[2*p+1])
				wp := (*[2 * blockOut]int8)(wb[p*2*blockOut:])
				for o := range blockOut {
					w0, w1 := int32(wp[2*o]), int32(wp[2*o+1])
					d0[o] += a0*w0 + b0*w1
					d1[o] += a1*w0 + b1*w1
					d2[o] += a2*w0 + b2*w1
					d3[o] += a3*w0 + b3*w1
				}
			}
			sg := sb[g*blockOut : (g+1)*blockOut]
			for r, d := range [qrows]*[blockOut]int32{&d0, &d1, &d2, &d3} {
				f := acc[r*2*blockOut+blk*blockOut : r*2*blockOut+(blk+1)*blockOut]
				for o, v := range d {
					f[o] = float32(math.FMA(float64(float32(v)), float64(sg[o]), float64(f[o])))
				}
			}
		}
	}
}

// packedGo is applyPacked with qdotGo: what the kernels must give, bit
// for bit.
func packedGo(l *Linear, dst, src []float32, rows int, add bool) {
	in, out := l.In, l.Out
	b := new(qbuf)
	b.quantizeRows(src, rows, in)
	groups := in / Group
	bstride, sstride := in*blockOut, groups*blockOut
	bias := zeros32[:]
	for j := 0; j < out; j += 2 * blockOut {
		blk := j / blockOut
		if l.B != nil {
			bias = l.B[j : j+2*blockOut]
		}
		for r0 := 0; r0 < rows; r0 += qrows {
			acc := &b.out
			qdotGo(b.x[r0*in:], in, l.P.Q[blk*bstride:], bstride, l.P.Scale[blk*sstride:], sstride, groups, acc)
			for r := range min(qrows, rows-r0) {
				for c := range 2 * blockOut {
					v := float32(math.FMA(float64(acc[r*2*blockOut+c]), float64(b.scale[r0+r]), float64(bias[c])))
					store(dst, (r0+r)*out+j+c, v, add)
				}
			}
		}
	}
}

// TestPackedSpec: each assembly kernel gives exactly what the Go
// specification of the integer product gives.
func TestPackedSpec(t *testing.T) {
	defer restoreKernels()
	rng := rand.New(rand.NewPCG(15, 16))
	for _, shape := range [][3]int{{1536, 64, 7}, {384, 96, 5}, {64, 32, 1}} {
		in, out, rows := shape[0], shape[1], shape[2]
		f := randomLinear(rng, in, out)
		q := *f
		q.W = Quantize(f.W.F, out, in)
		pack16(&q)
		src := make([]float32, rows*in)
		for i := range src {
			src[i] = float32(rng.NormFloat64())
		}
		for _, add := range []bool{false, true} {
			want := make([]float32, rows*out)
			for i := range want {
				want[i] = float32(i % 7)
			}
			init := slices.Clone(want)
			packedGo(&q, want, src, rows, add)
			for name, on := range kernels() {
				if name == "go" {
					continue
				}
				on()
				got := slices.Clone(init)
				q.Apply(got, src, rows, add)
				for i := range got {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("%s %dx%d add %v: [%d] = %v, spec %v", name, in, out, add, i, got[i], want[i])
					}
				}
			}
		}
	}
}

// BenchmarkPack packs a feed-forward layer's weights, as the first
// forward pass does for each of the model's 24 layers.
func BenchmarkPack(b *testing.B) {
	rng := rand.New(rand.NewPCG(23, 24))
	f := randomLinear(rng, 384, 1536)
	q := *f
	q.W = Quantize(f.W.F, 1536, 384)
	b.SetBytes(int64(len(q.W.Q)))
	for b.Loop() {
		q.P = nil
		pack16(&q)
	}
}
