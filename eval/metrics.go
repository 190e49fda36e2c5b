package eval

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
)

// AtK holds a metric at each cut-off k. It marshals to a JSON object
// keyed by k in numeric order: {"1":0.5,"3":0.75,"10":1}.
type AtK map[int]float64

// Keys returns the cut-offs in increasing order.
func (m AtK) Keys() []int {
	ks := make([]int, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// MarshalJSON writes the object with its keys in numeric order.
func (m AtK) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range m.Keys() {
		if i > 0 {
			b.WriteByte(',')
		}
		v, err := json.Marshal(m[k])
		if err != nil {
			return nil, fmt.Errorf("metric at %d: %w", k, err)
		}
		fmt.Fprintf(&b, "%q:%s", strconv.Itoa(k), v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads an object keyed by cut-offs.
func (m *AtK) UnmarshalJSON(data []byte) error {
	var raw map[string]float64
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	*m = make(AtK, len(raw))
	for ks, v := range raw {
		k, err := strconv.Atoi(ks)
		if err != nil {
			return fmt.Errorf("cut-off %q is not a number", ks)
		}
		(*m)[k] = v
	}
	return nil
}

// Score is how well one ranked list answers one query; every figure is
// in [0, 1].
type Score struct {
	// Top1 is 1 when the first name fills a gold slot.
	Top1 float64
	// RR is the reciprocal rank of the first name that fills a gold slot,
	// 0 when none in the list does.
	RR float64
	// Recall at k is the share of gold slots filled by the first k names.
	Recall AtK
	// NDCG at k uses binary gains: a name gains 1 when it fills a slot
	// not filled higher up, discounted by log2(rank+1); the ideal puts
	// min(k, slots) gains at the top ranks.
	NDCG AtK
	// Comp at k is 1 when the first k names fill every gold slot.
	Comp AtK
}

// ScoreRanking scores ranked, the names a ranker returned best first,
// against the gold slots (each a list of alternatives, any of which fills
// it) at each cut-off in ks. A name listed twice gains nothing the
// second time; one name may fill several slots that list it (recall and
// completeness count each slot, NDCG gains at most 1 per rank).
func ScoreRanking(slots [][]string, ranked []string, ks []int) Score {
	s := Score{Recall: AtK{}, NDCG: AtK{}, Comp: AtK{}}
	if len(slots) == 0 {
		return s
	}
	slotsOf := map[string][]int{}
	for i, alts := range slots {
		for _, a := range alts {
			if !slices.Contains(slotsOf[a], i) {
				slotsOf[a] = append(slotsOf[a], i)
			}
		}
	}
	filled := make([]bool, len(slots))
	// filledAt[r] is the number of slots filled by the first r names;
	// gain[r] is 1 when the name at rank r (from 1) fills a new slot.
	filledAt := make([]int, len(ranked)+1)
	gain := make([]float64, len(ranked)+1)
	n := 0
	for r, name := range ranked {
		hit := slotsOf[name]
		if len(hit) > 0 && s.RR == 0 {
			s.RR = 1 / float64(r+1)
		}
		for _, i := range hit {
			if !filled[i] {
				filled[i] = true
				n++
				gain[r+1] = 1
			}
		}
		filledAt[r+1] = n
	}
	if len(ranked) > 0 && len(slotsOf[ranked[0]]) > 0 {
		s.Top1 = 1
	}
	for _, k := range ks {
		upto := min(k, len(ranked))
		s.Recall[k] = float64(filledAt[upto]) / float64(len(slots))
		if filledAt[upto] == len(slots) {
			s.Comp[k] = 1
		} else {
			s.Comp[k] = 0
		}
		var dcg, ideal float64
		for r := 1; r <= upto; r++ {
			dcg += gain[r] / math.Log2(float64(r+1))
		}
		for r := 1; r <= min(k, len(slots)); r++ {
			ideal += 1 / math.Log2(float64(r+1))
		}
		s.NDCG[k] = dcg / ideal
	}
	return s
}
