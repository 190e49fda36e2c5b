package use

// Weights is a matrix of weights stored row by row, either as float32 (a
// model converted from the TF.js graph) or as int8 with one float32 scale
// per [quantGroup] weights of a row (a model read from a weight table).
// Its rows are read as float32 one at a time, so an int8 model never
// holds its weights as float32: 7 MB instead of 28.
type Weights struct {
	// F holds float32 weights; when it is nil, Q and Scale hold them.
	F []float32
	// Q holds the int8 weights as bytes (two's complement): weight k of
	// row r is float32(int8(Q[r·cols+k])) · Scale[r·groups+k/quantGroup],
	// exactly the product WriteTable's reader once stored as float32, so
	// the vectors do not change. Q is the slice of the table it was read
	// from, not a copy: the built-in table is in the binary's read-only
	// data and takes no heap.
	Q     []byte
	Scale []float32
}

// maxCols bounds the rows a caller decodes into a buffer on its stack:
// the widest input of any layer.
const maxCols = FFNDim

// row returns row r of a matrix of cols columns as float32: F's own row,
// or Q's decoded into buf (at least cols long).
func (w *Weights) row(buf []float32, r, cols int) []float32 {
	if w.F != nil {
		return w.F[r*cols : (r+1)*cols : (r+1)*cols]
	}
	groups := (cols + quantGroup - 1) / quantGroup
	dst := buf[:cols:cols]
	q := w.Q[r*cols : (r+1)*cols]
	scale := w.Scale[r*groups : (r+1)*groups]
	if useAVX2 && cols%quantGroup == 0 {
		dequantAVX2(&dst[0], &q[0], &scale[0], groups)
		return dst
	}
	dequant(dst, q, scale)
	return dst
}

// dequant decodes int8 weights q, one scale a quantGroup, into dst.
func dequant(dst []float32, q []byte, scale []float32) {
	for g, s := range scale {
		lo, hi := g*quantGroup, min((g+1)*quantGroup, len(dst))
		for k := lo; k < hi; k++ {
			dst[k] = float32(int8(q[k])) * s
		}
	}
}

// float32s returns every weight of a matrix of rows×cols as float32.
func (w *Weights) float32s(rows, cols int) []float32 {
	if w.F != nil {
		return w.F
	}
	out := make([]float32, rows*cols)
	for r := range rows {
		w.row(out[r*cols:], r, cols)
	}
	return out
}
