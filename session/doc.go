// Package session runs capbroker sessions: one agent run, its task, the
// tools it sees, its iteration budget and its trace, persisted so a
// resumed run sees exactly what it saw before.
//
// # A run
//
// A [Manager] starts sessions from a selector (a *policy.Selector
// satisfies [Selector]) and a store (package store; nil keeps sessions in
// memory):
//
//	m := session.NewManager(broker.Selector(), st, nil)
//	s, err := m.Start(ctx, "fix the failing test in parser.go", nil)
//	// s.Exposed(): the selected tools; find_capability is exposed too.
//
// Each model turn uses one iteration of the session's budget
// ([Options.MaxIterations], default 50):
//
//   - [Session.Find] answers a find_capability call: it returns the
//     matching capabilities with their argument schemas and exposes them
//     for the rest of the run. Finding grants no extra iterations: a find
//     uses one like any call.
//   - [Session.Call] checks a tool call against the exposed set and
//     records it. capbroker does not run tools; the agent (or the MCP
//     gateway) does, after the check passes.
//   - [Session.CheckCall] is the check alone. A tool that is not exposed
//     gets a [*NotExposedError] that names find_capability and suggests
//     the closest exposed or catalog names (by edit distance and shared
//     name words), so a model recovers in one step.
//
// When the budget is spent, Find and Call return [ErrBudgetExhausted].
//
// # Sessions from a plan task
//
// [Manager.StartFromPlan] starts a session for one task of a plan (see
// package plan): the plan is assembled against the catalog (its pins
// checked, unknown names dropped, empty tasks given inferred
// capabilities), the session's task is the task's description, and it
// exposes the task's capabilities, the plan's names first, plus the floor
// and the hatch, within the selection bound ([StartOptions.Plan]). The
// session records the plan's goal and the task's id ([Session.Plan],
// [View]'s plan_goal and plan_task), and its trace opens with a record of
// kind plan ([PlanDetail]: goal, task, named and inferred capabilities,
// pins) before the select record. [PlanRecord] builds the plan records of
// planning and assembly, which faces append outside any session;
// [StoredPlan] finds a recorded plan again by its id.
//
// # Persistence and resume
//
// The exposed set (the selection, then every tool found, in order) is
// saved on every change, in one transaction with the event's trace
// record. [Manager.Resume] rebuilds exactly the persisted set. Names are
// checked against the current catalog: one that is gone is reported in
// [Session.Missing] and in the resume trace, and stays in the exposed
// set (a call to it is refused with a clear error); nothing is dropped
// or replaced silently. [Manager.Load] does the same without recording a
// resume, for a process that handles one event and exits (the CLI).
//
// Several processes may share a store (PostgreSQL, or one SQLite file):
// writes name the version they read, and on a conflict the session
// re-reads the stored state and re-applies its own changes, so no found
// tool and no used iteration is lost.
//
// # Failures
//
// A session is acknowledged only once stored: when the store refuses a new
// session, [Manager.Start] fails with [ErrNotStored] (the HTTP API answers
// 503), unless [Options.KeepInMemory] opts into starting it in memory
// (the HTTP API then answers 202 with in_memory: true).
//
// Once started, nothing a store or ranker does stops a run. A ranking
// failure exposes the full tool set (see package policy). A store failure
// keeps the session going in memory: the failure is recorded with its tier
// ("store") in [Session.Failures] and in the trace, the records are kept
// and written with the next write that succeeds, and [Session.InMemory]
// reports the state until then.
package session
