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
	"github.com/capbroker/capbroker/encoder/internal/tensor"
)

//go:embed minilm.bin
var table []byte

// Model is the name vectors of the built-in encoder are cached under. It
// changes whenever the weights, the tokenizer or the forward pass change
// the vectors, so a cache never mixes them: on a CPU with AVX-512 VNNI
// or AVX-VNNI, or on arm64 with SDOT, the products round their inputs to
// 8 bits ("-a8": vectors within cosine 0.9995 of the others'; the AMX,
// AVX-512 VNNI and AVX-VNNI kernels give the same bits; tensor.HaveA8),
// elsewhere to int16 or not at all (the same vectors to within 1e-5).
var Model = modelName(tensor.HaveA8)

func modelName(a8 bool) string {
	if a8 {
		return "builtin:minilm-l6-v2-int8-a8-v4"
	}
	return "builtin:minilm-l6-v2-int8-v2"
}

// Dim is the length of every vector.
const Dim = bert.Hidden

// MaxTokens is how many WordPiece ids of a text the model reads, its
// [CLS] and [SEP] included; the rest is ignored.
const MaxTokens = bert.MaxTokens

// Options configures an [Encoder]. The zero value is ready to use.
type Options struct {
	// Workers bounds how many goroutines embed a batch of texts; zero
	// means GOMAXPROCS. A single text always runs on one.
	Workers int
}

// Encoder embeds texts with the built-in model. It is safe for concurrent
// use and implements dense.Embedder.
type Encoder struct {
	m       *bert.Model
	workers int
	pool    sync.Pool // *bert.Scratch
	batch   batcher   // see embedShared
}

var load = sync.OnceValues(func() (*bert.Model, error) {
	return bert.ReadTable(table)
})

// New returns an encoder. The weights (24 MB of int8 in the binary) are
// read on the first call, in a few milliseconds, and shared by every
// encoder: they stay where the binary holds them, int8, and only their
// scales and the tokenizer are built.
func New(opts *Options) (*Encoder, error) {
	m, err := load()
	if err != nil {
		return nil, fmt.Errorf("loading the built-in encoder: %w", err)
	}
	e := &Encoder{m: m}
	if opts != nil {
		e.workers = opts.Workers
	}
	e.pool.New = func() any { return new(bert.Scratch) }
	return e, nil
}

// Prepare lays the weights out for the integer kernels now (about 30 ms
// once a process, see the package doc) instead of on the second pass:
// for a server, whose first query should not pay for it. It does
// nothing where no integer kernel runs. dense.NewAuto calls it in the
// background for long-running processes.
func (e *Encoder) Prepare() { e.m.Prepare() }

// Model returns [Model].
func (e *Encoder) Model() string { return Model }

// Tokens returns the WordPiece ids of text, before clipping to the
// [MaxTokens] the model reads and without [CLS] and [SEP].
func (e *Encoder) Tokens(text string) []int32 { return e.m.Tok.Encode(text) }

// Piece returns the text of a WordPiece id.
func (e *Encoder) Piece(id int32) string { return e.m.Tok.Piece(id) }

// batchTokens is about how many pieces one forward pass covers: enough
// rows that each weight read serves many of them, few enough that the
// activations stay in cache.
const batchTokens = 256

// Embed returns one L2-normalized vector of [Dim] floats a text. A text
// with no pieces (empty or only spaces) gets the zero vector. Long
// batches are split across workers; ctx is checked between passes.
func (e *Encoder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return e.embed(ctx, texts, e.m.Tok.Encode)
}

// fillerWords are the words [Encoder.EmbedQueries] leaves out of a
// query: sentence punctuation, articles, pronouns and the politeness of
// a request ("could you please find the …"). A forward pass costs the
// same for every piece it reads, and these carry nothing a search for a
// tool needs. Characters that say what a value is (@ of an address, # of
// an issue, / of a path) and words that can be things (will, may, do)
// stay.
var fillerWords = []string{
	".", ",", "?", "!", ";", ":", "'", "\"", "(", ")",
	"a", "an", "the",
	"i", "me", "my", "we", "our", "you", "your", "it", "its", "this", "that", "these", "those",
	"please", "can", "could", "would", "should",
}

