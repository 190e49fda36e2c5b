package bert

import (
	"errors"
	"sync"

	"github.com/capbroker/capbroker/encoder/internal/tensor"
)

// tableMagic starts a weight table; the digit is the format version.
const tableMagic = "CBMINILM01\n"

// WriteTable serializes m with int8 matrices (the word embeddings and
// every linear layer, [tensor.Quantize]); position and type embeddings,
// biases and layer norms stay float32. The vocabulary comes first, in id
// order.
func WriteTable(m *Model) []byte {
	w := tensor.NewWriter(tableMagic)
	w.U32(m.Tok.Len())
	for _, p := range m.Tok.vocab {
		w.U16(len(p))
		w.Raw([]byte(p))
	}
	w.Q8(m.Word.Float32s(VocabSize, Hidden), VocabSize, Hidden)
	w.F32s(m.Pos)
	w.F32s(m.Type)
	w.F32s(m.EmbNScale)
	w.F32s(m.EmbNBias)
	for i := range m.Layers {
		l := &m.Layers[i]
		w.Linear(&l.QKV)
		w.Linear(&l.Out)
		w.F32s(l.AttNScale)
		w.F32s(l.AttNBias)
		w.Linear(&l.FF1)
		w.Linear(&l.FF2)
		w.F32s(l.OutNScale)
		w.F32s(l.OutNBias)
	}
	return w.Bytes()
}

// ReadTable decodes a table written by [WriteTable] into an int8 model.
// The model's int8 weights are data itself, not a copy: data must not
// change afterwards.
func ReadTable(data []byte) (*Model, error) {
	r := tensor.NewReader(data)
	if !r.Magic(tableMagic) {
		return nil, errors.New("reading encoder weights: not a MiniLM weight table (bad magic)")
	}
	n := r.U32()
	if r.Err() == nil && n != VocabSize {
		r.Fail("vocabulary of %d pieces, want %d", n, VocabSize)
	}
	vocab := make([]string, 0, VocabSize)
	for i := 0; i < n && r.Err() == nil; i++ {
		vocab = append(vocab, string(r.Next(r.U16())))
	}
	m := &Model{}
	var rows, cols int
	m.Word, rows, cols = r.Q8()
	if r.Err() == nil && (rows != VocabSize || cols != Hidden) {
		r.Fail("word embeddings of %d×%d, want %d×%d", rows, cols, VocabSize, Hidden)
	}
	m.Pos = r.F32s(MaxTokens * Hidden)
	m.Type = r.F32s(Hidden)
	m.EmbNScale = r.F32s(Hidden)
	m.EmbNBias = r.F32s(Hidden)
	for i := range m.Layers {
		l := &m.Layers[i]
		l.QKV = r.Linear(Hidden, 3*Hidden)
		l.Out = r.Linear(Hidden, Hidden)
		l.AttNScale = r.F32s(Hidden)
		l.AttNBias = r.F32s(Hidden)
		l.FF1 = r.Linear(Hidden, FFNDim)
		l.FF2 = r.Linear(FFNDim, Hidden)
		l.OutNScale = r.F32s(Hidden)
		l.OutNBias = r.F32s(Hidden)
	}
	r.End()
	if err := r.Err(); err != nil {
		return nil, err
	}
	m.Tok = NewTokenizer(vocab)
	m.pack = new(sync.Once)
	return m, nil
}
