package session

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	oteltrace "go.opentelemetry.io/otel/trace"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/payload"
	"github.com/capbroker/capbroker/policy"
	"github.com/capbroker/capbroker/store"
	"github.com/capbroker/capbroker/telemetry"
	"github.com/capbroker/capbroker/trace"
)

// DefaultMaxIterations is the iteration budget of a session when none is
// given.
const DefaultMaxIterations = 50

// ErrBudgetExhausted is returned by Find and Call once every iteration of
// the budget is used.
var ErrBudgetExhausted = errors.New("iteration budget exhausted")

// Selector decides what a task sees and answers find_capability. A
// *policy.Selector is one.
type Selector interface {
	Select(ctx context.Context, task string, opts *policy.Options) *policy.Selection
	Find(ctx context.Context, query string, k int, opts *policy.Options) *policy.FindResult
	// SelectNamed exposes capabilities decided before the run (a plan
	// task's) plus the floor, within the bound.
	SelectNamed(task string, names []policy.NamedPick, opts *policy.Options) *policy.Selection
	Catalog() *card.Catalog
}

var _ Selector = (*policy.Selector)(nil)

// tokenCounter is implemented by selectors that count payload tokens
// (*policy.Selector); records of finds and calls then carry token counts.
type tokenCounter interface {
	ExposedTokens(names []string, f payload.Format) int
	FullTokens(f payload.Format) int
}

var _ tokenCounter = (*policy.Selector)(nil)

// Options configures a Manager. A nil *Options uses every default.
type Options struct {
	// Select holds the selection options for starts and finds. Nil uses
	// the selector's defaults.
	Select *policy.Options
	// MaxIterations is the default iteration budget. If zero,
	// DefaultMaxIterations.
	MaxIterations int
	// FindK is how many capabilities a find returns when the call does not
	// say. If zero, policy.DefaultFindK.
	FindK int
	// Now gives the time. If nil, time.Now.
	Now func() time.Time
	// NewID makes session IDs. If nil, 16 random hex digits.
	NewID func() string
	// Logger receives store failures. If nil, slog.Default().
	Logger *slog.Logger
	// KeepInMemory, when the store refuses a new session, starts it in
	// memory anyway ([Session.InMemory] reports it; it is lost if the
	// process ends before a later write succeeds). By default [Manager.Start]
	// fails with [ErrNotStored] instead: a session is acknowledged only
	// once stored.
	KeepInMemory bool
	// Ranker ranks the catalog when a session starts from a plan task the
	// plan left short of capabilities ([Manager.StartFromPlan]). If nil,
	// a BM25F index over the catalog, built for each such start.
	Ranker policy.Ranker
}

// Manager starts and resumes sessions. It is safe for concurrent use.
type Manager struct {
	sel Selector
	st  store.Store
	o   Options

	mu sync.Mutex
	// orphans are sessions the store has not accepted yet, kept so they
	// can still be resumed from this process.
	orphans map[string]*Session
}

