package session

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/capbroker/capbroker/plan"
	"github.com/capbroker/capbroker/policy"
	"github.com/capbroker/capbroker/store"
	"github.com/capbroker/capbroker/trace"
)

// PlanStart is the plan task a session starts from: the session exposes
// the task's assembled capabilities instead of selecting for its text.
type PlanStart struct {
	// Goal is the plan's goal; TaskID the id of the task.
	Goal   string
	TaskID string
	// Capabilities are the task's capabilities as assembly gave them, in
	// order: those the plan names, then inferred ones.
	Capabilities []plan.Capability
	// Warnings are what checking and validating the plan said (recorded in
	// the session's plan record).
	Warnings []plan.Warning
	// Pins are the digests of the capabilities the plan names.
	Pins []plan.Pin
}

// PlanDetail is the Detail of a trace record of kind plan: a plan made,
// assembled, or a session started from one of its tasks.
type PlanDetail struct {
	// PlanID is the plan's [plan.Plan.ID], when the record is of its
	// making: the plan is found again by it.
	PlanID string `json:"plan_id,omitempty"`
	// Goal is the plan's goal.
	Goal string `json:"goal"`
	// Tasks are the plan's tasks (only the session's own for a session),
	// each with the capabilities named by the plan and those inferred.
	Tasks []PlanTaskDetail `json:"tasks"`
	// Warnings are what validation, pin checks and inference said.
	Warnings []plan.Warning `json:"warnings,omitempty"`
	// Pins are the digests of the named capabilities.
	Pins []PinDetail `json:"pins,omitempty"`
	// Plan is the plan itself, when the record is of its making.
	Plan *plan.Plan `json:"plan,omitempty"`
}

// PlanTaskDetail is one task in a [PlanDetail].
type PlanTaskDetail struct {
	ID       string   `json:"id"`
	Named    []string `json:"named"`
	Inferred []string `json:"inferred,omitempty"`
}

// PinDetail is a pin without the card's text, for traces.
type PinDetail struct {
	Name   string `json:"name"`
	Digest string `json:"digest"`
}

// PlanRecord returns the trace record of kind plan for a plan (made or
// assembled): its goal, each task's named and, for an assembly, inferred
// capabilities, the warnings and pins. what says what happened ("planned",
// "assembled"); it opens the record's reason.
func PlanRecord(what string, p *plan.Plan, a *plan.Assembly, warns []plan.Warning) trace.Record {
	d := PlanDetail{Warnings: warns}
	var named, inferred int
	var pins []plan.Pin
	if a != nil {
		d.Goal = a.Goal
		pins = a.Pins
		for _, t := range a.Tasks {
			td := taskDetail(t.ID, t.Capabilities)
			named += len(td.Named)
			inferred += len(td.Inferred)
			d.Tasks = append(d.Tasks, td)
		}
	} else {
		d.Goal = p.Goal
		d.Plan = p
		d.PlanID = p.ID()
		pins = p.Pins
		for _, t := range p.Tasks {
			d.Tasks = append(d.Tasks, PlanTaskDetail{ID: t.ID, Named: nonNil(t.Capabilities)})
			named += len(t.Capabilities)
		}
	}
	for _, pin := range pins {
		d.Pins = append(d.Pins, PinDetail{Name: pin.Name, Digest: pin.Digest})
	}
	reason := fmt.Sprintf("%s %d tasks: %d capabilities named by the plan", what, len(d.Tasks), named)
	if d.PlanID != "" {
		reason = fmt.Sprintf("plan %s: %s", d.PlanID, reason)
	}
	if a != nil {
		reason += fmt.Sprintf(", %d inferred", inferred)
	}
	if len(warns) > 0 {
		reason += fmt.Sprintf("; %d warnings", len(warns))
	}
	detail, _ := json.Marshal(d) // plain data: cannot fail
	return trace.Record{Kind: trace.KindPlan, Task: d.Goal, CapabilityReason: reason, Detail: detail}
}

