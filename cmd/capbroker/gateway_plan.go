package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	capbroker "github.com/capbroker/capbroker"
	"github.com/capbroker/capbroker/gateway"
	"github.com/capbroker/capbroker/plan"
	"github.com/capbroker/capbroker/policy"
	"github.com/capbroker/capbroker/session"
	"github.com/capbroker/capbroker/store"
)

// gatewayPlans gives gateway sessions the tools of a plan task: "t2" is a
// task of the --plan file, "ID/t2" a task of the plan stored under ID in
// the trace (capbroker plan prints the id of each plan it makes).
type gatewayPlans struct {
	file *plan.Plan   // --plan, or nil
	st   store.Store  // the session database, or nil
	log  *slog.Logger // receives what checking the plan said
}

var _ gateway.PlanTasks = (*gatewayPlans)(nil)

// PlanSelection implements gateway.PlanTasks: it assembles the plan over
// the gateway's tools and exposes the task's capabilities, the plan's
// names first, plus the floor.
func (g *gatewayPlans) PlanSelection(ctx context.Context, ref string, b *capbroker.Broker, family policy.Family) (*policy.Selection, error) {
	p, taskID, err := g.resolve(ctx, ref)
	if err != nil {
		return nil, err
	}
	if _, ok := p.Task(taskID); !ok {
		ids := make([]string, len(p.Tasks))
		for i, t := range p.Tasks {
			ids[i] = t.ID
		}
		return nil, fmt.Errorf("the plan has no task %q (it has %s)", taskID, strings.Join(ids, ", "))
	}
	a := plan.Assemble(ctx, p, b.Catalog(), &plan.AssembleOptions{Ranker: b})
	for _, w := range a.Warnings {
		g.log.Warn("plan task "+ref, "warning", w.String())
	}
	for _, t := range a.Tasks {
		if t.ID != taskID {
			continue
		}
		picks := make([]policy.NamedPick, len(t.Capabilities))
		for i, c := range t.Capabilities {
			picks[i] = policy.NamedPick{Name: c.Name, Reason: c.Reason}
		}
		sel := b.Selector().SelectNamed(t.Description, picks, &policy.Options{Family: family})
		sel.Reason = fmt.Sprintf("task %s of the plan %q: %s", taskID, a.Goal, sel.Reason)
		return sel, nil
	}
	return nil, fmt.Errorf("the plan has no task %q", taskID) // unreachable: checked above
}

// resolve returns the plan and task id ref names.
func (g *gatewayPlans) resolve(ctx context.Context, ref string) (*plan.Plan, string, error) {
	id, taskID, stored := strings.Cut(ref, "/")
	if !stored {
		if g.file == nil {
			return nil, "", fmt.Errorf("no plan file was given (capbroker gateway --plan FILE), and %q names no stored plan (want PLAN_ID/TASK_ID)", ref)
		}
		return g.file, ref, nil
	}
	if g.st == nil {
		return nil, "", fmt.Errorf("stored plan %s: the gateway has no session database to read it from (--db)", id)
	}
	p, err := session.StoredPlan(ctx, g.st, id)
	if err != nil {
		return nil, "", err
	}
	return p, taskID, nil
}