// NewManager returns a manager selecting with sel and persisting to st.
// A nil st keeps sessions in memory only (no failure is recorded).
func NewManager(sel Selector, st store.Store, opts *Options) *Manager {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.MaxIterations <= 0 {
		o.MaxIterations = DefaultMaxIterations
	}
	if o.FindK <= 0 {
		o.FindK = policy.DefaultFindK
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.NewID == nil {
		o.NewID = newID
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return &Manager{sel: sel, st: st, o: o, orphans: map[string]*Session{}}
}

func newID() string {
	b := make([]byte, 8)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// Store returns the manager's store (nil when sessions are in memory).
func (m *Manager) Store() store.Store { return m.st }

// StartOptions tunes one session. A nil *StartOptions uses the manager's
// settings.
type StartOptions struct {
	// ID names the session. If empty, one is made. Starting a session with
	// a stored ID fails with store.ErrExists.
	ID string
	// MaxIterations is the session's budget. If zero, the manager's.
	MaxIterations int
	// Plan, if set, starts the session from a plan task: it exposes the
	// task's capabilities instead of selecting for the task's text, and
	// the session records the plan's goal and the task's id.
	Plan *PlanStart
}

// Start selects the tools for task and starts a session exposing them.
// It fails only for an empty task or a taken ID: a ranking failure
// exposes the full set and a store failure keeps the session in memory,
// both recorded.
func (m *Manager) Start(ctx context.Context, task string, opts *StartOptions) (*Session, error) {
	ctx, span := telemetry.Start(ctx, telemetry.SpanSessionStart)
	s, err := m.start(ctx, task, opts)
	if s != nil && span.IsRecording() {
		span.SetAttributes(telemetry.SessionID.String(s.ID()))
		if s.sel != nil {
			span.SetAttributes(telemetry.SelectionAttrs(s.sel)...)
		}
	}
	telemetry.End(span, err)
	return s, err
}

func (m *Manager) start(ctx context.Context, task string, opts *StartOptions) (*Session, error) {
	var o StartOptions
	if opts != nil {
		o = *opts
	}
	if strings.TrimSpace(task) == "" {
		return nil, fmt.Errorf("starting session: empty task")
	}
	if o.ID == "" {
		o.ID = m.o.NewID()
	}
	if o.MaxIterations <= 0 {
		o.MaxIterations = m.o.MaxIterations
	}
	begin := m.o.Now()
	start := time.Now() // latency by the wall clock, whatever Now is
	var sel *policy.Selection
	var planRec *trace.Record
	if o.Plan != nil {
		var rec trace.Record
		sel, rec = m.planned(task, o.Plan)
		rec.At = begin
		planRec = &rec
	} else {
		sel = m.sel.Select(ctx, task, m.o.Select)
	}
	latency := time.Since(start)
	selJSON, err := json.Marshal(sel)
	if err != nil {
		return nil, fmt.Errorf("starting session: encoding the selection: %w", err)
	}
	names := sel.Names()
	s := &Session{
		m:   m,
		sel: sel,
		state: store.Session{
			ID: o.ID, Task: task,
			Selected: names, Exposed: slices.Clone(names),
			MaxIterations: o.MaxIterations,
			Selection:     selJSON,
			CreatedAt:     begin, UpdatedAt: begin,
		},
	}
	if o.Plan != nil {
		s.state.PlanGoal, s.state.PlanTask = o.Plan.Goal, o.Plan.TaskID
	}
	rec := trace.Record{
		SessionID: o.ID, Kind: trace.KindSelect, At: begin, Task: task,
		CapabilityReason: sel.Reason,
		Tokens:           trace.Tokens{Exposed: sel.Tokens.Exposed, Full: sel.Tokens.Full, Format: string(sel.Tokens.Format)},
		Latency:          latency,
		Degraded:         sel.Degraded,
	}
	if sel.Degraded {
		f := trace.Failure{Tier: trace.TierRank, Message: sel.Failure}
		rec.Failures = append(rec.Failures, f)
		s.failures = append(s.failures, f)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fill(&rec, &s.state)
	if m.st == nil {
		return s, nil
	}
	s.pending = []trace.Record{rec}
	if planRec != nil {
		planRec.Latency = latency
		s.fill(planRec, &s.state)
		s.pending = []trace.Record{*planRec, rec}
	}
	if _, err := s.save(ctx, false, true); err != nil {
		if errors.Is(err, store.ErrExists) {
			return nil, fmt.Errorf("starting session %s: %w", o.ID, err)
		}
		if !m.o.KeepInMemory {
			return nil, fmt.Errorf("starting session %s: %w: %w", o.ID, ErrNotStored, err)
		}
		s.degrade(ctx, err)
	}
	return s, nil
}

// ErrNotStored is the error of a [Manager.Start] the store refused (and
// [Options.KeepInMemory] is off): nothing was started.
var ErrNotStored = errors.New("the session store failed, so no session was started")

// Resume rebuilds a stored session: exactly the exposed set it had, its
// iterations and budget. Names no longer in the catalog are reported in
// [Session.Missing] and in a resume trace record, and kept.
func (m *Manager) Resume(ctx context.Context, id string) (*Session, error) {
	ctx, span := telemetry.Start(ctx, telemetry.SpanSessionResume, oteltrace.WithAttributes(telemetry.SessionID.String(id)))
	s, err := m.load(ctx, id, true)
	telemetry.End(span, err)
	return s, err
}

// Load is Resume without the resume record, for a process that handles
// one event of a run and exits (the CLI's session find and call).
func (m *Manager) Load(ctx context.Context, id string) (*Session, error) {
	return m.load(ctx, id, false)
}

func (m *Manager) load(ctx context.Context, id string, record bool) (*Session, error) {
	begin := m.o.Now()
	start := time.Now() // latency by the wall clock, whatever Now is
	var st *store.Session
	var err error
	if m.st == nil {
		err = store.ErrNotFound
	} else {
		st, err = m.st.Session(ctx, id)
	}
	if err != nil {
		m.mu.Lock()
		o := m.orphans[id]
		m.mu.Unlock()
		if o != nil {
			return o, nil
		}
		return nil, fmt.Errorf("resuming session %s: %w", id, err)
	}
	s := &Session{m: m, state: *st, persisted: true}
	if len(st.Selection) > 0 {
		var sel policy.Selection
		if err := json.Unmarshal(st.Selection, &sel); err != nil {
			// Only explanations are lost; the exposed set is intact.
			s.failures = append(s.failures, trace.Failure{Tier: trace.TierStore, Message: "reading the stored selection: " + err.Error()})
		} else {
			s.sel = &sel
		}
	}
	cat := m.sel.Catalog()
	for _, n := range st.Exposed {
		if _, ok := cat.Lookup(n); !ok && n != policy.HatchName {
			s.missing = append(s.missing, n)
		}
	}
	var f *trace.Failure
	reason := fmt.Sprintf("resumed with %d exposed tools, all in the catalog", len(st.Exposed))
	if len(s.missing) > 0 {
		f = &trace.Failure{Tier: trace.TierCatalog, Message: fmt.Sprintf("%d exposed tool(s) no longer in the catalog, kept and refused on call: %s",
			len(s.missing), strings.Join(s.missing, ", "))}
		s.failures = append(s.failures, *f)
		reason = fmt.Sprintf("resumed with %d exposed tools; %d missing from the current catalog", len(st.Exposed), len(s.missing))
	}
	if st.PlanTask != "" {
		reason += fmt.Sprintf("; started from task %s of the plan %q", st.PlanTask, st.PlanGoal)
	}
	if !record {
		return s, nil
	}
	rec := trace.Record{SessionID: id, Kind: trace.KindResume, At: begin, Task: st.Task, CapabilityReason: reason}
	if f != nil {
		rec.Failures = append(rec.Failures, *f)
	}
	rec.Latency = time.Since(start)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fill(&rec, &s.state)
	s.appendTrace(ctx, rec)
	return s, nil
}

// Session is one agent run. It is safe for concurrent use; its methods
// run one at a time.
type Session struct {
	m   *Manager
	sel *policy.Selection

	mu sync.Mutex
	// state is the session as this process knows it; state.Version is the
	// version last read from or written to the store.
	state store.Session
	// persisted is set once the store holds the session.
	persisted bool
	// unsaved are the changes applied to state but not yet stored, in
	// order; they are re-applied on a fresh read after a conflict.
	unsaved []change
	// pending are trace records not yet stored.
	pending  []trace.Record
	inMemory bool
	failures []trace.Failure
	missing  []string
	// last is the newest record stored.
	last trace.Record
}

// change applies one event to a session's state. rec is the event's
// record, for the change to complete (the tools a find added); it is nil
// when the event already happened and is re-applied after a conflict,
// and then the change must not be refused.
type change func(st *store.Session, rec *trace.Record) error

// maxConflicts bounds the re-read and re-apply rounds of one write.
const maxConflicts = 32

// commit applies c to the state and stores it with rec (and any pending
// records). It returns rec as recorded, and c's refusal if any. A store
// failure is not an error: the change is kept in memory, the failure
// recorded. s.mu must be held.
func (s *Session) commit(ctx context.Context, c change, rec trace.Record) (trace.Record, error) {
	next := s.state.Clone()
	if err := c(next, &rec); err != nil {
		return rec, err
	}
	next.UpdatedAt = s.m.o.Now()
	s.fill(&rec, next)
	s.state = *next
	if s.m.st == nil {
		return rec, nil
	}
	s.unsaved = append(s.unsaved, c)
	s.pending = append(s.pending, rec)
	refused, err := s.save(ctx, true, false)
	if refused != nil {
		return rec, refused
	}
	if err != nil {
		s.degrade(ctx, err)
		return s.pending[len(s.pending)-1], nil
	}
	return s.last, nil
}

// save stores the state with the pending records. On a conflict it
// re-reads the stored state and re-applies the unsaved changes; with
// checkLast the newest is applied as new, so it may be refused (its
// record is then dropped and the refusal returned). With exclusive, a
// create that finds the ID taken fails with store.ErrExists instead.
// s.mu must be held.
func (s *Session) save(ctx context.Context, checkLast, exclusive bool) (refused, err error) {
	next := s.state.Clone()
	for round := 0; ; round++ {
		if s.persisted {
			err = s.m.st.UpdateSession(ctx, next, s.pending...)
		} else {
			err = s.m.st.CreateSession(ctx, next, s.pending...)
			if exclusive && errors.Is(err, store.ErrExists) {
				return nil, err
			}
		}
		if err == nil {
			if n := len(s.pending); n > 0 {
				s.last = s.pending[n-1]
			}
			s.state, s.persisted, s.unsaved, s.pending, s.inMemory = *next, true, nil, nil, false
			s.m.adopt(s)
			return nil, nil
		}
		if round >= maxConflicts || !(errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrExists)) {
			return nil, err
		}
		// Another writer got there first: re-apply our changes to its state.
		fresh, gerr := s.m.st.Session(ctx, next.ID)
		if gerr != nil {
			return nil, gerr
		}
		s.persisted = true
		next = fresh.Clone()
		for i, u := range s.unsaved {
			var rec *trace.Record
			if checkLast && i == len(s.unsaved)-1 {
				rec = &s.pending[len(s.pending)-1]
			}
			if err := u(next, rec); err != nil {
				s.unsaved = s.unsaved[:i]
				s.pending = s.pending[:len(s.pending)-1]
				s.state = *next
				return err, nil
			}
		}
		next.UpdatedAt = s.m.o.Now()
		if checkLast {
			s.fill(&s.pending[len(s.pending)-1], next)
		}
	}
}

// degrade records a store failure on the newest pending record and keeps
// the session in memory. s.mu must be held.
func (s *Session) degrade(ctx context.Context, err error) {
	f := trace.Failure{Tier: trace.TierStore, Message: err.Error()}
	if n := len(s.pending); n > 0 {
		s.pending[n-1].Failures = append(s.pending[n-1].Failures, f)
		s.pending[n-1].Degraded = true
	}
	s.failures = append(s.failures, f)
	s.inMemory = true
	s.m.orphan(s)
	s.m.o.Logger.ErrorContext(ctx, "session kept in memory: store failed", "session", s.state.ID, "failure", err)
}

// appendTrace stores rec with any pending records, keeping them pending if
// the store fails. s.mu must be held.
func (s *Session) appendTrace(ctx context.Context, rec trace.Record) trace.Record {
	if s.m.st == nil {
		return rec
	}
	if !s.persisted || len(s.unsaved) > 0 {
		// The session itself is not stored yet; the record waits for it.
		s.pending = append(s.pending, rec)
		return rec
	}
	recs := append(slices.Clone(s.pending), rec)
	if err := s.m.st.AppendTraces(ctx, recs...); err != nil {
		f := trace.Failure{Tier: trace.TierStore, Message: err.Error()}
		rec.Failures = append(rec.Failures, f)
		rec.Degraded = true
		s.failures = append(s.failures, f)
		s.pending = append(s.pending, rec)
		s.inMemory = true
		s.m.o.Logger.ErrorContext(ctx, "trace kept in memory: store failed", "session", s.state.ID, "failure", err)
		return rec
	}
	s.pending = nil
	s.inMemory = false
	return rec
}

// fill sets the session fields of rec from st.
func (s *Session) fill(rec *trace.Record, st *store.Session) {
	rec.SessionID = st.ID
	rec.Task = st.Task
	rec.SelectedTools = slices.Clone(st.Exposed)
	rec.FindCapabilityCalls = st.FindCalls
	rec.Iteration = st.Iterations
	if rec.Kind == trace.KindSelect {
		return // the selection's own token counts
	}
	if tc, ok := s.m.sel.(tokenCounter); ok {
		f := payload.OpenAI
		if s.m.o.Select != nil && s.m.o.Select.Format != "" {
			f = s.m.o.Select.Format
		}
		rec.Tokens = trace.Tokens{Exposed: tc.ExposedTokens(st.Exposed, f), Full: tc.FullTokens(f), Format: string(f)}
	}
}

func (m *Manager) orphan(s *Session) {
	m.mu.Lock()
	m.orphans[s.state.ID] = s
	m.mu.Unlock()
}

func (m *Manager) adopt(s *Session) {
	m.mu.Lock()
	if m.orphans[s.state.ID] == s {
		delete(m.orphans, s.state.ID)
	}
	m.mu.Unlock()
}

// ID returns the session's ID.
func (s *Session) ID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state.ID
}

// Plan returns the goal of the plan and the id of its task the session
// was started from; both empty for a session started from a task alone.
func (s *Session) Plan() (goal, taskID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state.PlanGoal, s.state.PlanTask
}

// Task returns the session's task.
func (s *Session) Task() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state.Task
}

// Exposed returns the tools the model may call, in order: the selection,
// then each tool found. The escape hatch, find_capability, is always
// exposed in addition.
func (s *Session) Exposed() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.state.Exposed)
}

