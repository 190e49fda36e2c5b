package tensor

import "math"

// Group is how many consecutive weights of a row share one int8 scale.
const Group = 64

// MaxStackCols bounds the rows a product decodes into a buffer on its
// stack: the widest input of any layer of the built-in models. Wider
// rows are decoded into a buffer on the heap.
const MaxStackCols = 1536

// Weights is a matrix of weights stored row by row, either as float32 (a
// model converted from its published weights) or as int8 with one
// float32 scale per [Group] weights of a row (a model read from a weight
// table). Its rows are read as float32 one at a time, so an int8 model
// never holds its weights as float32.
type Weights struct {
	// F holds float32 weights; when it is nil, Q and Scale hold them.
	F []float32
	// Q holds the int8 weights as bytes (two's complement): weight k of
	// row r is float32(int8(Q[r·cols+k])) · Scale[r·groups+k/Group],
	// exactly the product a reader once stored as float32, so the vectors
	// do not change. Q is the slice of the table it was read from, not a
	// copy: a table embedded in the binary is read-only data and takes no
	// heap.
	Q     []byte
	Scale []float32
}

// Groups returns how many scales a row of cols weights has.
func Groups(cols int) int { return (cols + Group - 1) / Group }

// Row returns row r of a matrix of cols columns as float32: F's own row,
// or Q's decoded into buf (at least cols long).
func (w *Weights) Row(buf []float32, r, cols int) []float32 {
	if w.F != nil {
		return w.F[r*cols : (r+1)*cols : (r+1)*cols]
	}
	groups := Groups(cols)
	dst := buf[:cols:cols]
	q := w.Q[r*cols : (r+1)*cols]
	scale := w.Scale[r*groups : (r+1)*groups]
	if UseAVX2 && cols%Group == 0 {
		dequantAVX2(&dst[0], &q[0], &scale[0], groups)
		return dst
	}
	dequant(dst, q, scale)
	return dst
}

// dequant decodes int8 weights q, one scale a Group, into dst.
func dequant(dst []float32, q []byte, scale []float32) {
	for g, s := range scale {
		lo, hi := g*Group, min((g+1)*Group, len(dst))
		for k := lo; k < hi; k++ {
			dst[k] = float32(int8(q[k])) * s
		}
	}
}

// Float32s returns every weight of a matrix of rows×cols as float32.
func (w *Weights) Float32s(rows, cols int) []float32 {
	if w.F != nil {
		return w.F
	}
	out := make([]float32, rows*cols)
	for r := range rows {
		w.Row(out[r*cols:], r, cols)
	}
	return out
}

// Decoded returns the weights with every int8 weight decoded to float32
// up front: the values a product decoding row by row reads.
func (w *Weights) Decoded(rows, cols int) Weights {
	return Weights{F: w.Float32s(rows, cols)}
}

// Quantize returns f, a matrix of rows×cols, as int8: every run of
// [Group] weights of a row gets its own scale, chosen to minimize the
// squared error (see [BestScale]). An all-zero run keeps the scale 0.
func Quantize(f []float32, rows, cols int) Weights {
	groups := Groups(cols)
	scales := make([]float32, rows*groups)
	q := make([]byte, rows*cols)
	for r := range rows {
		for g := range groups {
			lo, hi := r*cols+g*Group, r*cols+min((g+1)*Group, cols)
			part := f[lo:hi]
			var mx float32
			for _, v := range part {
				mx = max(mx, float32(math.Abs(float64(v))))
			}
			if mx == 0 {
				continue
			}
			s := BestScale(part, mx)
			scales[r*groups+g] = s
			for c, v := range part {
				q[lo+c] = byte(quantize(v, s))
			}
		}
	}
	return Weights{Q: q, Scale: scales}
}

// BestScale picks the scale of a run of weights among clips of its
// largest magnitude mx (100% down to 50%) that makes the smallest squared
// error: clipping a few outliers buys finer steps for all other weights.
func BestScale(row []float32, mx float32) float32 {
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
