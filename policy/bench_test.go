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
			cat, _ := card.NewCatalog(synth.Cards(n, 1))
			s, err := policy.NewSelector(cat, rank.New(cat.Cards(), nil), nil)
			if err != nil {
				b.Fatal(err)
			}
			tasks := synth.Tasks(256, 2)
			ctx := context.Background()
			s.Select(ctx, tasks[0], nil)
			b.ReportAllocs()
			lat := make([]time.Duration, 0, b.N)
			i := 0
			for b.Loop() {
				t0 := time.Now()
				s.Select(ctx, tasks[i%len(tasks)], nil)
				lat = append(lat, time.Since(t0))
				i++
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
		})
	}
}
