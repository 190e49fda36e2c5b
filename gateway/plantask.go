package gateway

import (
	"context"

	"github.com/capbroker/capbroker/policy"
)

// enterTask moves a session following a plan onto the plan task ref
// (find_capability's "task"): see plan-aware sessions in doc.go. It
// returns a note for the agent.
func (s *session) enterTask(ctx context.Context, ref string) (string, error) {
	return "", nil
}

// rankPlanFirst puts the matches the session's plan task names first.
func (s *session) rankPlanFirst(ms []policy.Capability) []policy.Capability {
	return ms
}
