package bert

import (
	"math"
	"sync"
	"sync/atomic"

	"github.com/capbroker/capbroker/encoder/internal/tensor"
)

// Dimensions of all-MiniLM-L6-v2.
const (
	Hidden    = 384 // the transformer's width and the sentence vector's
	Heads     = 12
	headDim   = Hidden / Heads
	Layers    = 6
	FFNDim    = 1536
	VocabSize = 30522
	// MaxTokens is how many ids the model reads, [CLS] and [SEP]
	// included: the length it was trained on (its tokenizer.json
	// truncates there).
	MaxTokens = 128
	lnEpsilon = 1e-12
)

// Layer is one post-norm transformer layer: multi-head self-attention,
// add and normalize, a GELU feed-forward network, add and normalize.
type Layer struct {
	// QKV maps a row to its query, key and value, side by side.
	QKV                 tensor.Linear // Hidden -> 3·Hidden
	Out                 tensor.Linear // Hidden -> Hidden
	AttNScale, AttNBias []float32
	FF1                 tensor.Linear // Hidden -> FFNDim
	FF2                 tensor.Linear // FFNDim -> Hidden
	OutNScale, OutNBias []float32
}

// Model is all-MiniLM-L6-v2's weights: int8 as the weight table holds
// them (see [ReadTable]), or float32 as converted from the published
// safetensors file.
type Model struct {
	Tok *Tokenizer
	// Word holds one Hidden row per vocabulary id.
	Word tensor.Weights
	// Pos holds the first MaxTokens position embeddings, Type the token
	// type 0 embedding (a single sentence is all type 0).
	Pos, Type           []float32
	EmbNScale, EmbNBias []float32
	Layers              [Layers]Layer

	// pack, set by ReadTable, packs the int8 layers when it pays.
	pack *packer
}

// packer packs a model's int8 layers for the integer kernels once.
type packer struct {
	once   sync.Once
	passes atomic.Int64
	// mu is held for reading by every pass and for writing while the
	// layers are packed (and their outlier columns found), so no pass
	// reads a layer being laid out or observed.
	mu sync.RWMutex
}

// packRows is the least batch worth packing the layers for on the first
// pass: packing (about 10 ms) costs about what the integer kernels save
// over a few dozen rows. A later pass packs whatever its size.
const packRows = 64

// packLayers lays the int8 layers out for the integer kernels, once: on
// the first forward pass of at least packRows rows, or on the second
// pass. A one-shot command that embeds one short query (or nothing) does
// not pay for it; a server or a batch of cards does at once. Without the
// integer kernels (no AVX2 or SDOT) nothing is packed.
func (m *Model) packLayers(rows int) {
	if m.pack == nil || !tensor.HavePacked {
		return // float weights, or no integer kernel to run them
	}
	if m.pack.passes.Add(1) == 1 && rows < packRows {
		return
	}
	m.packNow()
}

// Prepare packs the layers now if the integer kernels run here (a
// server that will embed queries, so its first query does not pay).
func (m *Model) Prepare() {
	if m.pack == nil || !tensor.HavePacked {
		return
	}
	m.packNow()
}

// packNow packs the layers, once.
func (m *Model) packNow() {
	m.pack.once.Do(func() {
		m.pack.mu.Lock()
		defer m.pack.mu.Unlock()
		// All the packed layers in one arena: huge pages where the OS
		// gives them (see tensor.Arena).
		n := 0
		for i := range m.Layers {
			l := &m.Layers[i]
			n += l.QKV.PackSize() + l.Out.PackSize() + l.FF1.PackSize() + l.FF2.PackSize()
		}
		a := tensor.NewArena(n)
		for i := range m.Layers {
			l := &m.Layers[i]
			l.QKV.PackIn(a)
			l.Out.PackIn(a)
			l.FF1.PackIn(a)
			l.FF2.PackIn(a)
		}
		if m.Layers[0].QKV.P8 != nil {
			m.findOutliers()
		}
	})
}

// calibration is the text whose activations pick each layer's outlier
// columns for the 8-bit kernel: BERT's layer norms put their largest
// values in the same few dimensions whatever the text (tensor's q8.go),
// so any few sentences of ordinary English, requests and tool
// descriptions do.
var calibration = []string{
	"The quick brown fox jumps over the lazy dog, and then it runs away into the forest.",
	"Send an email to my manager with the quarterly report attached.",
	"list_directory: List the files and folders inside a directory on the local file system.",
	"What is the weather going to be like in Paris tomorrow afternoon?",
}

// findOutliers runs the forward pass over [calibration] on the 8-bit
// kernel (its layers packed, with no outlier columns yet), observing the
// inputs of each layer's products, and sets the outlier columns of those
// whose input is a layer norm's or attention's (the feed-forward output's
// input, after GELU, is rounded well by its groups alone). The columns
// stand out so far (28 against a median of 1.7) that the pass's own
// rounding does not hide them.
func (m *Model) findOutliers() {
	seqs := make([][]int32, len(calibration))
	dst := make([][]float32, len(calibration))
	for i, t := range calibration {
		seqs[i] = Clip(m.Tok.Encode(t))
		dst[i] = make([]float32, Hidden)
	}
	var obs []*tensor.Linear
	for i := range m.Layers {
		l := &m.Layers[i]
		obs = append(obs, &l.QKV, &l.Out, &l.FF1)
	}
	for _, l := range obs {
		l.Observe(true)
	}
	m.forward(new(Scratch), seqs, dst)
	for _, l := range obs {
		l.Observe(false)
		l.Outliers(tensor.MaxOutliers)
	}
}

