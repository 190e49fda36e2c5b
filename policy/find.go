package policy

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

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
// their schemas. It is the escape hatch, whose job is recovery, so no
// relevance threshold hides a hit: whenever the ranker has any hit that
// policy allows, Find returns it, labelled with an honest confidence
// (a hit below [Selector.Select]'s thresholds is "low"); it is empty only
// when nothing shares a word or a meaning with the query. A query of
// several steps gets the best hit of each step first, then the rest by
// score. Floors do not apply. opts may be nil.
func (s *Selector) Find(ctx context.Context, query string, k int, opts *Options) *FindResult {
	o := opts.resolved()
	if k <= 0 {
		k = DefaultFindK
	}
	res := &FindResult{Query: query, Matches: []Capability{}}
	query = rank.ClipQuery(query)
	var aspects []Aspect
	if !o.SingleStep {
		aspects = Aspects(query)
	}
	units, err := s.rankUnits(ctx, query, aspects, 2*k, o.AspectK)
	if err != nil {
		res.Degraded, res.Failure = true, err.Error()
		res.Reason = "search failed: " + err.Error()
		return res
	}
	var ignored []Rejection
	cands := s.judge(units, &o, &ignored)
	if !slices.ContainsFunc(cands, func(c *candidate) bool { return !noMatch(c.hit) }) {
		// Nothing shares a word with the query and no card's meaning
		// stands out: what a dense ranker ranks first is noise.
		cands = nil
	}
	var order []*candidate
	// The best allowed hit of each step first.
	for u := 1; u < len(units); u++ {
		for _, h := range units[u].hits {
			c := findCand(cands, s.hitIndex(&h))
			if c == nil || c.picked || held(c) {
				continue
			}
			c.picked = true
			order = append(order, c)
			break
		}
	}
	rest := make([]*candidate, 0, len(cands))
	for _, c := range cands {
		if !c.picked && !held(c) {
			rest = append(rest, c)
		}
	}
	slices.SortStableFunc(rest, func(x, y *candidate) int {
		if (x.level >= levelPlausible) != (y.level >= levelPlausible) {
			if x.level >= levelPlausible {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(y.rel, x.rel); c != 0 {
			return c
		}
		return strings.Compare(x.hit.Name, y.hit.Name)
	})
	order = append(order, rest...)
	for _, c := range order {
		if len(res.Matches) == k {
			break
		}
		cd := s.cat.At(c.idx)
		h := *c.hit
		conf := confidence(units[c.unit].scaled(h))
		if c.level < levelCertain {
			conf = Low
		}
		reason := hitReason(h)
		if len(units) > 1 && c.unit > 0 {
			reason = "for " + quoteAspect(units[c.unit].text) + ": " + reason
		}
		if c.level < levelCertain {
			reason = "weak match (" + c.why + "): " + reason
		}
		res.Matches = append(res.Matches, Capability{
			Name: cd.Name, Kind: cd.Kind, Description: cd.Description, InputSchema: cd.InputSchema, Risk: cd.Risk,
			Score: h.Score, Confidence: conf, Matches: h.Matches, Reason: reason,
		})
	}
	if len(res.Matches) == 0 {
		res.Reason = fmt.Sprintf("no capability matches %q; try other words for what the tool does", query)
	} else {
		res.Reason = fmt.Sprintf("%d found (best: %s, %s)", len(res.Matches), res.Matches[0].Name, res.Matches[0].Confidence)
	}
	return res
}

// held reports whether policy holds c back (a changed digest awaiting
// approval): the one reason Find leaves a hit out.
func held(c *candidate) bool { return strings.HasPrefix(c.why, "held:") }

// findCand returns the candidate of catalog position idx, or nil.
func findCand(cands []*candidate, idx int) *candidate {
	if idx < 0 {
		return nil
	}
	for _, c := range cands {
		if c.idx == idx {
			return c
		}
	}
	return nil
}
