package encoder

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/capbroker/capbroker/internal/testenv"
)

// task20 is a task of 20 sentence pieces.
const task20 = "find the open pull requests on the payments repository and summarize what each one changes"

func BenchmarkTask(b *testing.B) {
	e, err := New(&Options{Workers: 1})
	if err != nil {
		b.Fatal(err)
	}
	n := len(e.Tokens(task20))
	ctx := context.Background()
	b.ReportAllocs()
	cpu0 := testenv.CPUTime()
	for b.Loop() {
		if _, err := e.Embed(ctx, []string{task20}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n), "tokens")
	b.ReportMetric(float64(testenv.CPUTime()-cpu0)/1e6/float64(b.N), "cpu-ms/op")
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
