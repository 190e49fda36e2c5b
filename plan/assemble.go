package plan

import (
	"context"
	"fmt"
	"strings"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/policy"
	"github.com/capbroker/capbroker/rank"
)

// Origins of an assembled capability.
const (
	OriginPlan     = "plan"     // named by the plan
	OriginInferred = "inferred" // added by ranking the task against the catalog
)

// Defaults of [AssembleOptions].
const (
	DefaultMinCapabilities = 1
	DefaultMaxInferred     = 3
	DefaultMinRelative     = 0.7
)

// AssembleOptions tunes [Assemble]. A nil *AssembleOptions uses every
// default.
type AssembleOptions struct {
	// MinCapabilities is how many capabilities a task should have: when
	// the plan names fewer, inference fills the gap. If zero,
	// DefaultMinCapabilities; negative turns inference off.
	MinCapabilities int
	// MaxInferred bounds the capabilities inference adds to one task. If
	// zero, DefaultMaxInferred.
	MaxInferred int
	// MinRelative is the share of the task's best ranking score an
	// inferred capability must reach, in (0,1]. An irreversible card needs
	// 0.3 more. If zero, DefaultMinRelative.
	MinRelative float64
	// Ranker ranks the catalog for a task. If nil, a BM25F index over the
	// catalog.
	Ranker policy.Ranker
}

func (o *AssembleOptions) resolved() AssembleOptions {
	var r AssembleOptions
	if o != nil {
		r = *o
	}
	if r.MinCapabilities == 0 {
		r.MinCapabilities = DefaultMinCapabilities
	}
	if r.MaxInferred <= 0 {
		r.MaxInferred = DefaultMaxInferred
	}
	if r.MinRelative <= 0 {
		r.MinRelative = DefaultMinRelative
	}
	return r
}

// Assembly is a validated plan with the capabilities each task's agent
// gets.
type Assembly struct {
	Goal  string          `json:"goal"`
	Tasks []AssembledTask `json:"tasks"`
	// Warnings are what validation dropped and what inference could not do.
	Warnings []Warning `json:"warnings"`
	// Pins are the cards of the capabilities the plan names, as the
	// catalog has them now: a later assembly or session start is checked
	// against them (see [CheckPins]).
	Pins []Pin `json:"pins"`
}

// AssembledTask is a task of the validated plan with its capabilities.
type AssembledTask struct {
	ID           string       `json:"id"`
	Description  string       `json:"description"`
	AgentSpec    AgentSpec    `json:"agent_spec"`
	Instructions string       `json:"instructions"`
	DependsOn    []string     `json:"depends_on"`
	Needs        []Need       `json:"needs"`
	Capabilities []Capability `json:"capabilities"`
}

// Capability is one capability given to a task, with where it came from.
type Capability struct {
	// Name is the card's name in the catalog.
	Name string `json:"name"`
	// Origin is OriginPlan or OriginInferred.
	Origin string `json:"origin"`
	// Reason says why the task has it.
	Reason string `json:"reason"`
}

// Names returns the names of the task's capabilities, in order.
func (t *AssembledTask) Names() []string {
	names := make([]string, len(t.Capabilities))
	for i, c := range t.Capabilities {
		names[i] = c.Name
	}
	return names
}

// Assemble decides the capabilities of every task of p: it honors the
// plan, then fills gaps.
//
// The plan's pins are checked first ([CheckPins]: a changed card is
// reported with what changed, a vanished one dropped), then the plan is
// validated against cat ([Validate]); their warnings open the
// assembly's, and the assembly pins what the plan names ([PinsOf]). Each task then gets the capabilities the plan names,
// in the plan's order, with origin "plan". When that is fewer than
// [AssembleOptions.MinCapabilities], the catalog is ranked for the task's
// description and its agent's name and description, and the best hits
// not yet named are added with origin "inferred". A description of
// several steps ([policy.Aspects]: "compute the statistics and write a
// script that charts them") first gets the best hit of each step, so a
// compound task gets one capability per step; then every hit within
// [AssembleOptions.MinRelative] of the best score, up to
// [AssembleOptions.MaxInferred] (or the steps' count, if more), and, if that still leaves the task short
// of the minimum, the next hits with any score until it is reached. A
// ranking failure leaves the task with what the plan named and a warning.
//
// Assemble is deterministic: the same plan, catalog and options give the
// same assembly.
func Assemble(ctx context.Context, p *Plan, cat *card.Catalog, opts *AssembleOptions) *Assembly {
	o := opts.resolved()
	pinned, warns := CheckPins(p, cat)
	valid, vwarns := Validate(pinned, cat)
	a := &Assembly{Goal: valid.Goal, Tasks: make([]AssembledTask, len(valid.Tasks)), Warnings: append(warns, vwarns...)}
	if a.Warnings == nil {
		a.Warnings = []Warning{}
	}
	if cat != nil {
		a.Pins = PinsOf(valid, cat)
	}
	if a.Pins == nil {
		a.Pins = []Pin{}
	}
	ranker := o.Ranker
	if ranker == nil && o.MinCapabilities > 0 {
		ranker = rank.New(cat.Cards(), nil)
	}
	for i, t := range valid.Tasks {
		at := AssembledTask{ID: t.ID, Description: t.Description, AgentSpec: t.AgentSpec,
			Instructions: t.Instructions, DependsOn: t.DependsOn, Needs: t.Needs,
			Capabilities: make([]Capability, 0, len(t.Capabilities))}
		for _, name := range t.Capabilities {
			at.Capabilities = append(at.Capabilities, Capability{Name: name, Origin: OriginPlan, Reason: "named by the plan"})
		}
		if len(at.Capabilities) < o.MinCapabilities && cat.Len() > 0 {
			if err := infer(ctx, &at, cat, ranker, o); err != nil {
				a.Warnings = append(a.Warnings, Warning{Task: t.ID, Field: "inference",
					Message: fmt.Sprintf("ranking failed, kept only what the plan names: %v", err)})
			}
		}
		a.Tasks[i] = at
	}
	return a
}

