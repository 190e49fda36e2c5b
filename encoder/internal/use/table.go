package use

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// tableMagic starts a weight table; the digit is the format version.
const tableMagic = "CBUSE02\n"

// quantGroup is how many consecutive weights of a row share one int8
// scale.
const quantGroup = 64

// WriteTable serializes m with int8 weights: every run of [quantGroup]
// weights of a matrix row (a linear layer's output, an embedding's token)
// gets its own scale, chosen to minimize the squared error;
// biases, layer norms and the timing signal stay float32, vocabulary
// scores float64 (the tokenizer breaks ties on exact sums).
func WriteTable(m *Model) []byte {
	var b bytes.Buffer
	b.WriteString(tableMagic)
	u32 := func(v int) { binary.Write(&b, binary.LittleEndian, uint32(v)) }
	f32s := func(v []float32) {
		u32(len(v))
		binary.Write(&b, binary.LittleEndian, v)
	}
	q8 := func(w []float32, rows, cols int) {
		u32(rows)
		u32(cols)
		groups := (cols + quantGroup - 1) / quantGroup
		scales := make([]float32, rows*groups)
		q := make([]int8, rows*cols)
		for r := 0; r < rows; r++ {
			for g := 0; g < groups; g++ {
				lo, hi := r*cols+g*quantGroup, r*cols+min((g+1)*quantGroup, cols)
				part := w[lo:hi]
				var mx float32
				for _, v := range part {
					mx = max(mx, float32(math.Abs(float64(v))))
				}
				if mx == 0 {
					continue
				}
				s := bestScale(part, mx)
				scales[r*groups+g] = s
				for c, v := range part {
					q[lo+c] = quantize(v, s)
				}
			}
		}
		binary.Write(&b, binary.LittleEndian, scales)
		binary.Write(&b, binary.LittleEndian, q)
	}
	lin := func(l *Linear) {
		q8(l.W.float32s(l.Out, l.In), l.Out, l.In)
		f32s(l.B)
	}
	pieces := m.Tok.pieces
	u32(len(pieces))
	for _, p := range pieces {
		binary.Write(&b, binary.LittleEndian, uint16(len(p.Text)))
		b.WriteString(p.Text)
		binary.Write(&b, binary.LittleEndian, p.Score)
	}
	q8(m.Emb.float32s(m.Rows, EmbedDim), m.Rows, EmbedDim)
	f32s(m.Timing)
	for i := range m.Layers {
		l := &m.Layers[i]
		u32(l.Dim)
		f32s(l.LN1Scale)
		f32s(l.LN1Bias)
		lin(&l.QKV)
		lin(&l.Out)
		if l.Residual != nil {
			u32(1)
			lin(l.Residual)
		} else {
			u32(0)
		}
		f32s(l.LN2Scale)
		f32s(l.LN2Bias)
		lin(&l.FF1)
		lin(&l.FF2)
	}
	lin(&m.Tanh)
	return b.Bytes()
}

// bestScale picks the row's scale among clips of its largest weight
// (100% down to 50%) that makes the smallest squared error: clipping a
// few outliers buys finer steps for all other weights.
func bestScale(row []float32, mx float32) float32 {
	best, bestErr := mx/127, math.Inf(1)
	for f := 100; f >= 50; f-- {
		s := mx * float32(f) / 100 / 127
		var e float64
		for _, v := range row {
			d := float64(v - float32(quantize(v, s))*s)
			e += d * d
		}
		if e < bestErr {
			best, bestErr = s, e
		}
	}
	return best
}

func quantize(v, s float32) int8 {
	return int8(max(-127, min(127, math.Round(float64(v/s)))))
}

