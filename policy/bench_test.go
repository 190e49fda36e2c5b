package policy_test

import (
	"context"
	"fmt"
	"testing"

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
			i := 0
			for b.Loop() {
				s.Select(ctx, tasks[i%len(tasks)], nil)
				i++
			}
		})
	}
}