// Selected returns the tools the initial selection exposed.
func (s *Session) Selected() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.state.Selected)
}

// Selection returns the initial selection with its reasons, or nil if it
// could not be read back from the store.
func (s *Session) Selection() *policy.Selection { return s.sel }

// Iterations returns the iterations used and the budget.
func (s *Session) Iterations() (used, budget int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state.Iterations, s.state.MaxIterations
}

// FindCalls returns how many times find_capability was called.
func (s *Session) FindCalls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state.FindCalls
}

// Missing returns the exposed tools that were not in the catalog when the
// session was resumed.
func (s *Session) Missing() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.missing)
}

// Failures returns what failed in this process's use of the session, each
// with its tier.
func (s *Session) Failures() []trace.Failure {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.failures)
}

// InMemory reports whether the session has changes or records the store
// has not accepted yet.
func (s *Session) InMemory() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inMemory
}

// Pending returns the trace records not yet stored.
func (s *Session) Pending() []trace.Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.pending)
}

// State returns a copy of the session's state as it is (or will be)
// stored.
func (s *Session) State() *store.Session {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state.Clone()
}

// FindResult answers a find_capability call made in a session.
type FindResult struct {
	*policy.FindResult
	// Added are the tools this call newly exposed, in order ([] when
	// none: never null in JSON).
	Added []string `json:"added"`
	// Exposed are the tools exposed after the call ([] when none).
	Exposed       []string `json:"exposed_tools"`
	Iterations    int      `json:"iterations"`
	MaxIterations int      `json:"max_iterations"`
}

