package tensor

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func randomLinear(rng *rand.Rand, in, out int) *Linear {
	l := &Linear{In: in, Out: out, W: Weights{F: make([]float32, in*out)}, B: make([]float32, out)}
	for i := range l.W.F {
		l.W.F[i] = rng.Float32()*2 - 1
	}
	for i := range l.B {
		l.B[i] = rng.Float32()
	}
	return l
}

// TestKernels checks the assembly matrix product against the portable
// one for every row remainder, both modes, float32 and int8 weights.
func TestKernels(t *testing.T) {
	if !HaveAVX2 {
		t.Skip("no AVX2+FMA on this machine: only the portable kernel runs")
	}
	defer func() { UseAVX2 = HaveAVX2 }()
	rng := rand.New(rand.NewPCG(1, 2))
	f := randomLinear(rng, 128, 6)
	q := *f
	q.W = Quantize(f.W.F, f.Out, f.In)
	for _, l := range []*Linear{f, &q} {
		for rows := 1; rows <= 70; rows++ {
			src := make([]float32, rows*l.In)
			for i := range src {
				src[i] = rng.Float32()*2 - 1
			}
			for _, add := range []bool{false, true} {
				want := make([]float32, rows*l.Out)
				got := make([]float32, rows*l.Out)
				for i := range want {
					want[i] = float32(i)
					got[i] = float32(i)
				}
				UseAVX2 = false
				l.Apply(want, src, rows, add)
				UseAVX2 = true
				l.Apply(got, src, rows, add)
				for i := range want {
					if math.Abs(float64(want[i]-got[i])) > 1e-4 {
						t.Fatalf("int8 %v rows %d add %v: [%d] = %v, portable %v", l.W.F == nil, rows, add, i, got[i], want[i])
					}
				}
			}
		}
	}
}

// TestQuantize: each weight decodes to within half a step of its group's
// scale (or is clipped at the group's chosen range), an all-zero group
// stays zero, and both decoders (portable and AVX2) agree bit for bit.
func TestQuantize(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	rows, cols := 5, 200 // a ragged last group of 8
	f := make([]float32, rows*cols)
	for i := range f {
		f[i] = float32(rng.NormFloat64())
	}
	for c := 64; c < 128; c++ {
		f[2*cols+c] = 0
	}
	w := Quantize(f, rows, cols)
	groups := Groups(cols)
	if len(w.Scale) != rows*groups || len(w.Q) != rows*cols {
		t.Fatalf("%d scales, %d weights; want %d, %d", len(w.Scale), len(w.Q), rows*groups, rows*cols)
	}
	if w.Scale[2*groups+1] != 0 {
		t.Errorf("all-zero group has scale %v", w.Scale[2*groups+1])
	}
	dec := w.Float32s(rows, cols)
	for r := range rows {
		for c := range cols {
			s := w.Scale[r*groups+c/Group]
			v, d := f[r*cols+c], dec[r*cols+c]
			if math.Abs(float64(v)) <= 127*float64(s) && math.Abs(float64(v-d)) > float64(s)/2+1e-7 {
				t.Fatalf("[%d,%d] = %v decodes to %v, step %v", r, c, v, d, s)
			}
		}
	}
	// Rows of whole groups go through the AVX2 decoder where there is one.
	sq := Quantize(f[:rows*192], rows, 192)
	defer func() { UseAVX2 = HaveAVX2 }()
	var want []float32
	for _, avx := range []bool{false, HaveAVX2} {
		UseAVX2 = avx
		got := sq.Float32s(rows, 192)
		if want == nil {
			want = got
		}
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("AVX2 %v: [%d] = %v, portable %v", avx, i, got[i], want[i])
			}
		}
	}
}

// TestTableRoundTrip writes every kind of value and reads it back.
func TestTableRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	l := randomLinear(rng, 64, 4)
	w := NewWriter("TEST01\n")
	w.U16(7)
	w.U32(1 << 20)
	w.F64(math.Pi)
	w.F32s([]float32{1, -2.5})
	w.Linear(l)
	r := NewReader(w.Bytes())
	if !r.Magic("TEST01\n") {
		t.Fatal("magic not read back")
	}
	if a, b, c := r.U16(), r.U32(), r.F64(); a != 7 || b != 1<<20 || c != math.Pi {
		t.Fatalf("numbers %v %v %v", a, b, c)
	}
	if v := r.F32s(2); v[0] != 1 || v[1] != -2.5 {
		t.Fatalf("f32s %v", v)
	}
	got := r.Linear(64, 4)
	r.End()
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	want := Quantize(l.W.F, 4, 64)
	if string(got.W.Q) != string(want.Q) || got.B[3] != l.B[3] {
		t.Fatal("layer not read back as written")
	}
}