var fillers = func() map[string]bool {
	m := make(map[string]bool, len(fillerWords))
	for _, w := range fillerWords {
		m[w] = true
	}
	return m
}()

// EmbedQueries is [Encoder.Embed] for search queries: each text is read
// without its fillers (sentence punctuation . , ? ! ; : ' " ( ), a, an,
// the, I, me, my, we, our, you, your, it, its, this, that, these, those,
// please, can, could, would, should: whole words only), about a quarter
// of a typical task's pieces, so a query costs about three quarters of
// its Embed. Cards are embedded with Embed, whole; ranking by meaning is
// the same within 0.2 of NDCG@10 on every benchmark set (docs/speed.md).
// A text of fillers only is read whole.
func (e *Encoder) EmbedQueries(ctx context.Context, texts []string) ([][]float32, error) {
	return e.embed(ctx, texts, e.queryPieces)
}

func (e *Encoder) queryPieces(text string) []int32 { return e.m.Tok.EncodeSkipping(text, fillers) }

// embed embeds texts, split into pieces by tokenize.
func (e *Encoder) embed(ctx context.Context, texts []string, tokenize func(string) []int32) ([][]float32, error) {
	out := make([][]float32, len(texts))
	flat := make([]float32, len(texts)*Dim)
	seqs := make([][]int32, len(texts))
	for i, t := range texts {
		out[i] = flat[i*Dim : (i+1)*Dim : (i+1)*Dim]
		seqs[i] = bert.Clip(tokenize(t))
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
	if len(passes) == 1 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		e.embedShared(seqs, out, workers)
		return out, nil
	}
	workers = min(workers, len(passes))
	if workers <= 1 {
		s := e.pool.Get().(*bert.Scratch)
		defer e.pool.Put(s)
		for _, p := range passes {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			e.m.Forward(s, seqs[p.lo:p.hi], out[p.lo:p.hi])
		}
		return out, nil
	}
	next := make(chan pass)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := e.pool.Get().(*bert.Scratch)
			defer e.pool.Put(s)
			for p := range next {
				e.m.Forward(s, seqs[p.lo:p.hi], out[p.lo:p.hi])
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

// PiecesPerSecond is a conservative rate of one core on the AVX2
// integer kernel (the benchmarks measure about 2,700 on the 2-core test
// machine, 4,700 on its AVX-512 VNNI kernel), used by
// [Encoder.EstimateEmbed]; it assumes 1.4 times as many with VNNI, 2.2
// with AMX, 1.3 with AVX-VNNI (no AVX-512) and a tenth without an
// integer kernel (Go loops).
const PiecesPerSecond = 2500

// piecesPerSecond is PiecesPerSecond for this CPU's kernel.
func piecesPerSecond() float64 {
	switch {
	case tensor.HaveAMX:
		return 2.2 * PiecesPerSecond // 1.6 times VNNI's in BenchmarkColdEmbed1k
	case tensor.HaveVNNI:
		return 1.4 * PiecesPerSecond
	case tensor.HaveAVXVNNI:
		// BenchmarkTask on the test machine with AVX-512 off: 1.8 times
		// AVX2's rate (E-cores, and other CPUs, may do less).
		return 1.3 * PiecesPerSecond
	case tensor.HavePacked:
		return PiecesPerSecond // AVX2; arm64's SDOT, not measured on its hardware
	}
	return PiecesPerSecond / 10
}

// EstimateEmbed says about how long Embed(texts) takes on this encoder's
// workers, from the ids the model reads of each text (tokenizing is
// about a thousandth of the cost of embedding).
func (e *Encoder) EstimateEmbed(texts []string) time.Duration {
	n := 0
	for _, t := range texts {
		n += min(len(e.m.Tok.Encode(t))+2, MaxTokens)
	}
	workers := e.workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = max(1, min(workers, (len(texts)+1)/2))
	return time.Duration(float64(n) / (piecesPerSecond() * float64(workers)) * float64(time.Second))
}
