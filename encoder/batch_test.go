package encoder

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
)

// TestSharedPasses embeds texts from many goroutines at once: each gets
// the very vector (bit for bit) it gets alone, and some were done in
// another caller's pass.
func TestSharedPasses(t *testing.T) {
	e, err := New(&Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// The first pass of many rows packs the layers (see bert's packLayers).
	if _, err := e.Embed(ctx, []string{strings.Repeat("read the file and write it back ", 10)}); err != nil {
		t.Fatal(err)
	}
	texts := make([][]string, 48)
	want := make([][][]float32, len(texts))
	for i := range texts {
		texts[i] = []string{fmt.Sprintf("read the file number %d and post a summary of it to the channel", i)}
		if i%3 == 0 { // some calls carry two texts
			texts[i] = append(texts[i], fmt.Sprintf("then open ticket %d", i))
		}
		if want[i], err = e.Embed(ctx, texts[i]); err != nil {
			t.Fatal(err)
		}
	}
	for round := 0; round < 20; round++ {
		got := make([][][]float32, len(texts))
		var wg sync.WaitGroup
		for i := range texts {
			wg.Go(func() {
				v, err := e.Embed(ctx, texts[i])
				if err != nil {
					t.Error(err)
				}
				got[i] = v
			})
		}
		wg.Wait()
		for i := range texts {
			for k := range want[i] {
				for d := range want[i][k] {
					if math.Float32bits(got[i][k][d]) != math.Float32bits(want[i][k][d]) {
						t.Fatalf("round %d: text %d.%d: coordinate %d is %v shared, %v alone", round, i, k, d, got[i][k][d], want[i][k][d])
					}
				}
			}
		}
		e.batch.mu.Lock()
		joined, running, queued := e.batch.joined, e.batch.running, len(e.batch.queue)
		e.batch.mu.Unlock()
		if running != 0 || queued != 0 {
			t.Fatalf("after the calls: %d passes running, %d jobs queued", running, queued)
		}
		if joined > 0 {
			t.Logf("round %d: %d of %d calls shared another's pass", round, joined, (round+1)*len(texts))
			return
		}
	}
	t.Error("no call shared another's pass in 20 rounds of 48 concurrent calls")
}

// TestSharedPassPanics: a pass that panics answers every caller whose
// texts it took with the panic (policy turns a ranker's panic into an
// error), and the encoder goes on embedding.
func TestSharedPassPanics(t *testing.T) {
	e, err := New(&Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	b := &e.batch
	b.mu.Lock()
	b.running = 1 // this test leads the pass
	b.mu.Unlock()
	caught := make(chan any)
	go func() {
		defer func() { caught <- recover() }()
		e.Embed(ctx, []string{"read the file"})
	}()
	for queued := 0; queued == 0; {
		b.mu.Lock()
		queued = len(b.queue)
		b.mu.Unlock()
	}
	bad := &job{seqs: [][]int32{{101, 1 << 30, 102}}, out: [][]float32{make([]float32, Dim)}}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("the pass over an id past the vocabulary did not panic")
			}
		}()
		e.lead(bad)
	}()
	if r := <-caught; r == nil {
		t.Error("the caller queued behind the pass did not get its panic")
	}
	b.mu.Lock()
	running, queued := b.running, len(b.queue)
	b.mu.Unlock()
	if running != 0 || queued != 0 {
		t.Fatalf("after the panic: %d passes running, %d queued", running, queued)
	}
	if v, err := e.Embed(ctx, []string{"read the file"}); err != nil || len(v) != 1 || v[0][0] == 0 {
		t.Fatalf("embedding after the panic: %v, %v", v, err)
	}
}