// TestReaderErrors: each broken table fails with an error saying what and
// where, and reading on after a failure neither panics nor hides it.
func TestReaderErrors(t *testing.T) {
	w := NewWriter("M\n")
	w.F32s([]float32{1, 2, 3})
	w.Linear(randomLinear(rand.New(rand.NewPCG(7, 8)), 8, 2))
	good := w.Bytes()
	for _, tc := range []struct {
		name string
		data []byte
		read func(r *Reader)
		want string
	}{
		{"short vector", good, func(r *Reader) { r.F32s(4) }, "vector of 3 values, want 4"},
		{"wrong layer", good, func(r *Reader) { r.F32s(3); r.Linear(8, 3) }, "layer of 2×8, want 3×8"},
		{"truncated", good[:len(good)-3], func(r *Reader) { r.F32s(3); r.Linear(8, 2) }, "table ends early"},
		{"trailing", append(append([]byte{}, good...), 9), func(r *Reader) { r.F32s(3); r.Linear(8, 2); r.End() }, "1 trailing bytes"},
		{"huge matrix", []byte("M\n\x00\x00\x00\x01\x00\x00\x00\x01"), func(r *Reader) { r.Q8() }, "matrix of 16777216×16777216"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewReader(tc.data)
			if !r.Magic("M\n") {
				t.Fatal("magic")
			}
			tc.read(r)
			r.F32s(5) // reading on is harmless
			if err := r.Err(); err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "at byte") {
				t.Fatalf("error %v, want one with %q and its byte offset", err, tc.want)
			}
		})
	}
	if NewReader([]byte("M")).Magic("M\n") {
		t.Error("a table shorter than its magic passed")
	}
}

// TestMulTStrided checks the strided product, both kernels, against the
// plain sums, for ragged rows and columns.
func TestMulTStrided(t *testing.T) {
	defer restoreKernels()
	rng := rand.New(rand.NewPCG(19, 20))
	const k, astride, bstride, dstride = 32, 100, 70, 9
	for rows := 1; rows <= 6; rows++ {
		for n := 1; n <= 9; n++ {
			a := make([]float32, rows*astride)
			b := make([]float32, n*bstride)
			for i := range a {
				a[i] = rng.Float32() - 0.5
			}
			for i := range b {
				b[i] = rng.Float32() - 0.5
			}
			for _, avx := range []bool{false, HaveAVX2} {
				UseAVX2 = avx
				dst := make([]float32, rows*dstride)
				MulTStrided(dst, dstride, a, astride, rows, b, bstride, n, k)
				for i := range rows {
					for j := range dstride {
						var want float64
						if j < n {
							for c := range k {
								want += float64(a[i*astride+c]) * float64(b[j*bstride+c])
							}
						}
						if math.Abs(float64(dst[i*dstride+j])-want) > 1e-5 {
							t.Fatalf("avx %v rows %d n %d: [%d,%d] = %v, want %v", avx, rows, n, i, j, dst[i*dstride+j], want)
						}
					}
				}
			}
		}
	}
}

// TestPortableRowsAlone: on the portable path (no assembly) a row's
// product has the same bits in a batch of any size as alone, for float32
// and int8 weights and an odd width, so a text's vector does not depend
// on the batch it is embedded in. (dot4Go and dot1Go once summed in two
// orders; under qemu-aarch64, before arm64 had kernels, the encoder's
// TestSharedPasses caught it.)
func TestPortableRowsAlone(t *testing.T) {
	defer restoreKernels()
	UseAMX, UseVNNI, UseAVXVNNI, UseAVX2, UseSDOT, UseNEON = false, false, false, false, false, false
	rng := rand.New(rand.NewPCG(61, 62))
	for _, shape := range [][2]int{{64, 32}, {67, 5}, {384, 96}} {
		in, out := shape[0], shape[1]
		f := randomLinear(rng, in, out)
		layers := map[string]*Linear{"float32": f}
		if in%Group == 0 {
			q := *f
			q.W = Quantize(f.W.F, out, in)
			layers["int8"] = &q
		}
		for name, l := range layers {
			for rows := 1; rows <= 9; rows++ {
				src := make([]float32, rows*in)
				for i := range src {
					src[i] = float32(rng.NormFloat64())
				}
				batch := make([]float32, rows*out)
				l.Apply(batch, src, rows, false)
				for r := range rows {
					alone := make([]float32, out)
					l.Apply(alone, src[r*in:(r+1)*in], 1, false)
					for o := range out {
						if math.Float32bits(alone[o]) != math.Float32bits(batch[r*out+o]) {
							t.Fatalf("%s %dx%d, row %d of %d: output %d is %v alone, %v in the batch", name, in, out, r, rows, o, alone[o], batch[r*out+o])
						}
					}
				}
			}
		}
	}
}
