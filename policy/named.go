package policy

import (
	"fmt"
	"strings"
)

// Confidence tier of a capability chosen before the run (by a plan).
const Named = "named"

// NamedPick is a capability decided before the run, by a plan or an
// assembly, with why.
type NamedPick struct {
	Name   string
	Reason string
}

// SelectNamed is [Selector.Select] for a task whose capabilities were
// decided before the run: it exposes names, in their order, instead of
// ranking the catalog, plus the floor of the task's family and the
// hatch, within the same bound.
//
// The floor keeps its places, as in Select; names fill the rest up to
// [Options.MaxSelected] (and the token budget, when set). A name the
// catalog lacks, one policy holds back ([Options.Allow]), a repeat, and
// one past the bound are left out, each with a [Rejection] saying why. A
// name that is also a floor tool is listed once, at its named place.
// SelectNamed ranks nothing, so it never degrades.
func (s *Selector) SelectNamed(task string, names []NamedPick, opts *Options) *Selection {
	o := opts.resolved()
	// Tools: [] in JSON, never null.
	sel := &Selection{Task: task, Hatch: HatchName, Family: o.Family, Tools: []Pick{}}
	if sel.Family == "" {
		sel.Family, sel.FamilyWords = InferFamily(task)
	}
	floor := s.floorCards(o.Floors[sel.Family], o.Allow)
	if len(floor) > o.MaxSelected {
		floor = floor[:o.MaxSelected]
	}
	inFloor := make(map[int]bool, len(floor))
	for _, i := range floor {
		inFloor[i] = true
	}
	budgeted := o.TokenBudget > 0
	budgetLeft := 0
	if budgeted {
		budgetLeft = o.TokenBudget - s.cardTokens(&hatchCard, o.Format)
		for _, i := range floor {
			budgetLeft -= s.cardTokensAt(i, o.Format)
		}
	}
	room := o.MaxSelected - len(floor)
	taken := map[int]bool{}
	named := 0
	for _, n := range names {
		i := s.cat.Index(n.Name)
		switch {
		case i < 0:
			sel.Rejected = append(sel.Rejected, Rejection{Name: n.Name, Reason: "not in catalog"})
			continue
		case taken[i]:
			continue
		}
		c := s.cat.At(i)
		if o.Allow != nil && !o.Allow(c) {
			sel.Rejected = append(sel.Rejected, Rejection{Name: n.Name, Reason: "held: not allowed by policy (changed digest awaiting approval)"})
			continue
		}
		if inFloor[i] {
			// Listed at its named place; its floor place is not used twice.
			taken[i] = true
			delete(inFloor, i)
			sel.Tools = append(sel.Tools, Pick{Name: c.Name, Kind: c.Kind, Confidence: Named, Floor: true, Risk: c.Risk,
				Reason: n.Reason + "; also floor for " + string(sel.Family)})
			named++
			continue
		}
		if room == 0 {
			sel.Rejected = append(sel.Rejected, Rejection{Name: n.Name, Reason: fmt.Sprintf("bound: at most %d picks", o.MaxSelected)})
			continue
		}
		if budgeted {
			cost := s.cardTokensAt(i, o.Format)
			if cost > budgetLeft {
				sel.Rejected = append(sel.Rejected, Rejection{Name: n.Name,
					Reason: fmt.Sprintf("token budget: needs %d tokens, %d left of %d", cost, max(budgetLeft, 0), o.TokenBudget)})
				continue
			}
			budgetLeft -= cost
		}
		taken[i] = true
		room--
		named++
		sel.Tools = append(sel.Tools, Pick{Name: c.Name, Kind: c.Kind, Confidence: Named, Risk: c.Risk, Reason: n.Reason})
	}
	for _, i := range floor {
		if inFloor[i] {
			c := s.cat.At(i)
			sel.Tools = append(sel.Tools, Pick{Name: c.Name, Kind: c.Kind, Confidence: Floor, Floor: true, Risk: c.Risk,
				Reason: "floor for " + string(sel.Family)})
		}
	}
	switch {
	case named == 0 && len(floor) > 0:
		sel.Reason = "none of the named capabilities is available; the " + string(sel.Family) + " floor only"
	case named == 0:
		sel.Reason = "none of the named capabilities is available; only " + HatchName + " is exposed"
	default:
		sel.Reason = fmt.Sprintf("%d named before the run (%s)", named, strings.Join(sel.Names()[:named], ", "))
		if len(sel.Tools) > named {
			sel.Reason += fmt.Sprintf(", plus the %s floor", sel.Family)
		}
	}
	if len(sel.Rejected) > 0 {
		sel.Reason += fmt.Sprintf("; %d left out", len(sel.Rejected))
	}
	s.countTokens(sel, o.Format)
	return sel
}