// Query returns the text inference ranks the catalog with for t: its
// description and its agent's name and description.
func Query(t *Task) string {
	return inferenceQuery(t.Description, t.AgentSpec)
}

func inferenceQuery(desc string, spec AgentSpec) string {
	parts := []string{desc}
	if spec.Name != "" {
		parts = append(parts, spec.Name)
	}
	if spec.Description != "" {
		parts = append(parts, spec.Description)
	}
	return strings.Join(parts, "\n")
}

// infer adds ranked capabilities to t.
func infer(ctx context.Context, t *AssembledTask, cat *card.Catalog, r policy.Ranker, o AssembleOptions) (err error) {
	defer func() {
		// A broken ranker degrades assembly; it never stops it.
		if v := recover(); v != nil {
			err = fmt.Errorf("ranker panicked: %v", v)
		}
	}()
	named := make(map[string]bool, len(t.Capabilities))
	for _, c := range t.Capabilities {
		named[c.Name] = true
	}
	want := max(o.MinCapabilities-len(t.Capabilities), 0)
	hits, err := r.Rank(ctx, inferenceQuery(t.Description, t.AgentSpec), len(named)+o.MaxInferred+want)
	if err != nil {
		return err
	}
	if len(hits) == 0 {
		return nil
	}
	top := hits[0].Score
	var added int
	// A task of several steps gets the best capability of each step
	// first, so a compound task is not reduced to its main step.
	if aspects := policy.Aspects(t.Description); len(aspects) > 1 {
		for _, a := range aspects {
			n, err := inferStep(ctx, t, a.Text, cat, r, named)
			if err != nil {
				return err
			}
			added += n
		}
	}
	limit := max(o.MaxInferred, added)
	var rest []rank.Hit
	for pos, h := range hits {
		c, ok := cat.Lookup(h.Name)
		if !ok || named[h.Name] || h.Score <= 0 {
			continue
		}
		need := o.MinRelative
		if c.Risk == card.RiskIrreversible {
			need += 0.3
		}
		rel := 1.0
		if top > 0 {
			rel = h.Score / top
		}
		if rel < need || added >= limit {
			rest = append(rest, h)
			continue
		}
		t.Capabilities = append(t.Capabilities, Capability{Name: h.Name, Origin: OriginInferred,
			Reason: fmt.Sprintf("ranked #%d for the task (%.0f%% of the best score): %s", pos+1, 100*rel, matched(h))})
		named[h.Name] = true
		added++
	}
	for _, h := range rest {
		if len(t.Capabilities) >= o.MinCapabilities {
			break
		}
		t.Capabilities = append(t.Capabilities, Capability{Name: h.Name, Origin: OriginInferred,
			Reason: fmt.Sprintf("weak match added to reach the minimum of %d: %s", o.MinCapabilities, matched(h))})
	}
	return nil
}

// inferStep adds the best capability for one step of a task, unless the
// task already has it; an irreversible one must cover as much of the step
// as selection asks of it. It returns how many it added (0 or 1).
func inferStep(ctx context.Context, t *AssembledTask, step string, cat *card.Catalog, r policy.Ranker, named map[string]bool) (int, error) {
	hits, err := r.Rank(ctx, step, 1)
	if err != nil || len(hits) == 0 {
		return 0, err
	}
	h := hits[0]
	c, ok := cat.Lookup(h.Name)
	if !ok || named[h.Name] || h.Score <= 0 || h.Coverage < policy.DefaultMinCoverage ||
		(c.Risk == card.RiskIrreversible && h.Coverage < policy.IrreversibleMinCoverage) {
		return 0, nil
	}
	t.Capabilities = append(t.Capabilities, Capability{Name: h.Name, Origin: OriginInferred,
		Reason: fmt.Sprintf("ranked #1 for the step %q: %s", step, matched(h))})
	named[h.Name] = true
	return 1, nil
}

// matched lists the query words of a hit and the fields they matched.
func matched(h rank.Hit) string {
	if len(h.Matches) == 0 {
		return "no words matched"
	}
	parts := make([]string, len(h.Matches))
	for i, m := range h.Matches {
		fields := make([]string, len(m.Fields))
		for j, f := range m.Fields {
			fields[j] = f.String()
		}
		parts[i] = fmt.Sprintf("%q in %s", m.Term, strings.Join(fields, "+"))
	}
	return "matched " + strings.Join(parts, ", ")
}
