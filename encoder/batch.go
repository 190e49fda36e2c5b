package encoder

import (
	"sync"

	"github.com/capbroker/capbroker/encoder/internal/bert"
)

// Concurrent short embeddings (a server's queries) share forward passes.
// A pass reads every weight of the model once whatever its rows (10.6 MB:
// for a query of twenty pieces that read costs as much as its products),
// so queries that arrive while passes are running wait and go together
// into the next one: each pass is led by one of its callers, which runs
// its own texts with those queued before it (up to batchTokens pieces)
// and then hands the queue on to the first still waiting. A query that
// finds a pass free (fewer than the encoder's workers running) runs at
// once, alone: batching adds no wait to a quiet encoder. Rows do not
// mix within a pass (attention stays within each text, every product
// rounds each row on its own), so a text gets the same vector in a shared
// pass as alone.

// job is one Embed call's single pass.
type job struct {
	seqs [][]int32
	out  [][]float32
	// lead receives true once the job is done by another's pass, false
	// when this caller is to lead the next pass.
	lead chan bool
	// failed is what the pass that had the job panicked with, if it did.
	failed any
}

// batcher queues the jobs waiting for a pass.
type batcher struct {
	mu      sync.Mutex
	running int // passes being led
	queue   []*job
	joined  int // jobs done in another caller's pass (for tests)
}

// embedShared embeds one pass's texts (seqs, into out), sharing a
// forward pass with concurrent callers (see above).
func (e *Encoder) embedShared(seqs [][]int32, out [][]float32, workers int) {
	j := &job{seqs: seqs, out: out}
	b := &e.batch
	b.mu.Lock()
	if b.running < workers {
		b.running++
		b.mu.Unlock()
		e.lead(j)
		return
	}
	j.lead = make(chan bool, 1)
	b.queue = append(b.queue, j)
	b.mu.Unlock()
	if done := <-j.lead; done {
		if j.failed != nil {
			panic(j.failed)
		}
		return
	}
	e.lead(j)
}

// lead runs one pass of j's texts and those queued (up to batchTokens
// pieces in all), then passes the lead on to the first job still queued,
// or ends its pass.
func (e *Encoder) lead(j *job) {
	b := &e.batch
	jobs := []*job{j}
	n := pieces(j.seqs)
	b.mu.Lock()
	k := 0
	for k < len(b.queue) && n+pieces(b.queue[k].seqs) <= batchTokens {
		n += pieces(b.queue[k].seqs)
		jobs = append(jobs, b.queue[k])
		k++
	}
	b.queue = b.queue[k:]
	b.joined += k
	b.mu.Unlock()

	seqs, out := j.seqs, j.out
	if len(jobs) > 1 {
		seqs, out = nil, nil
		for _, o := range jobs {
			seqs = append(seqs, o.seqs...)
			out = append(out, o.out...)
		}
	}
	// However the pass ends, the jobs it took are answered and the lead
	// moves on; a panic reaches every caller whose texts were in the pass.
	defer func() {
		r := recover()
		for _, o := range jobs[1:] {
			o.failed = r
			o.lead <- true
		}
		e.handOn()
		if r != nil {
			panic(r)
		}
	}()
	s := e.pool.Get().(*bert.Scratch)
	e.m.Forward(s, seqs, out)
	e.pool.Put(s)
}

// handOn passes the lead to the first job queued, or ends a pass.
func (e *Encoder) handOn() {
	b := &e.batch
	b.mu.Lock()
	var next *job
	if len(b.queue) > 0 {
		next = b.queue[0]
		b.queue = b.queue[1:]
	} else {
		b.running--
	}
	b.mu.Unlock()
	if next != nil {
		next.lead <- false
	}
}

// pieces counts the rows of a pass.
func pieces(seqs [][]int32) int {
	n := 0
	for _, q := range seqs {
		n += len(q)
	}
	return n
}
