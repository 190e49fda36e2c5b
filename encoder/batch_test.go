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