// Scratch holds the buffers of a forward pass, reused between calls. A
// Scratch is not safe for concurrent use.
type Scratch struct {
	x, qkv, ff, att []float32
	// attention's per-head buffers
	vt, scores []float32
	pooled     []float64
}

// Clip returns the model's input for the pieces of a text: [CLS], the
// first MaxTokens-2 pieces, [SEP].
func Clip(pieces []int32) []int32 {
	n := min(len(pieces), MaxTokens-2)
	ids := make([]int32, 0, n+2)
	ids = append(ids, idCLS)
	ids = append(ids, pieces[:n]...)
	return append(ids, idSEP)
}

// Forward embeds id sequences (from [Clip]) into dst, one Hidden vector a
// sequence: the mean of the last layer's rows, L2-normalized. Sequences
// are run as one batch: matrix products cover all rows of all sequences,
// attention stays within each sequence.
func (m *Model) Forward(s *Scratch, seqs [][]int32, dst [][]float32) {
	rows := 0
	for _, q := range seqs {
		rows += len(q)
	}
	m.packLayers(rows)
	if m.pack != nil {
		m.pack.mu.RLock()
		defer m.pack.mu.RUnlock()
	}
	m.forward(s, seqs, dst)
}

// forward is Forward as the layers are.
func (m *Model) forward(s *Scratch, seqs [][]int32, dst [][]float32) {
	rows := 0
	for _, q := range seqs {
		rows += len(q)
	}
	s.x = tensor.Grow(s.x, rows*Hidden)
	s.qkv = tensor.Grow(s.qkv, rows*3*Hidden)
	s.ff = tensor.Grow(s.ff, rows*FFNDim)
	s.att = tensor.Grow(s.att, rows*Hidden)

	// Word, position and type embeddings, summed and normalized.
	x := s.x
	var ebuf [Hidden]float32
	r := 0
	for _, q := range seqs {
		for pos, id := range q {
			row := x[r*Hidden : (r+1)*Hidden]
			e := m.Word.Row(ebuf[:], int(id), Hidden)
			tensor.Add3(row, e, m.Pos[pos*Hidden:(pos+1)*Hidden], m.Type)
			r++
		}
	}
	tensor.LayerNorm(x, x, rows, Hidden, m.EmbNScale, m.EmbNBias, lnEpsilon)

	for li := range m.Layers {
		l := &m.Layers[li]
		l.QKV.Apply(s.qkv, x, rows, false)
		s.attention(s.att, s.qkv, seqs)
		// The residual: the product adds itself to x (the layer's
		// input, which nothing reads again), normalized in place.
		l.Out.Apply(x, s.att, rows, true)
		tensor.LayerNorm(x, x, rows, Hidden, l.AttNScale, l.AttNBias, lnEpsilon)
		l.FF1.Apply(s.ff, x, rows, false)
		gelu(s.ff)
		l.FF2.Apply(x, s.ff, rows, true)
		tensor.LayerNorm(x, x, rows, Hidden, l.OutNScale, l.OutNBias, lnEpsilon)
	}

	// Mean over each sequence's rows, then L2 norm.
	if cap(s.pooled) < Hidden {
		s.pooled = make([]float64, Hidden)
	}
	p := s.pooled[:Hidden]
	r = 0
	for i, q := range seqs {
		v := dst[i][:Hidden]
		if len(q) == 0 {
			clear(v)
			continue
		}
		clear(p)
		for range q {
			tensor.AddF64(p, x[r*Hidden:(r+1)*Hidden])
			r++
		}
		var sum float64
		for _, y := range p {
			sum += y * y
		}
		inv := 1 / math.Sqrt(math.Max(sum, 1e-24))
		tensor.ScaleF64(v, p, inv)
	}
}

// attention computes multi-head scaled dot-product attention within each
// sequence; qkv holds rows of [q | k | v], each Hidden wide, heads side
// by side within each. tensor.Attend computes a head of a sequence in
// one call: its keys transposed once, so that a query is scored against
// eight keys at a time, its weights then mixing the values where they
// lie in qkv, straight into the head's columns of dst.
func (s *Scratch) attention(dst, qkv []float32, seqs [][]int32) {
	scale := float32(1 / math.Sqrt(headDim))
	const stride = 3 * Hidden
	base := 0
	for _, q := range seqs {
		t := len(q)
		if t == 0 {
			continue
		}
		tp := (t + 15) &^ 15
		s.vt = tensor.Grow(s.vt, headDim*tp)
		s.scores = tensor.Grow(s.scores, t*tp)
		rows := qkv[base*stride:]
		for h := range Heads {
			qo, ko, vo := h*headDim, Hidden+h*headDim, 2*Hidden+h*headDim
			tensor.Attend(dst[base*Hidden+h*headDim:], Hidden, rows[qo:], rows[ko:], rows[vo:], stride, t, scale, s.vt, s.scores)
		}
		base += t
	}
}

// gelu applies the exact (erf) GELU, x·Φ(x), in place: tensor.GELU, a
// rational approximation of erf, within 2.7e-7·|x| of x·Φ(x), 8 values at a time
// where the CPU can.
func gelu(x []float32) {
	tensor.GELU(x)
}
