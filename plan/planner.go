package plan

import (
	"context"
	"fmt"
	"strings"

	"github.com/capbroker/capbroker/llm"
	"github.com/capbroker/capbroker/telemetry"
)

// Planner asks a model for a plan. It is safe for concurrent use.
type Planner struct {
	model llm.Provider
	opts  PromptOptions
}

// NewPlanner returns a planner that asks model, with the prompt options
// opts (nil: the plain prompt, no catalog).
func NewPlanner(model llm.Provider, opts *PromptOptions) *Planner {
	p := &Planner{model: model}
	if opts != nil {
		p.opts = *opts
	}
	return p
}

// Result is a plan and how it was made.
type Result struct {
	// Plan is the validated plan (nil when the reply was not a plan).
	Plan *Plan `json:"plan"`
	// Warnings are what validation dropped from the model's plan.
	Warnings []Warning `json:"warnings"`
	// Prompt is what the model was sent.
	Prompt *Prompt `json:"prompt"`
	// Reply is the model's reply as received.
	Reply llm.Response `json:"-"`
}

// Plan asks the model to plan goal, parses its reply and validates it
// against the catalog. A reply that is not a plan is an error wrapping a
// [*ParseError] that keeps the reply; the Result, with the prompt and the
// reply, is returned with it. A plan that leaves the goal empty gets the
// goal asked for.
func (p *Planner) Plan(ctx context.Context, goal string) (*Result, error) {
	ctx, span := telemetry.Start(ctx, telemetry.SpanPlan)
	res, err := p.plan(ctx, goal)
	if res != nil && span.IsRecording() {
		if r := res.Reply; r.Model != "" || r.InputTokens > 0 || r.OutputTokens > 0 {
			span.SetAttributes(telemetry.GenAIResponseModel.String(r.Model),
				telemetry.GenAIUsageInputTokens.Int(r.InputTokens), telemetry.GenAIUsageOutputTokens.Int(r.OutputTokens))
		}
		if res.Plan != nil {
			span.SetAttributes(telemetry.PlanTaskCount.Int(len(res.Plan.Tasks)), telemetry.PlanWarnings.Int(len(res.Warnings)))
		}
	}
	telemetry.End(span, err)
	return res, err
}

func (p *Planner) plan(ctx context.Context, goal string) (*Result, error) {
	pr, err := BuildPrompt(ctx, goal, &p.opts)
	if err != nil {
		return nil, err
	}
	res := &Result{Prompt: pr, Warnings: []Warning{}}
	res.Reply, err = p.model.Complete(ctx, llm.Request{System: pr.System, User: pr.User, Schema: pr.Schema, SchemaName: pr.SchemaName})
	if err != nil {
		return res, fmt.Errorf("planning: asking the model: %w", err)
	}
	pl, err := ParseReply(res.Reply.Text)
	if err != nil {
		return res, fmt.Errorf("planning: the model's reply is not a valid plan: %w", err)
	}
	if strings.TrimSpace(pl.Goal) == "" {
		pl.Goal = strings.TrimSpace(goal)
	}
	res.Plan, res.Warnings = Validate(pl, p.opts.Catalog)
	if res.Warnings == nil {
		res.Warnings = []Warning{}
	}
	if p.opts.Catalog.Len() > 0 {
		// The plan remembers the cards it named, so a later assembly or
		// session start can say what changed since.
		res.Plan.Pins = PinsOf(res.Plan, p.opts.Catalog)
	} else {
		res.Plan.Pins = nil
	}
	return res, nil
}
