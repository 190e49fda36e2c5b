package tensor

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
)

// A weight table is a model's weights in one little-endian byte string:
// a magic line naming the model and the format's version, then what the
// model's own writer puts in, in its own order, from the pieces below:
//
//	u32, u16, f64        numbers
//	f32s                 u32 count, then the float32 values
//	q8                   u32 rows, u32 cols, rows·groups float32 scales,
//	                     then rows·cols int8 weights (see [Quantize])
//	linear               q8 of the Out×In weights, then f32s of the bias
//
// Writer writes them and Reader reads them back, checking every count
// against what the model expects.

// Writer builds a weight table.
type Writer struct {
	b bytes.Buffer
}

// NewWriter starts a table with its magic line.
func NewWriter(magic string) *Writer {
	w := &Writer{}
	w.b.WriteString(magic)
	return w
}

// Bytes returns the table written so far.
func (w *Writer) Bytes() []byte { return w.b.Bytes() }

// U16 writes v as a uint16.
func (w *Writer) U16(v int) { binary.Write(&w.b, binary.LittleEndian, uint16(v)) }

// U32 writes v as a uint32.
func (w *Writer) U32(v int) { binary.Write(&w.b, binary.LittleEndian, uint32(v)) }

// F64 writes v.
func (w *Writer) F64(v float64) { binary.Write(&w.b, binary.LittleEndian, v) }

// Raw writes p as it is.
func (w *Writer) Raw(p []byte) { w.b.Write(p) }

// F32s writes the count of v, then v.
func (w *Writer) F32s(v []float32) {
	w.U32(len(v))
	binary.Write(&w.b, binary.LittleEndian, v)
}

// Q8 writes f, a matrix of rows×cols, quantized to int8 ([Quantize]).
func (w *Writer) Q8(f []float32, rows, cols int) {
	w.U32(rows)
	w.U32(cols)
	q := Quantize(f, rows, cols)
	binary.Write(&w.b, binary.LittleEndian, q.Scale)
	w.b.Write(q.Q)
}

// Linear writes l's weights as int8 and its bias as float32.
func (w *Writer) Linear(l *Linear) {
	w.Q8(l.W.Float32s(l.Out, l.In), l.Out, l.In)
	w.F32s(l.B)
}

// Reader reads a weight table. Once a read fails, every later read
// returns zeros of the right length and the first error stays in
// [Reader.Err], so a model's reader can read on and check once.
type Reader struct {
	b   []byte
	off int
	err error
}

// NewReader starts reading data.
func NewReader(data []byte) *Reader { return &Reader{b: data} }

// Err returns the first failure.
func (r *Reader) Err() error { return r.err }

// Magic reports whether the table starts with magic, and reads past it.
func (r *Reader) Magic(magic string) bool {
	return len(r.b) >= len(magic) && string(r.Next(len(magic))) == magic
}

// Fail records a failure at the current offset, unless one is recorded.
func (r *Reader) Fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("reading encoder weights at byte %d: %s", r.off, fmt.Sprintf(format, args...))
	}
}

// End fails unless every byte was read.
func (r *Reader) End() {
	if r.err == nil && r.off != len(r.b) {
		r.Fail("%d trailing bytes", len(r.b)-r.off)
	}
}

var zeros [8]byte

// Next returns the next n bytes, a slice of the table (not a copy).
func (r *Reader) Next(n int) []byte {
	if r.err != nil || n < 0 || r.off+n > len(r.b) {
		if r.err == nil {
			r.Fail("table ends early (need %d more bytes, have %d)", n, len(r.b)-r.off)
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

// U16 reads a uint16.
func (r *Reader) U16() int { return int(binary.LittleEndian.Uint16(r.Next(2))) }

// U32 reads a uint32.
func (r *Reader) U32() int { return int(binary.LittleEndian.Uint32(r.Next(4))) }

// F64 reads a float64.
func (r *Reader) F64() float64 { return math.Float64frombits(binary.LittleEndian.Uint64(r.Next(8))) }

// F32s reads a float32 vector that must hold want values.
func (r *Reader) F32s(want int) []float32 {
	n := r.U32()
	if r.err == nil && n != want {
		r.Fail("vector of %d values, want %d", n, want)
	}
	if r.err != nil {
		return make([]float32, want)
	}
	return float32s(r.Next(4 * n))
}

func float32s(p []byte) []float32 {
	v := make([]float32, len(p)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(p[4*i:]))
	}
	return v
}

// Q8 reads an int8 matrix. Its weights are the table's bytes, not a copy.
func (r *Reader) Q8() (w Weights, rows, cols int) {
	rows, cols = r.U32(), r.U32()
	if r.err == nil && (rows <= 0 || cols <= 0 || rows*cols > 1<<24) {
		r.Fail("matrix of %d×%d", rows, cols)
	}
	if r.err != nil {
		return Weights{}, 0, 0
	}
	sp := r.Next(4 * rows * Groups(cols))
	qp := r.Next(rows * cols)
	if r.err != nil {
		return Weights{}, 0, 0
	}
	return Weights{Q: qp[:len(qp):len(qp)], Scale: float32s(sp)}, rows, cols
}

// Linear reads a layer that must map in values to out. After a failure
// it returns a zero layer of the right shape.
func (r *Reader) Linear(in, out int) Linear {
	w, rows, cols := r.Q8()
	if r.err == nil && (rows != out || cols != in) {
		r.Fail("layer of %d×%d, want %d×%d", rows, cols, out, in)
	}
	b := r.F32s(out)
	if r.err != nil {
		return Linear{In: in, Out: out, W: Weights{F: make([]float32, in*out)}, B: make([]float32, out)}
	}
	return Linear{In: in, Out: out, W: w, B: b}
}
