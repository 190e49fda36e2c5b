//go:build unix

package dense_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/dense"
	"github.com/capbroker/capbroker/encoder"
	"github.com/capbroker/capbroker/internal/synth"
	"github.com/capbroker/capbroker/policy"
	"github.com/capbroker/capbroker/rank"
)

// oneByOne hides a ranker's RankBatch, so policy ranks each step alone.
type oneByOne struct{ r policy.Ranker }

func (o oneByOne) Rank(ctx context.Context, q string, k int) ([]rank.Hit, error) {
	return o.r.Rank(ctx, q, k)
}

// BenchmarkSelectSteps runs the hybrid select of two-step tasks ("A,
// then B": the task and its two steps are ranked) with the steps'
// queries embedded one call each and in one batch, side by side, over
// 1k cards whose vectors are cached, the encoder on one worker. Reports
// the p50 wall time and the CPU time of a select.
func BenchmarkSelectSteps(b *testing.B) {
	enc, err := encoder.New(&encoder.Options{Workers: 1})
	if err != nil {
		b.Fatal(err)
	}
	one := synth.Tasks(64, 2)
	two := make([]string, len(one))
	for i := range one {
		two[i] = one[i] + ", then " + one[(i+1)%len(one)]
	}
	cat, _ := card.NewCatalog(synth.Cards(1000, 1))
	cards := cat.Cards()
	ce := newCachedEmbedder(enc, cards)
	ctx := context.Background()
	a := dense.NewAuto(ctx, rank.New(cards, nil), cards, ce, nil)
	if !a.Ready() {
		b.Fatalf("not ready: %s", a.Why())
	}
	for _, mode := range []string{"per-step", "batch"} {
		b.Run(fmt.Sprintf("cards=1000/two-step/%s", mode), func(b *testing.B) {
			var r policy.Ranker = a
			if mode == "per-step" {
				r = oneByOne{a}
			}
			s, err := policy.NewSelector(cat, r, nil)
			if err != nil {
				b.Fatal(err)
			}
			timeSelects(b, two, func(task string) { s.Select(ctx, task, nil) })
		})
	}
}
