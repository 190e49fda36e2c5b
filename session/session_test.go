package session_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/policy"
	"github.com/capbroker/capbroker/session"
	"github.com/capbroker/capbroker/store"
	"github.com/capbroker/capbroker/trace"
)

const codingTask = "fix the failing test in parser.go"

// quiet keeps the expected store-failure logs out of the test output.
var quiet = &session.Options{Logger: slog.New(slog.DiscardHandler)}

// stored reads a session back from the store.
func stored(t *testing.T, st store.Store, id string) *store.Session {
	t.Helper()
	s, err := st.Session(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func kinds(recs []trace.Record) []trace.Kind {
	var ks []trace.Kind
	for _, r := range recs {
		ks = append(ks, r.Kind)
	}
	return ks
}

// TestRun walks one run through every operation, on each store, and
// checks after every step that the store holds what the session says.
func TestRun(t *testing.T) {
	for _, sc := range stores {
		t.Run(sc.name, func(t *testing.T) {
			ctx := context.Background()
			st := sc.open(t)
			m := session.NewManager(newSelector(t), st, &session.Options{MaxIterations: 10})
			s, err := m.Start(ctx, codingTask, nil)
			if err != nil {
				t.Fatal(err)
			}
			selected := s.Exposed()
			for _, floor := range policy.DefaultFloors[policy.Coding] {
				if !slices.Contains(selected, floor) {
					t.Errorf("coding floor tool %s not exposed: %v", floor, selected)
				}
			}
			if !slices.Contains(selected, "run_tests") {
				t.Errorf("run_tests not selected for %q: %v", codingTask, selected)
			}
			check := func(step string) {
				t.Helper()
				got := stored(t, st, s.ID())
				if d := cmp.Diff(s.Exposed(), got.Exposed); d != "" {
					t.Errorf("%s: stored exposed set differs (-session +store):\n%s", step, d)
				}
				used, budget := s.Iterations()
				if got.Iterations != used || got.MaxIterations != budget || got.FindCalls != s.FindCalls() {
					t.Errorf("%s: stored %d/%d iterations, %d finds; session %d/%d, %d", step,
						got.Iterations, got.MaxIterations, got.FindCalls, used, budget, s.FindCalls())
				}
			}
			check("start")

			// The model needs git blame: not exposed, so the call is refused
			// with a pointer to the hatch.
			err = s.CheckCall("git_blame")
			var ne *session.NotExposedError
			if !errors.As(err, &ne) || !ne.InCatalog || !errors.Is(err, session.ErrNotExposed) {
				t.Fatalf("CheckCall(git_blame) = %v, want a NotExposedError for a catalog tool", err)
			}
			if !strings.Contains(err.Error(), "find_capability") {
				t.Errorf("the refusal does not name find_capability: %v", err)
			}

			res, err := s.Find(ctx, "who last changed a line of a file", 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Matches) == 0 || res.Matches[0].Name != "git_blame" || len(res.Matches[0].InputSchema) == 0 {
				t.Fatalf("find: %+v, want git_blame first, with its schema", res.Matches)
			}
			if !slices.Contains(res.Added, "git_blame") || slices.Contains(res.Added, "read_file") {
				t.Errorf("added %v: want git_blame, and not the already exposed read_file", res.Added)
			}
			if d := cmp.Diff(append(slices.Clone(selected), res.Added...), s.Exposed()); d != "" {
				t.Errorf("exposed after find is not selection + found (-want +got):\n%s", d)
			}
			check("find")
			if err := s.CheckCall("git_blame"); err != nil {
				t.Errorf("git_blame refused after the find exposed it: %v", err)
			}

			// The same find again exposes nothing new but still uses an iteration.
			again, err := s.Find(ctx, "who last changed a line of a file", 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(again.Added) != 0 || again.Iterations != 2 {
				t.Errorf("repeated find added %v at iteration %d, want nothing at 2", again.Added, again.Iterations)
			}
			check("find again")

			if err := s.Call(ctx, "git_blame"); err != nil {
				t.Errorf("Call(git_blame): %v", err)
			}
			check("call")
			err = s.Call(ctx, "reed_file")
			if !errors.As(err, &ne) || ne.InCatalog || len(ne.Suggestions) == 0 || ne.Suggestions[0].Name != "read_file" || !ne.Suggestions[0].Exposed {
				t.Errorf("Call(reed_file) = %v, want a refusal suggesting the exposed read_file", err)
			}
			check("refused call")
			if used, _ := s.Iterations(); used != 4 {
				t.Errorf("%d iterations used, want 4 (two finds, two calls)", used)
			}

			recs, err := st.Traces(ctx, &store.TraceQuery{SessionID: s.ID()})
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff([]trace.Kind{trace.KindSelect, trace.KindFind, trace.KindFind, trace.KindCall, trace.KindCall}, kinds(recs)); d != "" {
				t.Fatalf("trace kinds (-want +got):\n%s", d)
			}
			sel, find, call := recs[0], recs[1], recs[4]
			if d := cmp.Diff(selected, sel.SelectedTools); d != "" || sel.CapabilityReason == "" || sel.Tokens.Exposed == 0 || sel.Tokens.Full <= sel.Tokens.Exposed {
				t.Errorf("select record %+v (selected diff %s)", sel, d)
			}
			if find.FindCapabilityCalls != 1 || recs[2].FindCapabilityCalls != 2 || find.Query == "" || !slices.Contains(find.Found, "git_blame") {
				t.Errorf("find record %+v", find)
			}
			if find.Tokens.Exposed <= sel.Tokens.Exposed || find.Tokens.Full != sel.Tokens.Full {
				t.Errorf("find tokens %+v, select tokens %+v: exposing more must cost more", find.Tokens, sel.Tokens)
			}
			if call.Tool != "reed_file" || !call.Failed(trace.TierExposure) || call.Iteration != 4 {
				t.Errorf("refused call record %+v", call)
			}
			if recs[3].Failed("") {
				t.Errorf("the good call recorded a failure: %+v", recs[3].Failures)
			}
		})
	}
}

func TestBudget(t *testing.T) {
	ctx := context.Background()
	st := newSQLite(t)
	m := session.NewManager(newSelector(t), st, nil)
	s, err := m.Start(ctx, codingTask, &session.StartOptions{MaxIterations: 3})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Find(ctx, "open a pull request", 0); err != nil {
		t.Fatal(err)
	}
	if err := s.Call(ctx, "read_file"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Find(ctx, "post a message to slack", 0); err != nil {
		t.Fatal(err)
	}
	before := s.Exposed()
	if _, err := s.Find(ctx, "calendar invite", 0); !errors.Is(err, session.ErrBudgetExhausted) {
		t.Fatalf("fourth iteration find: %v, want ErrBudgetExhausted", err)
	}
	if err := s.Call(ctx, "read_file"); !errors.Is(err, session.ErrBudgetExhausted) {
		t.Fatalf("fourth iteration call: %v, want ErrBudgetExhausted", err)
	}
	if d := cmp.Diff(before, s.Exposed()); d != "" {
		t.Errorf("a refused find exposed tools:\n%s", d)
	}
	got := stored(t, st, s.ID())
	if got.Iterations != 3 || got.FindCalls != 2 {
		t.Errorf("stored %d iterations, %d finds; want 3 and 2", got.Iterations, got.FindCalls)
	}
	recs, _ := st.Traces(ctx, &store.TraceQuery{SessionID: s.ID()})
	if n := len(recs); n != 6 || !recs[4].Failed(trace.TierBudget) || !recs[5].Failed(trace.TierBudget) {
		t.Errorf("want 6 records, the last two budget failures; got %d: %v", n, kinds(recs))
	}
}

// TestResume rebuilds a session in a new manager (a new process, as far
// as the store can tell) and checks it is exactly what was persisted.
func TestResume(t *testing.T) {
	for _, sc := range stores {
		t.Run(sc.name, func(t *testing.T) {
			ctx := context.Background()
			st := sc.open(t)
			s, err := session.NewManager(newSelector(t), st, nil).Start(ctx, codingTask, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, q := range []string{"open a pull request", "who last changed a line of a file"} {
				if _, err := s.Find(ctx, q, 2); err != nil {
					t.Fatal(err)
				}
			}
			want := s.State()

			r, err := session.NewManager(newSelector(t), st, nil).Resume(ctx, s.ID())
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(want, r.State()); d != "" {
				t.Errorf("resumed state differs (-before +resumed):\n%s", d)
			}
			if len(r.Missing()) != 0 || r.Selection() == nil || r.Selection().Task != codingTask {
				t.Errorf("missing %v, selection %+v", r.Missing(), r.Selection())
			}
			// The resumed run goes on where it was.
			if _, err := r.Find(ctx, "post a message to slack", 1); err != nil {
				t.Fatal(err)
			}
			if used, _ := r.Iterations(); used != 3 {
				t.Errorf("resumed run at iteration %d, want 3", used)
			}
			if _, err := session.NewManager(newSelector(t), st, nil).Resume(ctx, "no-such-session"); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("resuming an unknown id: %v, want store.ErrNotFound", err)
			}
		})
	}
}

// TestResumeReportsMissing resumes after the catalog lost a tool the
// session had found: it is reported and kept, and a call to it explains.
func TestResumeReportsMissing(t *testing.T) {
	ctx := context.Background()
	st := newSQLite(t)
	s, err := session.NewManager(newSelector(t), st, nil).Start(ctx, codingTask, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Find(ctx, "who last changed a line of a file", 1); err != nil {
		t.Fatal(err)
	}
	want := s.Exposed()
	if !slices.Contains(want, "git_blame") {
		t.Fatalf("git_blame not found: %v", want)
	}

	r, err := session.NewManager(newSelector(t, "git_blame"), st, nil).Resume(ctx, s.ID())
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, r.Exposed()); d != "" {
		t.Errorf("resume changed the exposed set (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"git_blame"}, r.Missing()); d != "" {
		t.Errorf("missing (-want +got):\n%s", d)
	}
	err = r.CheckCall("git_blame")
	var ne *session.NotExposedError
	if !errors.As(err, &ne) || !ne.Gone || !strings.Contains(err.Error(), "no longer in the catalog") {
		t.Errorf("CheckCall(git_blame) = %v, want a 'no longer in the catalog' refusal", err)
	}
	recs, _ := st.Traces(ctx, &store.TraceQuery{SessionID: s.ID(), Kind: trace.KindResume})
	if len(recs) != 1 || !recs[0].Failed(trace.TierCatalog) || !strings.Contains(recs[0].Failures[0].Message, "git_blame") {
		t.Errorf("resume records %+v, want one naming git_blame with a catalog failure", recs)
	}
}

// TestStoreFailureDegrades breaks the store mid-run: the run goes on in
// memory, the failure is recorded with its tier, and once the store is
// back nothing done meanwhile is lost.
func TestStoreFailureDegrades(t *testing.T) {
	ctx := context.Background()
	real := newSQLite(t)
	st := &flaky{Store: real}
	m := session.NewManager(newSelector(t), st, quiet)
	s, err := m.Start(ctx, codingTask, nil)
	if err != nil {
		t.Fatal(err)
	}
	st.broken.Store(true)
	res, err := s.Find(ctx, "open a pull request", 0)
	if err != nil {
		t.Fatalf("a store failure stopped the find: %v", err)
	}
	if len(res.Added) == 0 || !s.InMemory() {
		t.Fatalf("added %v, in memory %v", res.Added, s.InMemory())
	}
	fs := s.Failures()
	if len(fs) != 1 || fs[0].Tier != trace.TierStore || !strings.Contains(fs[0].Message, "injected") {
		t.Errorf("failures %+v, want one store failure", fs)
	}
	if err := s.Call(ctx, "github_create_pull_request"); err != nil {
		t.Errorf("call of a tool found while the store was down: %v", err)
	}
	// Resuming from this process still works: the manager holds it.
	if r, err := m.Resume(ctx, s.ID()); err != nil || r != s {
		t.Errorf("Resume while the store is down = %v, %v; want the live session", r, err)
	}
	if err := s.Flush(ctx); err == nil {
		t.Error("Flush succeeded with the store down")
	}

	st.broken.Store(false)
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if s.InMemory() || len(s.Pending()) != 0 {
		t.Errorf("after flush: in memory %v, %d pending", s.InMemory(), len(s.Pending()))
	}
	got := stored(t, real, s.ID())
	if d := cmp.Diff(s.Exposed(), got.Exposed); d != "" || got.Iterations != 2 {
		t.Errorf("stored after recovery: iterations %d, exposed diff:\n%s", got.Iterations, d)
	}
	recs, _ := real.Traces(ctx, &store.TraceQuery{SessionID: s.ID()})
	if d := cmp.Diff([]trace.Kind{trace.KindSelect, trace.KindFind, trace.KindCall}, kinds(recs)); d != "" {
		t.Fatalf("records after recovery (-want +got):\n%s", d)
	}
	if !recs[1].Failed(trace.TierStore) || !recs[1].Degraded {
		t.Errorf("the find record does not carry the store failure: %+v", recs[1])
	}
}

// TestStoreDownAtStart: by default a session the store refuses is not
// started (nothing is acknowledged that was not stored); before, Start
// answered with a session kept in memory, lost on restart.
func TestStoreDownAtStart(t *testing.T) {
	ctx := context.Background()
	st := &flaky{Store: newSQLite(t)}
	st.broken.Store(true)
	m := session.NewManager(newSelector(t), st, quiet)
	s, err := m.Start(ctx, codingTask, nil)
	if !errors.Is(err, session.ErrNotStored) || s != nil || !strings.Contains(err.Error(), "injected") {
		t.Fatalf("Start with the store down = %v, %v; want ErrNotStored with the store's error", s, err)
	}
	st.broken.Store(false)
	if list, _ := st.Sessions(ctx, nil); len(list) != 0 {
		t.Errorf("a refused start left %d sessions", len(list))
	}
}

// TestStoreDownAtStartKeptInMemory is the opt-in: the session goes on in
// memory and is stored with everything so far by the next write that
// succeeds.
func TestStoreDownAtStartKeptInMemory(t *testing.T) {
	ctx := context.Background()
	st := &flaky{Store: newSQLite(t)}
	st.broken.Store(true)
	opts := *quiet
	opts.KeepInMemory = true
	m := session.NewManager(newSelector(t), st, &opts)
	s, err := m.Start(ctx, codingTask, nil)
	if err != nil {
		t.Fatalf("a store failure stopped the start: %v", err)
	}
	if !s.InMemory() || len(s.Exposed()) == 0 {
		t.Fatalf("in memory %v, exposed %v", s.InMemory(), s.Exposed())
	}
	if _, err := s.Find(ctx, "open a pull request", 1); err != nil {
		t.Fatal(err)
	}
	st.broken.Store(false)
	// The next change creates the session with everything so far.
	if err := s.Call(ctx, "read_file"); err != nil {
		t.Fatal(err)
	}
	got := stored(t, st, s.ID())
	if d := cmp.Diff(s.Exposed(), got.Exposed); d != "" || got.Iterations != 2 || got.Version != 1 {
		t.Errorf("stored version %d, %d iterations; exposed diff:\n%s", got.Version, got.Iterations, d)
	}
	recs, _ := st.Traces(ctx, &store.TraceQuery{SessionID: s.ID()})
	if d := cmp.Diff([]trace.Kind{trace.KindSelect, trace.KindFind, trace.KindCall}, kinds(recs)); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if !recs[0].Failed(trace.TierStore) {
		t.Errorf("the select record lacks the store failure: %+v", recs[0])
	}
}

func TestRankingFailureDegrades(t *testing.T) {
	ctx := context.Background()
	cat, _ := card.NewCatalog(testCards(t))
	sel, err := policy.NewSelector(cat, failingRanker{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	st := newSQLite(t)
	s, err := session.NewManager(sel, st, nil).Start(ctx, codingTask, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Exposed()) != cat.Len() {
		t.Errorf("degraded selection exposes %d tools, want the full %d", len(s.Exposed()), cat.Len())
	}
	res, err := s.Find(ctx, "open a pull request", 0)
	if err != nil || len(res.Matches) != 0 || !res.Degraded {
		t.Errorf("find with a broken ranker: %+v, %v", res, err)
	}
	recs, _ := st.Traces(ctx, &store.TraceQuery{SessionID: s.ID()})
	if len(recs) != 2 || !recs[0].Failed(trace.TierRank) || !recs[0].Degraded || !recs[1].Failed(trace.TierRank) {
		t.Errorf("records %+v, want select and find with rank failures", recs)
	}
}

// TestSharedSession has two managers (two instances sharing a store)
// change one session with stale views: both changes survive.
func TestSharedSession(t *testing.T) {
	for _, sc := range stores {
		t.Run(sc.name, func(t *testing.T) {
			ctx := context.Background()
			st := sc.open(t)
			a, err := session.NewManager(newSelector(t), st, nil).Start(ctx, codingTask, &session.StartOptions{MaxIterations: 3})
			if err != nil {
				t.Fatal(err)
			}
			b, err := session.NewManager(newSelector(t), st, nil).Resume(ctx, a.ID())
			if err != nil {
				t.Fatal(err)
			}
			ra, err := a.Find(ctx, "open a pull request", 1)
			if err != nil {
				t.Fatal(err)
			}
			rb, err := b.Find(ctx, "post a message to slack", 1) // b's version is stale
			if err != nil {
				t.Fatal(err)
			}
			got := stored(t, st, a.ID())
			want := append(append(a.Selected(), ra.Added...), rb.Added...)
			if d := cmp.Diff(want, got.Exposed); d != "" {
				t.Errorf("stored exposed set (-want +got):\n%s", d)
			}
			if got.Iterations != 2 || got.FindCalls != 2 {
				t.Errorf("stored %d iterations, %d finds; want 2, 2", got.Iterations, got.FindCalls)
			}
			if d := cmp.Diff(got.Exposed, b.Exposed()); d != "" {
				t.Errorf("b's view after the merge (-store +b):\n%s", d)
			}
			// a is now stale: its next call lands on top of b's find, and
			// the budget counts both instances' iterations.
			if err := a.Call(ctx, "read_file"); err != nil {
				t.Fatal(err)
			}
			if err := b.Call(ctx, "read_file"); !errors.Is(err, session.ErrBudgetExhausted) {
				t.Errorf("fourth iteration across instances: %v, want ErrBudgetExhausted", err)
			}
			if got := stored(t, st, a.ID()); got.Iterations != 3 {
				t.Errorf("stored %d iterations, want 3", got.Iterations)
			}
		})
	}
}

func TestStartErrors(t *testing.T) {
	ctx := context.Background()
	m := session.NewManager(newSelector(t), newSQLite(t), nil)
	if _, err := m.Start(ctx, "  ", nil); err == nil {
		t.Error("Start with an empty task succeeded")
	}
	if _, err := m.Start(ctx, codingTask, &session.StartOptions{ID: "mine"}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Start(ctx, "another task", &session.StartOptions{ID: "mine"}); !errors.Is(err, store.ErrExists) {
		t.Errorf("Start with a taken id: %v, want store.ErrExists", err)
	}
}

func TestInMemoryManager(t *testing.T) {
	ctx := context.Background()
	m := session.NewManager(newSelector(t), nil, nil)
	s, err := m.Start(ctx, codingTask, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Find(ctx, "open a pull request", 1); err != nil {
		t.Fatal(err)
	}
	if s.InMemory() || len(s.Failures()) != 0 {
		t.Errorf("a manager without a store reports failures: %v", s.Failures())
	}
	if used, _ := s.Iterations(); used != 1 {
		t.Errorf("%d iterations", used)
	}
}

func TestRecordRouteAndPlan(t *testing.T) {
	ctx := context.Background()
	st := newSQLite(t)
	s, err := session.NewManager(newSelector(t), st, nil).Start(ctx, codingTask, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Record(ctx, trace.Record{Kind: trace.KindRoute, CapabilityReason: "code-review -> pr-reviewer", Detail: []byte(`{"agent":"pr-reviewer"}`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Record(ctx, trace.Record{Kind: "dance"}); err == nil {
		t.Error("Record accepted an unknown kind")
	}
	recs, _ := st.Traces(ctx, &store.TraceQuery{SessionID: s.ID(), Kind: trace.KindRoute})
	if len(recs) != 1 || recs[0].Task != codingTask || len(recs[0].SelectedTools) == 0 {
		t.Errorf("route records %+v", recs)
	}
}

func TestCheckCallHatch(t *testing.T) {
	s, err := session.NewManager(newSelector(t), nil, nil).Start(context.Background(), codingTask, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CheckCall(policy.HatchName); err != nil {
		t.Errorf("the hatch is refused: %v", err)
	}
	if err := s.Call(context.Background(), policy.HatchName); err == nil {
		t.Error("Call(find_capability) succeeded; finds go through Find")
	}
}

func ExampleManager() {
	ctx := context.Background()
	m := session.NewManager(exampleSelector(), nil, nil)
	s, _ := m.Start(ctx, "fix the failing test in parser.go", nil)
	fmt.Println(slices.Contains(s.Exposed(), "git_blame"))
	fmt.Println(s.CheckCall("git_blame") != nil)
	res, _ := s.Find(ctx, "who last changed a line of a file", 1)
	fmt.Println(res.Added)
	fmt.Println(s.CheckCall("git_blame"))
	// Output:
	// false
	// true
	// [git_blame]
	// <nil>
}

func TestLoadRecordsNothing(t *testing.T) {
	ctx := context.Background()
	st := newSQLite(t)
	s, err := session.NewManager(newSelector(t), st, nil).Start(ctx, codingTask, nil)
	if err != nil {
		t.Fatal(err)
	}
	l, err := session.NewManager(newSelector(t, "run_tests"), st, nil).Load(ctx, s.ID())
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(s.State(), l.State()); d != "" || !slices.Equal(l.Missing(), []string{"run_tests"}) {
		t.Errorf("loaded state diff %s, missing %v", d, l.Missing())
	}
	recs, _ := st.Traces(ctx, &store.TraceQuery{SessionID: s.ID()})
	if len(recs) != 1 {
		t.Errorf("Load recorded %v", kinds(recs))
	}
}
