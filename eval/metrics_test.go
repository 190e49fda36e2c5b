package eval

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// Discounts used in the worked examples: a gain at rank r is divided by
// log2(r+1).
//
//	rank 1: 1/log2(2) = 1
//	rank 2: 1/log2(3) = 0.63093
//	rank 3: 1/log2(4) = 0.5
var (
	d2 = 1 / math.Log2(3)
	d3 = 0.5
)

func TestScoreRanking(t *testing.T) {
	tests := []struct {
		name   string
		slots  [][]string
		ranked []string
		ks     []int
		want   Score
	}{
		{
			// One slot, filled at rank 2.
			// top1 0; rr 1/2; recall@1 0, @3 1; comp the same;
			// ndcg@1 = 0; ndcg@3 = d2 / ideal(min(3,1)=1 gain) = d2/1.
			name:   "single gold at rank 2",
			slots:  [][]string{{"a"}},
			ranked: []string{"b", "a", "c"},
			ks:     []int{1, 3},
			want: Score{Top1: 0, RR: 0.5,
				Recall: AtK{1: 0, 3: 1}, NDCG: AtK{1: 0, 3: d2}, Comp: AtK{1: 0, 3: 1}},
		},
		{
			// Two slots, filled at ranks 1 and 3.
			// recall: @1 1/2, @2 1/2, @3 2/2; comp only @3.
			// ndcg@1 = 1/1; ndcg@2 = 1/(1+d2) = 0.6131;
			// ndcg@3 = (1+d3)/(1+d2) = 1.5/1.63093 = 0.9197.
			name:   "two slots, ranks 1 and 3",
			slots:  [][]string{{"a"}, {"b"}},
			ranked: []string{"a", "x", "b"},
			ks:     []int{1, 2, 3},
			want: Score{Top1: 1, RR: 1,
				Recall: AtK{1: 0.5, 2: 0.5, 3: 1},
				NDCG:   AtK{1: 1, 2: 1 / (1 + d2), 3: (1 + d3) / (1 + d2)},
				Comp:   AtK{1: 0, 2: 0, 3: 1}},
		},
		{
			// Gold groups: a2 fills slot 1 at rank 1; a (same slot) gains
			// nothing at rank 2; b fills slot 2 at rank 3.
			// ndcg@3 = (1 + 0 + d3)/(1 + d2) = 0.9197; recall@2 = 1/2.
			name:   "alternatives fill one slot once",
			slots:  [][]string{{"a", "a2"}, {"b"}},
			ranked: []string{"a2", "a", "b"},
			ks:     []int{2, 3},
			want: Score{Top1: 1, RR: 1,
				Recall: AtK{2: 0.5, 3: 1}, NDCG: AtK{2: 1 / (1 + d2), 3: (1 + d3) / (1 + d2)},
				Comp: AtK{2: 0, 3: 1}},
		},
		{
			// A duplicate gains nothing: a at rank 2 fills slot 1, a again
			// at rank 3 adds nothing; b never appears.
			// rr 1/2; recall@3 1/2; ndcg@3 = d2/(1+d2) = 0.3869.
			name:   "duplicate pick",
			slots:  [][]string{{"a"}, {"b"}},
			ranked: []string{"x", "a", "a"},
			ks:     []int{3},
			want: Score{Top1: 0, RR: 0.5,
				Recall: AtK{3: 0.5}, NDCG: AtK{3: d2 / (1 + d2)}, Comp: AtK{3: 0}},
		},
		{
			// A name listed in two slots fills both at once: recall and
			// completeness count slots, NDCG gains 1 per rank, so
			// ndcg@2 = 1/(1+d2) although both slots are filled.
			name:   "one name fills two slots",
			slots:  [][]string{{"a"}, {"a", "c"}},
			ranked: []string{"a"},
			ks:     []int{1, 2},
			want: Score{Top1: 1, RR: 1,
				Recall: AtK{1: 1, 2: 1}, NDCG: AtK{1: 1, 2: 1 / (1 + d2)}, Comp: AtK{1: 1, 2: 1}},
		},
		{
			// k beyond the list: the list is all there is; the ideal has
			// min(10, 1) = 1 gain.
			name:   "k larger than the list",
			slots:  [][]string{{"a"}},
			ranked: []string{"a"},
			ks:     []int{10},
			want:   Score{Top1: 1, RR: 1, Recall: AtK{10: 1}, NDCG: AtK{10: 1}, Comp: AtK{10: 1}},
		},
		{
			// Three slots, k=2: the ideal holds min(2,3) = 2 gains, so a
			// ranking that fills two slots at ranks 1-2 scores ndcg 1 but
			// recall 2/3 and comp 0.
			name:   "more slots than k",
			slots:  [][]string{{"a"}, {"b"}, {"c"}},
			ranked: []string{"b", "a", "c"},
			ks:     []int{2, 3},
			want: Score{Top1: 1, RR: 1,
				Recall: AtK{2: 2.0 / 3, 3: 1}, NDCG: AtK{2: 1, 3: 1}, Comp: AtK{2: 0, 3: 1}},
		},
		{
			name:   "nothing ranked",
			slots:  [][]string{{"a"}},
			ranked: nil,
			ks:     []int{1, 5},
			want:   Score{Recall: AtK{1: 0, 5: 0}, NDCG: AtK{1: 0, 5: 0}, Comp: AtK{1: 0, 5: 0}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ScoreRanking(tt.slots, tt.ranked, tt.ks)
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestWorkedNumbers pins the decimal values quoted in the comments above.
func TestWorkedNumbers(t *testing.T) {
	for _, c := range []struct {
		got, want float64
	}{
		{d2, 0.63093},
		{1 / (1 + d2), 0.61315},
		{(1 + d3) / (1 + d2), 0.91972},
		{d2 / (1 + d2), 0.38685},
	} {
		if math.Abs(c.got-c.want) > 1e-5 {
			t.Errorf("got %.5f, want %.5f", c.got, c.want)
		}
	}
}

func TestAtKJSON(t *testing.T) {
	m := AtK{10: 0.25, 1: 1, 3: 0.5}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), `{"1":1,"3":0.5,"10":0.25}`; got != want {
		t.Errorf("marshal = %s, want %s", got, want)
	}
	var back AtK
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(m, back); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	if err := json.Unmarshal([]byte(`{"x":1}`), &back); err == nil {
		t.Error("unmarshal of a non-numeric key: no error")
	}
}
