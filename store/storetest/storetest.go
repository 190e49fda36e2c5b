package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/capbroker/capbroker/store"
	"github.com/capbroker/capbroker/trace"
)

// Harness gives the suite what it needs from an implementation.
type Harness struct {
	// New returns a fresh, empty store; the suite closes it.
	New func(t testing.TB) store.Store
	// InsertRawTrace, if set, stores a trace row exactly as given (an old
	// version's JSON), bypassing encoding, to check old rows stay readable.
	InsertRawTrace func(t testing.TB, s store.Store, sessionID string, kind string, version int, at time.Time, data string)
}

// Run runs the suite.
func Run(t *testing.T, h Harness) {
	tests := []struct {
		name string
		fn   func(t *testing.T, h Harness)
	}{
		{"CreateAndRead", testCreateAndRead},
		{"CreateExisting", testCreateExisting},
		{"Update", testUpdate},
		{"UpdateConflict", testUpdateConflict},
		{"NotFound", testNotFound},
		{"Invalid", testInvalid},
		{"List", testList},
		{"Traces", testTraces},
		{"TraceFilters", testTraceFilters},
		{"OldTraceVersions", testOldTraceVersions},
		{"ConcurrentUpdates", testConcurrentUpdates},
		{"ConcurrentAppends", testConcurrentAppends},
		{"CloseTwice", testCloseTwice},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, h) })
	}
	runMCP(t, h)
	runShared(t, h)
}

func open(t *testing.T, h Harness) store.Store {
	t.Helper()
	s := h.New(t)
	t.Cleanup(func() { s.Close() })
	return s
}

var t0 = time.Date(2025, 3, 14, 9, 12, 31, 250_113_000, time.UTC)

// Sample returns a session with every field set.
func Sample(id string) *store.Session {
	return &store.Session{
		ID:            id,
		Task:          "send the weekly report to the team — «résumé» 週報",
		Selected:      []string{"gmail_send_message", "slack_post_message", "read_file"},
		Exposed:       []string{"gmail_send_message", "slack_post_message", "read_file"},
		Iterations:    0,
		MaxIterations: 40,
		Selection:     json.RawMessage(`{"task":"send the weekly report","tools":[{"name":"gmail_send_message"}]}`),
		PlanGoal:      "Ship the release — «notes» 発表",
		PlanTask:      "t2",
		CreatedAt:     t0,
		UpdatedAt:     t0,
	}
}

// Rec returns a trace record of kind k for session id.
func Rec(id string, k trace.Kind, i int) trace.Record {
	return trace.Record{
		Version: trace.Version, SessionID: id, Kind: k, At: t0.Add(time.Duration(i) * time.Millisecond),
		Task: "task " + id, Query: fmt.Sprintf("query %d", i), SelectedTools: []string{"a", fmt.Sprint("t", i)},
		CapabilityReason: "because", FindCapabilityCalls: i, Iteration: i,
		Tokens:  trace.Tokens{Exposed: 10 * i, Full: 1000, Format: "openai"},
		Latency: time.Duration(i) * time.Microsecond,
	}
}

