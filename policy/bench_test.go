package policy_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/internal/synth"
	"github.com/capbroker/capbroker/policy"
	"github.com/capbroker/capbroker/rank"
)

// BenchmarkSelect measures one selection on synthetic catalogs of 1k, 10k
// and 100k cards (index built beforehand; full-catalog tokens counted once
// beforehand, as a running broker has). Run on one core with -cpu 1.
func BenchmarkSelect(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprintf("cards=%d", n), func(b *testing.B) {
			benchSelect(b, n, synth.Tasks(256, 2), nil)
		})
	}
}

// BenchmarkSelectSteps runs the selection of one ranking (SingleStep, as
// select was before aspects) and the aspect-aware one side by side, on
// one-step tasks and on two-step tasks ("A, then B": three rankings).
func BenchmarkSelectSteps(b *testing.B) {
	one := synth.Tasks(256, 2)
	two := make([]string, len(one))
	for i := range one {
		two[i] = one[i] + ", then " + one[(i+1)%len(one)]
	}
	for _, n := range []int{1_000, 10_000} {
		for _, tasks := range []struct {
			name  string
			tasks []string
		}{{"one-step", one}, {"two-step", two}} {
			for _, single := range []bool{true, false} {
				mode := "aspects"
				if single {
					mode = "single"
				}
				b.Run(fmt.Sprintf("cards=%d/%s/%s", n, tasks.name, mode), func(b *testing.B) {
					benchSelect(b, n, tasks.tasks, &policy.Options{SingleStep: single})
				})
			}
		}
	}
}

func benchSelect(b *testing.B, n int, tasks []string, o *policy.Options) {
	cat, _ := card.NewCatalog(synth.Cards(n, 1))
	s, err := policy.NewSelector(cat, rank.New(cat.Cards(), nil), nil)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	s.Select(ctx, tasks[0], o)
	b.ReportAllocs()
	lat := make([]time.Duration, 0, b.N)
	i := 0
	for b.Loop() {
		t0 := time.Now()
		s.Select(ctx, tasks[i%len(tasks)], o)
		lat = append(lat, time.Since(t0))
		i++
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}
