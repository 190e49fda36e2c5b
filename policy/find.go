package policy

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/rank"
)

// Capability is one result of [Selector.Find]: everything a model needs
// to call what it found.
type Capability struct {
	Name        string          `json:"name"`
	Kind        card.Kind       `json:"kind"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
	Risk        card.Risk       `json:"risk"`
	Score       float64         `json:"score"`
	Confidence  string          `json:"confidence"`
	Reason      string          `json:"reason"`
	Matches     []rank.Match    `json:"matches,omitempty"`
}

// FindResult answers a find_capability call.
type FindResult struct {
	Query   string       `json:"query"`
	Matches []Capability `json:"matches"`
	// Reason explains the result, and says so plainly when nothing matched.
	Reason string `json:"reason"`
	// Degraded and Failure report a ranking failure (Matches is empty then).
	Degraded bool   `json:"degraded,omitempty"`
	Failure  string `json:"failure,omitempty"`
}

// Names returns the names found, in order.
func (r *FindResult) Names() []string {
	names := make([]string, len(r.Matches))
	for i, m := range r.Matches {
		names[i] = m.Name
	}
	return names
}

// Find returns up to k capabilities for query (k <= 0: DefaultFindK), with
// their schemas, using the same ranking and the same relevance threshold as
// [Selector.Select]. Floors do not apply. opts may be nil.
func (s *Selector) Find(ctx context.Context, query string, k int, opts *Options) *FindResult {
	o := opts.resolved()
	if k <= 0 {
		k = DefaultFindK
	}
	res := &FindResult{Query: query, Matches: []Capability{}}
	hits, err := s.rankSafely(ctx, rank.ClipQuery(query), 2*k)
	if err != nil {
		res.Degraded, res.Failure = true, err.Error()
		res.Reason = "search failed: " + err.Error()
		return res
	}
	var top float64
	if len(hits) > 0 {
		top = hits[0].Score
	}
	for _, h := range hits {
		if len(res.Matches) == k {
			break
		}
		c, ok := s.cat.Lookup(h.Name)
		if !ok || s.reject(c, &h, top, &o) != "" {
			continue
		}
		res.Matches = append(res.Matches, Capability{
			Name: c.Name, Kind: c.Kind, Description: c.Description, InputSchema: c.InputSchema, Risk: c.Risk,
			Score: h.Score, Confidence: confidence(h, top), Matches: h.Matches,
			Reason: hitReason(h),
		})
	}
	if len(res.Matches) == 0 {
		res.Reason = fmt.Sprintf("no capability matches %q; try other words for what the tool does", query)
	} else {
		res.Reason = fmt.Sprintf("%d found (best: %s, %s)", len(res.Matches), res.Matches[0].Name, res.Matches[0].Confidence)
	}
	return res
}