func testCreateAndRead(t *testing.T, h Harness) {
	s := open(t, h)
	ctx := context.Background()
	in := Sample("s1")
	in.CreatedAt = in.CreatedAt.Add(400 * time.Nanosecond) // below the stored precision
	if err := s.CreateSession(ctx, in, Rec("s1", trace.KindSelect, 0)); err != nil {
		t.Fatal(err)
	}
	if in.Version != 1 {
		t.Errorf("version after create = %d, want 1", in.Version)
	}
	if !in.CreatedAt.Equal(t0) {
		t.Errorf("created_at not rounded to the microsecond: %v", in.CreatedAt)
	}
	got, err := s.Session(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(in, got); d != "" {
		t.Errorf("stored session differs (-want +got):\n%s", d)
	}
	recs, err := s.Traces(ctx, &store.TraceQuery{SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || recs[0].Kind != trace.KindSelect || recs[0].ID == 0 {
		t.Fatalf("traces = %+v, want the one select record with an ID", recs)
	}
	// Zero times are filled in; empty lists stay empty, not nil.
	bare := &store.Session{ID: "bare", Task: ""}
	if err := s.CreateSession(ctx, bare); err != nil {
		t.Fatal(err)
	}
	got, err = s.Session(ctx, "bare")
	if err != nil {
		t.Fatal(err)
	}
	if got.CreatedAt.IsZero() || !got.UpdatedAt.Equal(got.CreatedAt) || got.Exposed == nil || len(got.Exposed) != 0 || got.Selection != nil {
		t.Errorf("bare session read back as %+v", got)
	}
}

func testCreateExisting(t *testing.T, h Harness) {
	s := open(t, h)
	ctx := context.Background()
	if err := s.CreateSession(ctx, Sample("dup")); err != nil {
		t.Fatal(err)
	}
	other := Sample("dup")
	other.Task = "another task"
	err := s.CreateSession(ctx, other, Rec("dup", trace.KindSelect, 1))
	if !errors.Is(err, store.ErrExists) {
		t.Fatalf("second create: %v, want ErrExists", err)
	}
	got, _ := s.Session(ctx, "dup")
	if got.Task != Sample("dup").Task {
		t.Errorf("failed create changed the session: task %q", got.Task)
	}
	if recs, _ := s.Traces(ctx, nil); len(recs) != 0 {
		t.Errorf("failed create stored %d traces, want none (same transaction)", len(recs))
	}
}

func testUpdate(t *testing.T, h Harness) {
	s := open(t, h)
	ctx := context.Background()
	in := Sample("u")
	if err := s.CreateSession(ctx, in); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 3; i++ {
		in.Exposed = append(in.Exposed, fmt.Sprint("found_", i))
		in.Iterations, in.FindCalls = i, i
		in.UpdatedAt = t0.Add(time.Duration(i) * time.Second)
		if err := s.UpdateSession(ctx, in, Rec("u", trace.KindFind, i)); err != nil {
			t.Fatalf("update %d: %v", i, err)
		}
		if in.Version != int64(i+1) {
			t.Fatalf("version after update %d = %d, want %d", i, in.Version, i+1)
		}
	}
	got, err := s.Session(ctx, "u")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(in, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	recs, _ := s.Traces(ctx, &store.TraceQuery{SessionID: "u"})
	if len(recs) != 3 {
		t.Errorf("%d traces, want 3", len(recs))
	}
}

func testUpdateConflict(t *testing.T, h Harness) {
	s := open(t, h)
	ctx := context.Background()
	a := Sample("c")
	if err := s.CreateSession(ctx, a); err != nil {
		t.Fatal(err)
	}
	b, err := s.Session(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	a.Exposed = append(a.Exposed, "from_a")
	if err := s.UpdateSession(ctx, a); err != nil {
		t.Fatal(err)
	}
	b.Exposed = append(b.Exposed, "from_b")
	err = s.UpdateSession(ctx, b, Rec("c", trace.KindFind, 1))
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("stale update: %v, want ErrConflict", err)
	}
	if b.Version != 1 {
		t.Errorf("failed update changed the caller's version to %d", b.Version)
	}
	got, _ := s.Session(ctx, "c")
	if d := cmp.Diff(a.Exposed, got.Exposed); d != "" {
		t.Errorf("stale update overwrote the session (-want +got):\n%s", d)
	}
	if recs, _ := s.Traces(ctx, nil); len(recs) != 0 {
		t.Errorf("failed update stored %d traces, want none", len(recs))
	}
}

func testNotFound(t *testing.T, h Harness) {
	s := open(t, h)
	ctx := context.Background()
	if _, err := s.Session(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Session(nope): %v, want ErrNotFound", err)
	}
	if err := s.UpdateSession(ctx, Sample("nope")); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("UpdateSession(nope): %v, want ErrNotFound", err)
	}
}

func testInvalid(t *testing.T, h Harness) {
	s := open(t, h)
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		s    *store.Session
		recs []trace.Record
	}{
		{"no id", &store.Session{Task: "x"}, nil},
		{"bad selection", &store.Session{ID: "x", Selection: json.RawMessage("{")}, nil},
		{"negative", &store.Session{ID: "x", Iterations: -1}, nil},
		{"bad trace", Sample("x"), []trace.Record{{Kind: "dance", At: t0}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := s.CreateSession(ctx, tc.s, tc.recs...); err == nil {
				t.Fatal("CreateSession succeeded, want an error")
			}
		})
	}
	if err := s.AppendTraces(ctx, Rec("", trace.KindRoute, 1), trace.Record{Kind: trace.KindPlan}); err == nil {
		t.Error("AppendTraces with a record without a time succeeded")
	}
	if _, err := s.Session(ctx, "x"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("an invalid write stored something: %v", err)
	}
	if recs, _ := s.Traces(ctx, nil); len(recs) != 0 {
		t.Errorf("an invalid append stored %d records", len(recs))
	}
}

func testList(t *testing.T, h Harness) {
	s := open(t, h)
	ctx := context.Background()
	for i := range 5 {
		in := Sample(fmt.Sprint("l", i))
		in.CreatedAt = t0.Add(time.Duration(i) * time.Minute)
		in.UpdatedAt = time.Time{}
		if err := s.CreateSession(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	all, err := s.Sessions(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, x := range all {
		ids = append(ids, x.ID)
	}
	if d := cmp.Diff([]string{"l4", "l3", "l2", "l1", "l0"}, ids); d != "" {
		t.Errorf("order (-want +got):\n%s", d)
	}
	two, err := s.Sessions(ctx, &store.SessionQuery{Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(two) != 2 || two[0].ID != "l4" {
		t.Errorf("limit 2 gave %d sessions", len(two))
	}
}

func testTraces(t *testing.T, h Harness) {
	s := open(t, h)
	ctx := context.Background()
	want := []trace.Record{
		Rec("a", trace.KindSelect, 0),
		Rec("a", trace.KindFind, 1),
		Rec("", trace.KindRoute, 2),
		Rec("a", trace.KindCall, 3),
	}
	want[1].Found = []string{"t1"}
	want[2].Detail = json.RawMessage(`{"agent":"pr-reviewer","score":31}`)
	want[3].Tool = "send_email"
	want[3].Degraded = true
	want[3].Failures = []trace.Failure{{Tier: trace.TierExposure, Message: `tool "send_email" is not exposed`}}
	if err := s.AppendTraces(ctx, want[:2]...); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendTraces(ctx, want[2:]...); err != nil {
		t.Fatal(err)
	}
	got, err := s.Traces(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d records, want %d", len(got), len(want))
	}
	for i := range got {
		if i > 0 && got[i].ID <= got[i-1].ID {
			t.Errorf("IDs not increasing: %d then %d", got[i-1].ID, got[i].ID)
		}
		want[i].ID = got[i].ID
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func testTraceFilters(t *testing.T, h Harness) {
	s := open(t, h)
	ctx := context.Background()
	var recs []trace.Record
	for i := range 10 {
		id := "even"
		if i%2 == 1 {
			id = "odd"
		}
		k := trace.KindFind
		if i%3 == 0 {
			k = trace.KindCall
		}
		recs = append(recs, Rec(id, k, i))
	}
	if err := s.AppendTraces(ctx, recs...); err != nil {
		t.Fatal(err)
	}
	all, _ := s.Traces(ctx, nil)
	queries := []struct {
		name string
		q    store.TraceQuery
		want []int // indexes into recs
	}{
		{"session", store.TraceQuery{SessionID: "odd"}, []int{1, 3, 5, 7, 9}},
		{"kind", store.TraceQuery{Kind: trace.KindCall}, []int{0, 3, 6, 9}},
		{"both", store.TraceQuery{SessionID: "even", Kind: trace.KindCall}, []int{0, 6}},
		{"limit", store.TraceQuery{Limit: 3}, []int{0, 1, 2}},
		{"newest", store.TraceQuery{Limit: 3, Newest: true}, []int{7, 8, 9}},
		{"newest of a session", store.TraceQuery{SessionID: "odd", Limit: 2, Newest: true}, []int{7, 9}},
		{"after", store.TraceQuery{AfterID: all[7].ID}, []int{8, 9}},
		{"none", store.TraceQuery{SessionID: "missing"}, nil},
	}
	for _, tc := range queries {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.Traces(ctx, &tc.q)
			if err != nil {
				t.Fatal(err)
			}
			var idx []int
			for _, r := range got {
				for i, a := range all {
					if a.ID == r.ID {
						idx = append(idx, i)
					}
				}
			}
			if d := cmp.Diff(tc.want, idx); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// V1Row is a version-1 trace row as an old capbroker stored it.
const V1Row = `{"session":"old-run","event":"tool_call","ts":1718003050.5,"tool":"git_log","tools":["read_file","git_blame"],"reason":"","tokens":1530,"latency_ms":0.25,"error":"tool git_log is not exposed"}`

func testOldTraceVersions(t *testing.T, h Harness) {
	if h.InsertRawTrace == nil {
		t.Skip("the implementation gives no way to insert raw rows")
	}
	s := open(t, h)
	ctx := context.Background()
	if err := s.AppendTraces(ctx, Rec("old-run", trace.KindSelect, 0)); err != nil {
		t.Fatal(err)
	}
	h.InsertRawTrace(t, s, "old-run", "tool_call", 1, time.Unix(1718003050, 500_000_000), V1Row)
	got, err := s.Traces(ctx, &store.TraceQuery{SessionID: "old-run"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("%d records, want 2", len(got))
	}
	old := got[1]
	want := trace.Record{Version: trace.Version, From: 1, ID: old.ID, SessionID: "old-run", Kind: trace.KindCall,
		At: time.Unix(1718003050, 500_000_000).UTC(), Tool: "git_log", SelectedTools: []string{"read_file", "git_blame"},
		Tokens: trace.Tokens{Exposed: 1530}, Latency: 250 * time.Microsecond,
		Failures: []trace.Failure{{Tier: trace.TierUnknown, Message: "tool git_log is not exposed"}}}
	if d := cmp.Diff(want, old); d != "" {
		t.Errorf("version-1 row (-want +got):\n%s", d)
	}
	// Rows from the future are skipped with one warning, not misread,
	// and the others stay readable (before, one such row failed every
	// read).
	h.InsertRawTrace(t, s, "old-run", "select", 99, t0, `{"v":99,"kind":"select"}`)
	h.InsertRawTrace(t, s, "old-run", "select", 100, t0, `{"v":100,"kind":"select"}`)
	var logged bytes.Buffer
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(slog.New(slog.NewTextHandler(&logged, nil)))
	got, err = s.Traces(ctx, &store.TraceQuery{SessionID: "old-run"})
	if err != nil || len(got) != 2 {
		t.Errorf("reading with version-99 and -100 rows: %d records, %v; want the 2 others", len(got), err)
	}
	if n := strings.Count(logged.String(), "newer capbroker"); n != 1 || !strings.Contains(logged.String(), "records=2") {
		t.Errorf("warnings: %q, want one for both rows", logged.String())
	}
}

// testConcurrentUpdates has writers race on one session with the
// read-modify-write loop sessions use; no increment may be lost.
func testConcurrentUpdates(t *testing.T, h Harness) {
	s := open(t, h)
	ctx := context.Background()
	if err := s.CreateSession(ctx, Sample("hot")); err != nil {
		t.Fatal(err)
	}
	const writers, each = 8, 15
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				for {
					cur, err := s.Session(ctx, "hot")
					if err != nil {
						errs <- err
						return
					}
					cur.Iterations++
					cur.Exposed = append(cur.Exposed, fmt.Sprintf("w%d_%d", w, i))
					err = s.UpdateSession(ctx, cur, Rec("hot", trace.KindFind, i))
					if err == nil {
						break
					}
					if !errors.Is(err, store.ErrConflict) {
						errs <- err
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	got, err := s.Session(ctx, "hot")
	if err != nil {
		t.Fatal(err)
	}
	if got.Iterations != writers*each || len(got.Exposed) != 3+writers*each || got.Version != 1+writers*each {
		t.Errorf("after %d updates: iterations %d, %d exposed, version %d", writers*each, got.Iterations, len(got.Exposed), got.Version)
	}
	recs, _ := s.Traces(ctx, &store.TraceQuery{SessionID: "hot"})
	if len(recs) != writers*each {
		t.Errorf("%d traces, want %d (one per successful update)", len(recs), writers*each)
	}
}

func testConcurrentAppends(t *testing.T, h Harness) {
	s := open(t, h)
	ctx := context.Background()
	const writers, each = 8, 25
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failed []error
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if err := s.AppendTraces(ctx, Rec(fmt.Sprint("w", w), trace.KindCall, i)); err != nil {
					mu.Lock()
					failed = append(failed, err)
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	if len(failed) > 0 {
		t.Fatal(failed[0])
	}
	for w := range writers {
		recs, err := s.Traces(ctx, &store.TraceQuery{SessionID: fmt.Sprint("w", w)})
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != each {
			t.Fatalf("writer %d: %d records, want %d", w, len(recs), each)
		}
		for i, r := range recs {
			if r.Iteration != i {
				t.Errorf("writer %d: record %d has iteration %d: appends reordered", w, i, r.Iteration)
			}
		}
	}
}

func testCloseTwice(t *testing.T, h Harness) {
	s := h.New(t)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}
