package use

import (
	"math"
	"sync"

	"github.com/capbroker/capbroker/encoder/internal/tensor"
)

// Model dimensions of Universal Sentence Encoder lite.
const (
	EmbedDim  = 256 // token embeddings and the first layer's input
	ModelDim  = 512 // the transformer's width after the first layer
	OutDim    = 512 // the sentence vector
	FFNDim    = 1536
	Heads     = 4
	MaxTokens = 128 // the graph drops pieces past this position
	lnEpsilon = 1e-6
	l2Epsilon = 1e-12
)

// Linear is a dense layer y = x·Wᵀ + b.
type Linear = tensor.Linear

// Weights is a matrix of float32 or int8 weights.
type Weights = tensor.Weights

// Layer is one transformer layer (pre-norm, multi-head self-attention,
// then a ReLU feed-forward network, each with a residual connection).
type Layer struct {
	Dim               int // input width: 256 for layer 0, 512 for layer 1
	LN1Scale, LN1Bias []float32
	QKV               Linear // Dim -> 3·Dim
	Out               Linear // Dim -> ModelDim
	// Residual projects the input to ModelDim for the residual path when
	// Dim differs (layer 0 only).
	Residual          *Linear
	LN2Scale, LN2Bias []float32
	FF1, FF2          Linear
}

// Model is USE-lite's weights: int8 as the weight table holds them (see
// [ReadTable]), or float32 as converted from the TF.js graph.
type Model struct {
	Tok *Tokenizer
	// Emb holds one EmbedDim row per vocabulary id.
	Emb    Weights
	Rows   int
	Timing []float32 // 128 inverse timescales
	// signal caches the timing signal of every position.
	signal     []float32
	signalOnce sync.Once
	Layers     [2]Layer
	Tanh       Linear
}

// timingSignal writes the sinusoid position signal of position pos.
func (m *Model) timingSignal(dst []float32, pos int) {
	m.signalOnce.Do(func() {
		half := len(m.Timing)
		m.signal = make([]float32, MaxTokens*EmbedDim)
		for p := range MaxTokens {
			row := m.signal[p*EmbedDim : (p+1)*EmbedDim]
			for i, inv := range m.Timing {
				a := float32(p) * inv
				row[i] = float32(math.Sin(float64(a)))
				row[half+i] = float32(math.Cos(float64(a)))
			}
		}
	})
	copy(dst, m.signal[pos*EmbedDim:(pos+1)*EmbedDim])
}

// Scratch holds the buffers of a forward pass, reused between calls. A
// Scratch is not safe for concurrent use.
type Scratch struct {
	x, a, h, qkv, ff, att, scores, pooled, out []float32
}

var grow = tensor.Grow

// Clip returns ids cut to the positions the model reads.
func Clip(ids []int32) []int32 {
	if len(ids) > MaxTokens {
		return ids[:MaxTokens]
	}
	return ids
}