// Find answers a find_capability call: it searches the catalog for query
// (k results; k <= 0: the manager's FindK), exposes what it found for the
// rest of the run and uses one iteration. It returns ErrBudgetExhausted
// when no iteration is left. A ranking failure finds nothing and is
// recorded; it is not an error.
func (s *Session) Find(ctx context.Context, query string, k int) (*FindResult, error) {
	ctx, span := telemetry.Start(ctx, telemetry.SpanSessionFind, oteltrace.WithAttributes(telemetry.SessionID.String(s.ID())))
	res, err := s.find(ctx, query, k)
	if res != nil && span.IsRecording() {
		span.SetAttributes(telemetry.MatchCount.Int(len(res.Matches)), telemetry.Matches.StringSlice(res.Names()))
	}
	telemetry.End(span, err)
	return res, err
}

func (s *Session) find(ctx context.Context, query string, k int) (*FindResult, error) {
	if strings.TrimSpace(query) == "" {
		return nil, fmt.Errorf("finding in session %s: empty query", s.ID())
	}
	if k <= 0 {
		k = s.m.o.FindK
	}
	begin := s.m.o.Now()
	start := time.Now() // latency by the wall clock, whatever Now is
	s.mu.Lock()
	defer s.mu.Unlock()
	rec := trace.Record{Kind: trace.KindFind, At: begin, Query: query}
	if s.state.Iterations >= s.state.MaxIterations {
		return nil, s.refuse(ctx, rec)
	}
	res := s.m.sel.Find(ctx, query, k, s.m.o.Select)
	apply := func(st *store.Session, rec *trace.Record) error {
		if rec != nil && st.Iterations >= st.MaxIterations {
			return budgetError(st)
		}
		st.Iterations++
		st.FindCalls++
		var added []string
		for _, n := range res.Names() {
			if n != policy.HatchName && !slices.Contains(st.Exposed, n) {
				st.Exposed = append(st.Exposed, n)
				added = append(added, n)
			}
		}
		if rec != nil {
			rec.Found = added
		}
		return nil
	}
	rec.CapabilityReason = res.Reason
	if res.Degraded {
		f := trace.Failure{Tier: trace.TierRank, Message: res.Failure}
		rec.Failures = append(rec.Failures, f)
		rec.Degraded = true
		s.failures = append(s.failures, f)
	}
	rec.Latency = time.Since(start)
	rec, err := s.commit(ctx, apply, rec)
	if err != nil {
		if errors.Is(err, ErrBudgetExhausted) {
			return nil, s.refuse(ctx, rec)
		}
		return nil, err
	}
	return &FindResult{FindResult: res, Added: append([]string{}, rec.Found...), Exposed: append([]string{}, s.state.Exposed...),
		Iterations: s.state.Iterations, MaxIterations: s.state.MaxIterations}, nil
}