// ReadTable decodes a table written by [WriteTable] into an int8 model.
// The model's int8 weights are data itself, not a copy (see [Weights]):
// data must not change afterwards.
func ReadTable(data []byte) (*Model, error) {
	r := &tableReader{b: data}
	if string(r.next(len(tableMagic))) != tableMagic {
		return nil, errors.New("reading encoder weights: not a USE-lite weight table (bad magic)")
	}
	n := r.u32()
	if r.err == nil && n > 1<<20 {
		r.fail("vocabulary of %d pieces", n)
	}
	pieces := make([]Piece, 0, n)
	for i := 0; i < n && r.err == nil; i++ {
		l := int(r.u16())
		text := string(r.next(l))
		score := math.Float64frombits(binary.LittleEndian.Uint64(r.next(8)))
		pieces = append(pieces, Piece{Text: text, Score: score})
	}
	m := &Model{}
	var cols int
	m.Emb, m.Rows, cols = r.q8()
	if r.err == nil && cols != EmbedDim {
		r.fail("embedding width %d, want %d", cols, EmbedDim)
	}
	m.Timing = r.f32s(EmbedDim / 2)
	for i := range m.Layers {
		l := &m.Layers[i]
		l.Dim = r.u32()
		if r.err == nil && l.Dim != EmbedDim && l.Dim != ModelDim {
			r.fail("layer %d width %d", i, l.Dim)
		}
		l.LN1Scale = r.f32s(l.Dim)
		l.LN1Bias = r.f32s(l.Dim)
		l.QKV = r.lin(l.Dim, 3*l.Dim)
		l.Out = r.lin(l.Dim, ModelDim)
		if r.u32() == 1 {
			res := r.lin(l.Dim, ModelDim)
			l.Residual = &res
		}
		l.LN2Scale = r.f32s(ModelDim)
		l.LN2Bias = r.f32s(ModelDim)
		l.FF1 = r.lin(ModelDim, FFNDim)
		l.FF2 = r.lin(FFNDim, ModelDim)
	}
	m.Tanh = r.lin(ModelDim, OutDim)
	if r.err == nil && r.off != len(data) {
		r.fail("%d trailing bytes", len(data)-r.off)
	}
	if r.err == nil && (m.Layers[0].Dim != EmbedDim || m.Layers[0].Residual == nil || m.Layers[1].Dim != ModelDim) {
		r.fail("layer widths %d, %d", m.Layers[0].Dim, m.Layers[1].Dim)
	}
	if r.err == nil && m.Rows < len(pieces) {
		r.fail("%d embedding rows for %d pieces", m.Rows, len(pieces))
	}
	if r.err != nil {
		return nil, r.err
	}
	m.Tok = NewTokenizer(pieces)
	return m, nil
}

type tableReader struct {
	b   []byte
	off int
	err error
}

var zeros [8]byte

func (r *tableReader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("reading encoder weights at byte %d: %s", r.off, fmt.Sprintf(format, args...))
	}
}

func (r *tableReader) next(n int) []byte {
	if r.err != nil || n < 0 || r.off+n > len(r.b) {
		if r.err == nil {
			r.fail("table ends early (need %d more bytes, have %d)", n, len(r.b)-r.off)
		}
		if n <= len(zeros) && n >= 0 {
			return zeros[:n]
		}
		return make([]byte, max(n, 0))
	}
	p := r.b[r.off : r.off+n]
	r.off += n
	return p
}

func (r *tableReader) u16() uint16 { return binary.LittleEndian.Uint16(r.next(2)) }
func (r *tableReader) u32() int    { return int(binary.LittleEndian.Uint32(r.next(4))) }

func (r *tableReader) f32s(want int) []float32 {
	n := r.u32()
	if r.err == nil && n != want {
		r.fail("vector of %d values, want %d", n, want)
	}
	if r.err != nil {
		return make([]float32, want)
	}
	p := r.next(4 * n)
	v := make([]float32, n)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(p[4*i:]))
	}
	return v
}

func (r *tableReader) q8() (w Weights, rows, cols int) {
	rows, cols = r.u32(), r.u32()
	if r.err == nil && (rows <= 0 || cols <= 0 || rows*cols > 1<<24) {
		r.fail("matrix of %d×%d", rows, cols)
	}
	if r.err != nil {
		return Weights{}, 0, 0
	}
	groups := (cols + quantGroup - 1) / quantGroup
	sp := r.next(4 * rows * groups)
	qp := r.next(rows * cols)
	if r.err != nil {
		return Weights{}, 0, 0
	}
	scale := make([]float32, rows*groups)
	for i := range scale {
		scale[i] = math.Float32frombits(binary.LittleEndian.Uint32(sp[4*i:]))
	}
	return Weights{Q: qp[:len(qp):len(qp)], Scale: scale}, rows, cols
}

func (r *tableReader) lin(in, out int) Linear {
	w, rows, cols := r.q8()
	if r.err == nil && (rows != out || cols != in) {
		r.fail("layer of %d×%d, want %d×%d", rows, cols, out, in)
	}
	b := r.f32s(out)
	if r.err != nil {
		return Linear{In: in, Out: out, W: Weights{F: make([]float32, in*out)}, B: make([]float32, out)}
	}
	return Linear{In: in, Out: out, W: w, B: b}
}
