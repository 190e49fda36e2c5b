package use

import (
	"encoding/binary"
	"errors"
	"math"

	"github.com/capbroker/capbroker/encoder/internal/tensor"
)

// tableMagic starts a weight table; the digit is the format version.
const tableMagic = "CBUSE02\n"

// WriteTable serializes m with int8 weights ([tensor.Quantize]: a scale
// per 64 weights of a matrix row, a linear layer's output or an
// embedding's token); biases, layer norms and the timing signal stay
// float32, vocabulary scores float64 (the tokenizer breaks ties on exact
// sums).
func WriteTable(m *Model) []byte {
	w := tensor.NewWriter(tableMagic)
	w.U32(len(m.Tok.pieces))
	for _, p := range m.Tok.pieces {
		w.U16(len(p.Text))
		w.Raw([]byte(p.Text))
		w.F64(p.Score)
	}
	w.Q8(m.Emb.Float32s(m.Rows, EmbedDim), m.Rows, EmbedDim)
	w.F32s(m.Timing)
	for i := range m.Layers {
		l := &m.Layers[i]
		w.U32(l.Dim)
		w.F32s(l.LN1Scale)
		w.F32s(l.LN1Bias)
		w.Linear(&l.QKV)
		w.Linear(&l.Out)
		if l.Residual != nil {
			w.U32(1)
			w.Linear(l.Residual)
		} else {
			w.U32(0)
		}
		w.F32s(l.LN2Scale)
		w.F32s(l.LN2Bias)
		w.Linear(&l.FF1)
		w.Linear(&l.FF2)
	}
	w.Linear(&m.Tanh)
	return w.Bytes()
}

// ReadTable decodes a table written by [WriteTable] into an int8 model.
// The model's int8 weights are data itself, not a copy (see [Weights]):
// data must not change afterwards.
func ReadTable(data []byte) (*Model, error) {
	r := tensor.NewReader(data)
	if !r.Magic(tableMagic) {
		return nil, errors.New("reading encoder weights: not a USE-lite weight table (bad magic)")
	}
	n := r.U32()
	if r.Err() == nil && n > 1<<20 {
		r.Fail("vocabulary of %d pieces", n)
	}
	pieces := make([]Piece, 0, min(n, 1<<20))
	for i := 0; i < n && r.Err() == nil; i++ {
		l := r.U16()
		text := string(r.Next(l))
		score := math.Float64frombits(binary.LittleEndian.Uint64(r.Next(8)))
		pieces = append(pieces, Piece{Text: text, Score: score})
	}
	m := &Model{}
	var cols int
	m.Emb, m.Rows, cols = r.Q8()
	if r.Err() == nil && cols != EmbedDim {
		r.Fail("embedding width %d, want %d", cols, EmbedDim)
	}
	m.Timing = r.F32s(EmbedDim / 2)
	for i := range m.Layers {
		l := &m.Layers[i]
		l.Dim = r.U32()
		if r.Err() == nil && l.Dim != EmbedDim && l.Dim != ModelDim {
			r.Fail("layer %d width %d", i, l.Dim)
		}
		l.LN1Scale = r.F32s(l.Dim)
		l.LN1Bias = r.F32s(l.Dim)
		l.QKV = r.Linear(l.Dim, 3*l.Dim)
		l.Out = r.Linear(l.Dim, ModelDim)
		if r.U32() == 1 {
			res := r.Linear(l.Dim, ModelDim)
			l.Residual = &res
		}
		l.LN2Scale = r.F32s(ModelDim)
		l.LN2Bias = r.F32s(ModelDim)
		l.FF1 = r.Linear(ModelDim, FFNDim)
		l.FF2 = r.Linear(FFNDim, ModelDim)
	}
	m.Tanh = r.Linear(ModelDim, OutDim)
	r.End()
	if r.Err() == nil && (m.Layers[0].Dim != EmbedDim || m.Layers[0].Residual == nil || m.Layers[1].Dim != ModelDim) {
		r.Fail("layer widths %d, %d", m.Layers[0].Dim, m.Layers[1].Dim)
	}
	if r.Err() == nil && m.Rows < len(pieces) {
		r.Fail("%d embedding rows for %d pieces", m.Rows, len(pieces))
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	m.Tok = NewTokenizer(pieces)
	return m, nil
}