func budgetError(st *store.Session) error {
	return fmt.Errorf("session %s: %d of %d iterations used: %w", st.ID, st.Iterations, st.MaxIterations, ErrBudgetExhausted)
}

// refuse records an event refused for want of iterations and returns the
// error. s.mu must be held.
func (s *Session) refuse(ctx context.Context, rec trace.Record) error {
	err := budgetError(&s.state)
	rec.Failures = append(rec.Failures, trace.Failure{Tier: trace.TierBudget, Message: err.Error()})
	s.fill(&rec, &s.state)
	s.appendTrace(ctx, rec)
	return err
}

// Call records a model's call of tool name: it uses one iteration and
// checks the tool is exposed, returning CheckCall's error if not (the
// iteration is used either way: the model spent its turn). It returns
// ErrBudgetExhausted when no iteration is left. capbroker does not run the
// tool; the caller does when Call returns nil.
func (s *Session) Call(ctx context.Context, name string) error {
	ctx, span := telemetry.Start(ctx, telemetry.SpanSessionCall,
		oteltrace.WithAttributes(telemetry.SessionID.String(s.ID()), telemetry.GenAIToolName.String(name)))
	err := s.call(ctx, name)
	telemetry.End(span, err)
	return err
}

func (s *Session) call(ctx context.Context, name string) error {
	if name == policy.HatchName {
		return fmt.Errorf("%s is answered by Session.Find, not Call", policy.HatchName)
	}
	begin := s.m.o.Now()
	start := time.Now() // latency by the wall clock, whatever Now is
	s.mu.Lock()
	defer s.mu.Unlock()
	rec := trace.Record{Kind: trace.KindCall, At: begin, Tool: name}
	if c, ok := s.m.sel.Catalog().Lookup(name); ok {
		rec.ToolDigest = c.Digest // so learning can tell a card that changed since
	}
	if s.state.Iterations >= s.state.MaxIterations {
		return s.refuse(ctx, rec)
	}
	callErr := s.check(name)
	if callErr != nil {
		rec.Failures = append(rec.Failures, trace.Failure{Tier: trace.TierExposure, Message: callErr.Error()})
	}
	rec.Latency = time.Since(start)
	_, err := s.commit(ctx, func(st *store.Session, rec *trace.Record) error {
		if rec != nil && st.Iterations >= st.MaxIterations {
			return budgetError(st)
		}
		st.Iterations++
		return nil
	}, rec)
	if err != nil {
		if errors.Is(err, ErrBudgetExhausted) {
			return s.refuse(ctx, rec)
		}
		return err
	}
	return callErr
}

// Record appends a record of another event of the run (a route, a plan)
// to the session's trace. Its session fields are filled in.
func (s *Session) Record(ctx context.Context, rec trace.Record) (trace.Record, error) {
	if rec.At.IsZero() {
		rec.At = s.m.o.Now()
	}
	if err := rec.Validate(); err != nil {
		return rec, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fill(&rec, &s.state)
	return s.appendTrace(ctx, rec), nil
}

// Flush retries storing what the store refused earlier (the session's
// changes and pending records). It returns nil once nothing is left in
// memory.
func (s *Session) Flush(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m.st == nil || (len(s.pending) == 0 && len(s.unsaved) == 0 && s.persisted) {
		s.inMemory = false
		return nil
	}
	if len(s.unsaved) == 0 && s.persisted {
		if err := s.m.st.AppendTraces(ctx, s.pending...); err != nil {
			return fmt.Errorf("flushing session %s: %w", s.state.ID, err)
		}
		s.pending, s.inMemory = nil, false
		s.m.adopt(s)
		return nil
	}
	if _, err := s.save(ctx, false, false); err != nil {
		return fmt.Errorf("flushing session %s: %w", s.state.ID, err)
	}
	return nil
}