// Forward embeds token sequences (already clipped) into dst, one OutDim
// vector a sequence, L2-normalized. An empty sequence gets the zero
// vector. Sequences are run as one batch: matrix products cover all rows
// of all sequences, attention stays within each sequence.
func (m *Model) Forward(s *Scratch, seqs [][]int32, dst [][]float32) {
	rows := 0
	for _, q := range seqs {
		rows += len(q)
	}
	s.x = grow(s.x, rows*ModelDim)
	s.a = grow(s.a, rows*ModelDim)
	s.h = grow(s.h, rows*ModelDim)
	s.qkv = grow(s.qkv, rows*3*ModelDim)
	s.ff = grow(s.ff, rows*FFNDim)
	s.att = grow(s.att, rows*ModelDim)

	// Input: the graph adds the embedding twice (once through its
	// timing-signal branch) plus the position signal.
	x := s.x[:rows*EmbedDim]
	var ebuf [EmbedDim]float32
	r := 0
	for _, q := range seqs {
		for pos, id := range q {
			row := x[r*EmbedDim : (r+1)*EmbedDim]
			m.timingSignal(row, pos)
			e := m.Emb.Row(ebuf[:], int(id), EmbedDim)
			for i := range row {
				row[i] += 2 * e[i]
			}
			r++
		}
	}

	in := x
	for li := range m.Layers {
		l := &m.Layers[li]
		d := l.Dim
		a := s.a[:rows*d]
		tensor.LayerNorm(a, in, rows, d, l.LN1Scale, l.LN1Bias, lnEpsilon)
		qkv := s.qkv[:rows*3*d]
		l.QKV.Apply(qkv, a, rows, false)
		att := s.att[:rows*d]
		s.attention(att, qkv, seqs, d)
		h := s.h[:rows*ModelDim]
		if l.Residual != nil {
			l.Residual.Apply(h, in, rows, false)
		} else {
			copy(h, in)
		}
		l.Out.Apply(h, att, rows, true)
		// Feed-forward with its residual.
		a = s.a[:rows*ModelDim]
		tensor.LayerNorm(a, h, rows, ModelDim, l.LN2Scale, l.LN2Bias, lnEpsilon)
		ff := s.ff[:rows*FFNDim]
		l.FF1.Apply(ff, a, rows, false)
		relu(ff)
		l.FF2.Apply(h, ff, rows, true)
		// h is the next layer's input; swap buffers.
		s.x, s.h = s.h, s.x
		in = s.x[:rows*ModelDim]
	}

	// Mean over each sequence's positions, then tanh and L2 norm.
	s.pooled = grow(s.pooled, len(seqs)*ModelDim)
	pooled := s.pooled
	clear(pooled)
	r = 0
	for i, q := range seqs {
		p := pooled[i*ModelDim : (i+1)*ModelDim]
		for range q {
			row := in[r*ModelDim : (r+1)*ModelDim]
			for j, v := range row {
				p[j] += v
			}
			r++
		}
		if n := len(q); n > 0 {
			inv := 1 / float32(n)
			for j := range p {
				p[j] *= inv
			}
		}
	}
	s.out = grow(s.out, len(seqs)*OutDim)
	out := s.out
	m.Tanh.Apply(out, pooled, len(seqs), false)
	for i, q := range seqs {
		v := dst[i][:OutDim]
		if len(q) == 0 {
			clear(v)
			continue
		}
		var sum float64
		o := out[i*OutDim : (i+1)*OutDim]
		for j, y := range o {
			t := float32(math.Tanh(float64(y)))
			v[j] = t
			sum += float64(t) * float64(t)
		}
		inv := float32(1 / math.Sqrt(math.Max(sum, l2Epsilon)))
		for j := range v {
			v[j] *= inv
		}
	}
}

// attention computes multi-head scaled dot-product attention within each
// sequence; qkv holds rows of [q | k | v], each d wide.
func (s *Scratch) attention(dst, qkv []float32, seqs [][]int32, d int) {
	hd := d / Heads
	scale := float32(1 / math.Sqrt(float64(hd)))
	stride := 3 * d
	base := 0
	for _, q := range seqs {
		t := len(q)
		s.scores = grow(s.scores, t*t)
		sc := s.scores
		for h := 0; h < Heads; h++ {
			qo, ko, vo := h*hd, d+h*hd, 2*d+h*hd
			for i := 0; i < t; i++ {
				qi := qkv[(base+i)*stride+qo : (base+i)*stride+qo+hd]
				row := sc[i*t : (i+1)*t]
				mx := float32(math.Inf(-1))
				for j := 0; j < t; j++ {
					kj := qkv[(base+j)*stride+ko : (base+j)*stride+ko+hd]
					var acc float32
					for c, qv := range qi {
						acc += qv * scale * kj[c]
					}
					row[j] = acc
					if acc > mx {
						mx = acc
					}
				}
				var sum float32
				for j, v := range row {
					e := float32(math.Exp(float64(v - mx)))
					row[j] = e
					sum += e
				}
				inv := 1 / sum
				out := dst[(base+i)*d+h*hd : (base+i)*d+h*hd+hd]
				clear(out)
				for j, p := range row {
					p *= inv
					vj := qkv[(base+j)*stride+vo : (base+j)*stride+vo+hd]
					for c, v := range vj {
						out[c] += p * v
					}
				}
			}
		}
		base += t
	}
}

func relu(x []float32) {
	for i, v := range x {
		if v < 0 {
			x[i] = 0
		}
	}
}
