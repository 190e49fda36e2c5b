package session

import (
	"time"

	"github.com/capbroker/capbroker/policy"
	"github.com/capbroker/capbroker/store"
	"github.com/capbroker/capbroker/trace"
)

// View is a session as people and programs see it: what "capbroker
// session ... --json" prints and what the HTTP API answers. Both build it
// with [NewView] or [StoredView], so their JSON is the same.
type View struct {
	ID   string `json:"id"`
	Task string `json:"task"`
	// PlanTask and PlanGoal name the plan task the session was started
	// from (empty otherwise).
	PlanTask      string   `json:"plan_task,omitempty"`
	PlanGoal      string   `json:"plan_goal,omitempty"`
	ExposedTools  []string `json:"exposed_tools"`
	SelectedTools []string `json:"selected_tools"`
	// Hatch is the escape hatch, exposed in addition to ExposedTools.
	Hatch         string `json:"hatch"`
	Iterations    int    `json:"iterations"`
	MaxIterations int    `json:"max_iterations"`
	FindCalls     int    `json:"find_capability_calls"`
	// Missing are exposed tools the current catalog no longer has.
	Missing []string `json:"missing,omitempty"`
	// Failures are what failed in this process's use of the session.
	Failures []trace.Failure `json:"failures,omitempty"`
	// InMemory is set while the store has not accepted the session's
	// latest changes (see [Session.InMemory]).
	InMemory bool `json:"in_memory,omitempty"`
	// Reason, Tokens and Degraded come from the initial selection, when
	// it is known.
	Reason    string         `json:"reason,omitempty"`
	Tokens    *policy.Tokens `json:"tokens,omitempty"`
	Degraded  bool           `json:"degraded,omitempty"`
	CreatedAt time.Time      `json:"created_at"`
	UpdatedAt time.Time      `json:"updated_at"`
	// Find is the result of the find_capability call just made, if any.
	Find *FindView `json:"find,omitempty"`
	// Call is the verdict on the tool call just checked, if any.
	Call *CallView `json:"call,omitempty"`
}

// FindView is a find_capability call's result in a [View].
type FindView struct {
	Query   string              `json:"query"`
	Reason  string              `json:"reason"`
	Matches []policy.Capability `json:"matches"`
	Added   []string            `json:"added"`
}

// NewFindView returns the view of a find's result.
func NewFindView(r *FindResult) *FindView {
	return &FindView{Query: r.Query, Reason: r.Reason, Matches: r.Matches, Added: r.Added}
}

// CallView is the verdict on a tool call in a [View].
type CallView struct {
	Tool    string `json:"tool"`
	Allowed bool   `json:"allowed"`
	// Error is the message for the model when the call is refused.
	Error       string       `json:"error,omitempty"`
	Suggestions []Suggestion `json:"suggestions,omitempty"`
}

// NewView returns the view of a live session.
func NewView(s *Session) *View {
	v := StoredView(s.State())
	v.Missing = s.Missing()
	v.Failures = s.Failures()
	v.InMemory = s.InMemory()
	if sel := s.Selection(); sel != nil {
		v.Reason = sel.Reason
		v.Tokens = &sel.Tokens
		v.Degraded = sel.Degraded
	}
	return v
}

// StoredView returns the view of a session as stored, without the
// catalog check and the selection's explanations.
func StoredView(st *store.Session) *View {
	return &View{
		ID: st.ID, Task: st.Task, PlanTask: st.PlanTask, PlanGoal: st.PlanGoal, ExposedTools: nonNil(st.Exposed), SelectedTools: nonNil(st.Selected), Hatch: policy.HatchName,
		Iterations: st.Iterations, MaxIterations: st.MaxIterations, FindCalls: st.FindCalls,
		CreatedAt: st.CreatedAt, UpdatedAt: st.UpdatedAt,
	}
}

// nonNil makes an empty list print as [] rather than null.
func nonNil(list []string) []string {
	if list == nil {
		return []string{}
	}
	return list
}