func taskDetail(id string, caps []plan.Capability) PlanTaskDetail {
	td := PlanTaskDetail{ID: id, Named: []string{}}
	for _, c := range caps {
		if c.Origin == plan.OriginPlan {
			td.Named = append(td.Named, c.Name)
		} else {
			td.Inferred = append(td.Inferred, c.Name)
		}
	}
	return td
}

// StartFromPlan assembles plan p against the manager's catalog and starts
// a session for its task taskID: the session's task is the task's
// description, and it exposes the task's capabilities (the plan's names
// first, then inferred ones for a task the plan left short), plus the
// floor and the hatch, within the selection bound. It returns the
// assembly, whose warnings say what the plan check dropped or found
// changed since the plan was made (see [plan.CheckPins]).
//
// An unknown task id is an error naming the plan's ids.
func (m *Manager) StartFromPlan(ctx context.Context, p *plan.Plan, taskID string, opts *StartOptions) (*Session, *plan.Assembly, error) {
	if _, ok := p.Task(taskID); !ok {
		ids := make([]string, len(p.Tasks))
		for i, t := range p.Tasks {
			ids[i] = t.ID
		}
		return nil, nil, fmt.Errorf("starting a session from the plan: no task %q (the plan has %s)", taskID, strings.Join(ids, ", "))
	}
	a := plan.Assemble(ctx, p, m.sel.Catalog(), &plan.AssembleOptions{Ranker: m.o.Ranker})
	var at *plan.AssembledTask
	for i := range a.Tasks {
		if a.Tasks[i].ID == taskID {
			at = &a.Tasks[i]
		}
	}
	var o StartOptions
	if opts != nil {
		o = *opts
	}
	o.Plan = &PlanStart{Goal: a.Goal, TaskID: taskID, Capabilities: at.Capabilities, Warnings: a.Warnings, Pins: a.Pins}
	s, err := m.Start(ctx, at.Description, &o)
	return s, a, err
}

// planned selects for a plan start and returns its plan record.
func (m *Manager) planned(task string, ps *PlanStart) (*policy.Selection, trace.Record) {
	picks := make([]policy.NamedPick, len(ps.Capabilities))
	for i, c := range ps.Capabilities {
		picks[i] = policy.NamedPick{Name: c.Name, Reason: c.Reason}
	}
	sel := m.sel.SelectNamed(task, picks, m.o.Select)
	td := taskDetail(ps.TaskID, ps.Capabilities)
	d := PlanDetail{Goal: ps.Goal, Tasks: []PlanTaskDetail{td}, Warnings: ps.Warnings}
	for _, pin := range ps.Pins {
		if slices.Contains(td.Named, pin.Name) {
			d.Pins = append(d.Pins, PinDetail{Name: pin.Name, Digest: pin.Digest})
		}
	}
	detail, _ := json.Marshal(d) // plain data: cannot fail
	reason := fmt.Sprintf("started from task %s of the plan %q: %d named by the plan, %d inferred", ps.TaskID, ps.Goal, len(td.Named), len(td.Inferred))
	if len(ps.Warnings) > 0 {
		reason += fmt.Sprintf("; %d warnings", len(ps.Warnings))
	}
	rec := trace.Record{Kind: trace.KindPlan, Task: task, CapabilityReason: reason, Detail: detail}
	return sel, rec
}

// StoredPlan returns the plan recorded in the trace under id (its
// [plan.Plan.ID]): the newest plan record of its making. It returns
// store.ErrNotFound, wrapped, when none holds it.
func StoredPlan(ctx context.Context, st store.Store, id string) (*plan.Plan, error) {
	recs, err := st.Traces(ctx, &store.TraceQuery{Kind: trace.KindPlan})
	if err != nil {
		return nil, fmt.Errorf("reading the stored plans: %w", err)
	}
	for i := len(recs) - 1; i >= 0; i-- {
		var d PlanDetail
		if json.Unmarshal(recs[i].Detail, &d) != nil || d.PlanID != id || d.Plan == nil {
			continue
		}
		return d.Plan, nil
	}
	return nil, fmt.Errorf("no plan %s in the trace (capbroker plan records each plan it makes, with its id): %w", id, store.ErrNotFound)
}
