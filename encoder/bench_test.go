package encoder

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/capbroker/capbroker/encoder/internal/tensor"

	"github.com/capbroker/capbroker/internal/testenv"
)

// task20 is a task of 20 sentence pieces.
const task20 = "find the open pull requests on the payments repository and summarize what each one changes"

// kernels are the matrix kernels this CPU runs, best first, each with
// a function that turns it on (see internal/tensor).
func kernels() []struct {
	name string
	on   func()
} {
	type k = struct {
		name string
		on   func()
	}
	var ks []k
	if tensor.HaveVNNI {
		ks = append(ks, k{"vnni", func() { tensor.UseVNNI, tensor.UseAVX2 = true, true }})
	}
	if tensor.HaveAVX2 {
		ks = append(ks, k{"avx2", func() { tensor.UseVNNI, tensor.UseAVX2 = false, true }})
	}
	return append(ks, k{"go", func() { tensor.UseVNNI, tensor.UseAVX2 = false, false }})
}

// BenchmarkTask embeds a task of 17 pieces on one worker, with each
// matrix kernel this CPU runs (kernel=vnni: AVX-512 VNNI, avx2, go: the
// portable loops).
func BenchmarkTask(b *testing.B) {
	e, err := New(&Options{Workers: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { tensor.UseVNNI, tensor.UseAVX2 = tensor.HaveVNNI, tensor.HaveAVX2 }()
	n := len(e.Tokens(task20))
	ctx := context.Background()
	for _, k := range kernels() {
		b.Run("kernel="+k.name, func(b *testing.B) {
			k.on()
			b.ReportAllocs()
			cpu0 := testenv.CPUTime()
			for b.Loop() {
				if _, err := e.Embed(ctx, []string{task20}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n), "tokens")
			b.ReportMetric(float64(testenv.CPUTime()-cpu0)/1e6/float64(b.N), "cpu-ms/op")
		})
	}
}

// BenchmarkCards embeds 64 card texts a run; tokens/s is the throughput.
func BenchmarkCards(b *testing.B) {
	texts := make([]string, 64)
	for i := range texts {
		texts[i] = fmt.Sprintf("tool %d: %s Parameters: path, content, mode.", i,
			strings.Repeat("Reads or writes a file in the workspace and reports what changed. ", 1+i%3))
	}
	for _, w := range []int{1, 2} {
		b.Run(fmt.Sprintf("workers=%d", w), func(b *testing.B) {
			e, err := New(&Options{Workers: w})
			if err != nil {
				b.Fatal(err)
			}
			tokens := 0
			for _, t := range texts {
				tokens += min(len(e.Tokens(t)), MaxTokens)
			}
			ctx := context.Background()
			b.ReportAllocs()
			cpu0 := testenv.CPUTime()
			for b.Loop() {
				if _, err := e.Embed(ctx, texts); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(tokens*b.N)/b.Elapsed().Seconds(), "tokens/s")
			b.ReportMetric(float64(tokens*b.N)/(testenv.CPUTime()-cpu0).Seconds(), "tokens/cpu-s")
		})
	}
}
