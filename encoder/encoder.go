package encoder

//go:generate go run ./internal/gen -dir .

import (
	"context"
	_ "embed"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/capbroker/capbroker/encoder/internal/bert"
	"github.com/capbroker/capbroker/encoder/internal/use"
)

//go:embed use_lite.bin
var useTable []byte

//go:embed minilm.bin
var miniLMTable []byte

// Names of the built-in models, for [Options.Model].
const (
	// MiniLM is all-MiniLM-L6-v2 (sentence-transformers), the default.
	MiniLM = "minilm"
	// USELite is Google's Universal Sentence Encoder lite.
	USELite = "use-lite"
)

// Model is the name the default model's vectors are cached under. It
// changes whenever the weights, the tokenizer or the forward pass change
// the vectors, so a cache never mixes them.
const Model = miniLMModel

const (
	miniLMModel = "builtin:minilm-l6-v2-int8-v1"
	useModel    = "builtin:use-lite-int8-v1"
)

// Dim is the length of the default model's vectors.
const Dim = bert.Hidden

// MaxTokens is how many pieces of a text the default model reads; the
// rest is ignored.
const MaxTokens = bert.MaxTokens

// Options configures an [Encoder]. The zero value is ready to use.
type Options struct {
	// Model names the built-in model: [MiniLM] (the default when empty)
	// or [USELite].
	Model string
	// Workers bounds how many goroutines embed a batch of texts; zero
	// means GOMAXPROCS. A single text always runs on one.
	Workers int
}

// network is what the encoder needs of a model: its input for a text,
// a forward pass over a batch, and the buffers that pass reuses.
type network interface {
	pieces(text string) []int32
	// input returns what the model reads of a text's pieces.
	input(pieces []int32) []int32
	piece(id int32) string
	newScratch() any
	forward(scratch any, seqs [][]int32, dst [][]float32)
	dim() int
	name() string
	// piecesPerSecond is a conservative rate of one core.
	piecesPerSecond() float64
}

type miniLM struct{ m *bert.Model }

func (n miniLM) pieces(text string) []int32 { return n.m.Tok.Encode(text) }
func (miniLM) input(pieces []int32) []int32 { return bert.Clip(pieces) }
func (n miniLM) piece(id int32) string      { return n.m.Tok.Piece(id) }
func (n miniLM) newScratch() any            { return new(bert.Scratch) }
func (n miniLM) forward(s any, seqs [][]int32, dst [][]float32) {
	n.m.Forward(s.(*bert.Scratch), seqs, dst)
}
func (miniLM) dim() int                 { return bert.Hidden }
func (miniLM) name() string             { return miniLMModel }
func (miniLM) piecesPerSecond() float64 { return 1500 }

type useLite struct{ m *use.Model }

func (n useLite) pieces(text string) []int32 { return n.m.Tok.Encode(text) }
func (useLite) input(pieces []int32) []int32 { return use.Clip(pieces) }
func (n useLite) piece(id int32) string      { return n.m.Tok.Piece(id) }
func (n useLite) newScratch() any            { return new(use.Scratch) }
func (n useLite) forward(s any, seqs [][]int32, dst [][]float32) {
	n.m.Forward(s.(*use.Scratch), seqs, dst)
}
func (useLite) dim() int                 { return use.OutDim }
func (useLite) name() string             { return useModel }
func (useLite) piecesPerSecond() float64 { return 3000 }

var (
	loadMiniLM = sync.OnceValues(func() (network, error) {
		m, err := bert.ReadTable(miniLMTable)
		return miniLM{m}, err
	})
	loadUSE = sync.OnceValues(func() (network, error) {
		m, err := use.ReadTable(useTable)
		return useLite{m}, err
	})
)

// Encoder embeds texts with a built-in model. It is safe for concurrent
// use and implements dense.Embedder.
type Encoder struct {
	net     network
	workers int
	pool    sync.Pool // the network's scratch
}

// New returns an encoder. A model's weights are read on the first call
// that asks for it, in a few milliseconds, and shared by every encoder:
// they stay where the binary holds them, int8, and only their scales and
// the tokenizer are built.
func New(opts *Options) (*Encoder, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	var load func() (network, error)
	switch o.Model {
	case "", MiniLM:
		load = loadMiniLM
	case USELite:
		load = loadUSE
	default:
		return nil, fmt.Errorf("built-in encoder %q: want %s or %s", o.Model, MiniLM, USELite)
	}
	n, err := load()
	if err != nil {
		return nil, fmt.Errorf("loading the built-in encoder: %w", err)
	}
	e := &Encoder{net: n, workers: o.Workers}
	e.pool.New = n.newScratch
	return e, nil
}

// Model returns the name the encoder's vectors are cached under.
func (e *Encoder) Model() string { return e.net.name() }

// Dim returns the length of the encoder's vectors.
func (e *Encoder) Dim() int { return e.net.dim() }

// Tokens returns the piece ids of text, before clipping to the length the
// model reads ([MaxTokens] for the default model, [CLS] and [SEP]
// included).
func (e *Encoder) Tokens(text string) []int32 { return e.net.pieces(text) }

// Piece returns the text of a piece id.
func (e *Encoder) Piece(id int32) string { return e.net.piece(id) }

// batchTokens is about how many pieces one forward pass covers: enough
// rows that each weight read serves many of them, few enough that the
// activations stay in cache.
const batchTokens = 256

// Embed returns one L2-normalized vector of [Dim] floats a text. A text
// with no pieces (empty or only spaces) gets the zero vector. Long
// batches are split across workers; ctx is checked between passes.
func (e *Encoder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	dim := e.net.dim()
	out := make([][]float32, len(texts))
	flat := make([]float32, len(texts)*dim)
	seqs := make([][]int32, len(texts))
	for i, t := range texts {
		out[i] = flat[i*dim : (i+1)*dim : (i+1)*dim]
		seqs[i] = e.net.input(e.net.pieces(t))
	}
	// Cut into passes of about batchTokens pieces.
	type pass struct{ lo, hi int }
	var passes []pass
	for lo := 0; lo < len(seqs); {
		hi, n := lo, 0
		for hi < len(seqs) && (hi == lo || n+len(seqs[hi]) <= batchTokens) {
			n += len(seqs[hi])
			hi++
		}
		passes = append(passes, pass{lo, hi})
		lo = hi
	}
	workers := e.workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, len(passes))
	if workers <= 1 {
		s := e.pool.Get()
		defer e.pool.Put(s)
		for _, p := range passes {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			e.net.forward(s, seqs[p.lo:p.hi], out[p.lo:p.hi])
		}
		return out, nil
	}
	next := make(chan pass)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := e.pool.Get()
			defer e.pool.Put(s)
			for p := range next {
				e.net.forward(s, seqs[p.lo:p.hi], out[p.lo:p.hi])
			}
		}()
	}
	var err error
	for _, p := range passes {
		if err = ctx.Err(); err != nil {
			break
		}
		next <- p
	}
	close(next)
	wg.Wait()
	if err != nil {
		return nil, err
	}
	return out, nil
}

// EstimateEmbed says about how long Embed(texts) takes on this encoder's
// workers, from the texts' piece counts and a conservative rate of one
// core (tokenizing is about a thousandth of the cost of embedding).
func (e *Encoder) EstimateEmbed(texts []string) time.Duration {
	n := 0
	for _, t := range texts {
		n += len(e.net.input(e.net.pieces(t)))
	}
	workers := e.workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = max(1, min(workers, (len(texts)+1)/2))
	return time.Duration(float64(n) / (e.net.piecesPerSecond() * float64(workers)) * float64(time.Second))
}
