package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/capbroker/capbroker/policy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Plan-aware sessions: a session following a plan says which task it is
// on by calling find_capability with "task" (the plan task's ID, or
// PLAN_ID/TASK_ID), alone or with a query. Every client can make that
// call: it needs no header, no reconnect and no list_changed. The session
// then swaps its exposed set for that task's (its capabilities, the
// floor, the pins); what it held before stays callable by name. Its finds
// rank the task's named capabilities first.

// hatchTool is find_capability as the session lists it: the policy's
// hatch, with "task" when the gateway has plans.
func (g *Gateway) hatchTool() *mcp.Tool {
	h := policy.Hatch()
	t := &mcp.Tool{Name: h.Name, Description: h.Description, InputSchema: h.InputSchema,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, Title: "Find capabilities"}}
	if g.opts.PlanTasks == nil {
		return t
	}
	var schema map[string]any
	if json.Unmarshal(h.InputSchema, &schema) != nil {
		return t
	}
	props, _ := schema["properties"].(map[string]any)
	if props == nil {
		return t
	}
	props["task"] = map[string]any{"type": "string", "description": "If you follow a plan: the task you start (its ID); your tools become its tools."}
	delete(schema, "required")
	t.InputSchema = schema
	return t
}

// enterTask moves the session onto plan task ref: its exposed set becomes
// the task's selection and the pins. It returns a note for the agent.
func (s *session) enterTask(ctx context.Context, ref string) (string, error) {
	g := s.g
	cat := s.catalog()
	sel, err := g.planSelection(ctx, cat, ref)
	if err != nil {
		return "", err
	}
	names := merge(g.pinned(cat), sel.Names())
	var named []string
	for _, p := range sel.Tools {
		if !p.Floor {
			named = append(named, p.Name)
		}
	}
	s.mu.Lock()
	prev := s.planTask
	s.planTask, s.planNames = ref, named
	s.exposed, s.order, s.initial = map[string]bool{}, nil, map[string]bool{}
	s.addLocked(names)
	for _, n := range names {
		s.initial[n] = true
	}
	s.mu.Unlock()
	s.sync()
	if !s.anon {
		if err := g.opts.Store.Save(ctx, s.key, names); err != nil {
			g.opts.Logger.Warn("saving a session's exposed tools", "session", s.key, "error", err)
		}
	}
	exposed := s.exposedNames(cat)
	reason := fmt.Sprintf("plan task %s: %s", ref, sel.Reason)
	if prev != "" && prev != ref {
		reason = fmt.Sprintf("from plan task %s to %s: %s", prev, ref, sel.Reason)
	}
	g.opts.Trace.Record(ctx, Event{Session: s.key, Kind: "plan", Mode: string(s.mode), Query: sel.Task, Names: names,
		Exposed: exposed, Reason: reason, TokensExposed: cat.tokens(exposed), TokensFull: cat.fullTokens})
	note := fmt.Sprintf("on plan task %s: %d tool(s) listed for it (%s)", ref, len(names), joinClipped(names, 8))
	if s.mode == ModeCall {
		note = fmt.Sprintf("on plan task %s: call its tools with call_capability: %s", ref, joinClipped(names, 8))
	}
	return note, nil
}

// joinClipped joins at most n names, saying how many more there are.
func joinClipped(names []string, n int) string {
	if len(names) <= n {
		return fmt.Sprint(names)
	}
	return fmt.Sprintf("%v and %d more", names[:n], len(names)-n)
}

// rankPlanFirst puts the matches the session's plan task names first,
// keeping the order within each part.
func (s *session) rankPlanFirst(ms []policy.Capability) []policy.Capability {
	s.mu.Lock()
	named := s.planNames
	s.mu.Unlock()
	if len(named) == 0 {
		return ms
	}
	out := make([]policy.Capability, 0, len(ms))
	for _, m := range ms {
		if slices.Contains(named, m.Name) {
			out = append(out, m)
		}
	}
	for _, m := range ms {
		if !slices.Contains(named, m.Name) {
			out = append(out, m)
		}
	}
	return out
}
