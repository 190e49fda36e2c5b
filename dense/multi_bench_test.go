//go:build unix

package dense_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/dense"
	"github.com/capbroker/capbroker/encoder"
	"github.com/capbroker/capbroker/internal/synth"
	"github.com/capbroker/capbroker/internal/testenv"
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
	rng := rand.New(rand.NewPCG(3, 4))
	ce := &cachedEmbedder{enc: enc, cards: map[string][]float32{}}
	for i := range cards {
		v := make([]float32, encoder.Dim)
		for j := range v {
			v[j] = float32(rng.NormFloat64())
		}
		ce.cards[dense.Text(&cards[i])] = v
	}
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
			s.Select(ctx, two[0], nil)
			lat := make([]time.Duration, 0, b.N)
			i := 0
			cpu0 := testenv.CPUTime()
			for b.Loop() {
				t0 := time.Now()
				s.Select(ctx, two[i%len(two)], nil)
				lat = append(lat, time.Since(t0))
				i++
			}
			cpu := (testenv.CPUTime() - cpu0).Seconds() / float64(len(lat))
			sort.Slice(lat, func(x, y int) bool { return lat[x] < lat[y] })
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(cpu*1000, "cpu-ms/op")
		})
	}
}
