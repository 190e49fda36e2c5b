package gateway

import (
	"context"
	"errors"
	"fmt"

	capbroker "github.com/capbroker/capbroker"
	"github.com/capbroker/capbroker/policy"
)

// PlanTasks gives sessions the tools of a plan's task, so an orchestrator
// that plans can run each step's agent through the gateway with the
// plan's tools (see [Options.PlanTasks]).
type PlanTasks interface {
	// PlanSelection returns the selection a session started for plan
	// task ref exposes, chosen from b's catalog of gateway tools (with
	// family's floor). An unknown ref is an error that says so.
	PlanSelection(ctx context.Context, ref string, b *capbroker.Broker, family policy.Family) (*policy.Selection, error)
}

// planSelection is the start selection of a session for plan task ref.
func (g *Gateway) planSelection(ctx context.Context, cat *catalog, ref string) (*policy.Selection, error) {
	if g.opts.PlanTasks == nil {
		return nil, errors.New("this gateway was given no plan (capbroker gateway --plan FILE)")
	}
	sel, err := g.opts.PlanTasks.PlanSelection(ctx, ref, cat.broker, g.opts.Family)
	if err != nil {
		return nil, fmt.Errorf("plan task %q: %w", ref, err)
	}
	return sel, nil
}

// checkPlanTask reports whether a session can start for plan task ref.
func (g *Gateway) checkPlanTask(ctx context.Context, ref string) error {
	_, err := g.planSelection(ctx, g.catalog(), ref)
	return err
}
