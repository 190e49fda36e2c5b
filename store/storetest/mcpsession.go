package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/capbroker/capbroker/store"
)

// mcpTests are the MCP session tests, run by [Run] on a store that
// implements [store.MCPSessions].
var mcpTests = []struct {
	name string
	fn   func(t *testing.T, s store.MCPSessions)
}{
	{"MCPSessionPutAndRead", testMCPPutAndRead},
	{"MCPSessionExposed", testMCPExposed},
	{"MCPSessionConcurrentExposed", testMCPConcurrentExposed},
	{"MCPSessionTouchExpire", testMCPTouchExpire},
	{"MCPSessionInvalid", testMCPInvalid},
}

func runMCP(t *testing.T, h Harness) {
	for _, tc := range mcpTests {
		t.Run(tc.name, func(t *testing.T) {
			s, ok := open(t, h).(store.MCPSessions)
			if !ok {
				t.Fatal("the store does not keep MCP sessions (store.MCPSessions)")
			}
			tc.fn(t, s)
		})
	}
}

func testMCPPutAndRead(t *testing.T, s store.MCPSessions) {
	ctx := context.Background()
	in := &store.MCPSession{ID: "m1", Key: "team «a»", Identity: "alice", State: json.RawMessage(`{"mode":"auto","init":{"clientInfo":{"name":"c"}}}`),
		Exposed: []string{"a__read", "b__write"}, CreatedAt: t0.Add(300 * time.Nanosecond)}
	if err := s.PutMCPSession(ctx, in); err != nil {
		t.Fatal(err)
	}
	if in.Version != 1 || !in.CreatedAt.Equal(t0) || !in.TouchedAt.Equal(t0) {
		t.Errorf("after put: version %d, created %v, touched %v; want 1, %v, %v", in.Version, in.CreatedAt, in.TouchedAt, t0, t0)
	}
	got, err := s.MCPSession(ctx, "m1")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(in, got); d != "" {
		t.Errorf("stored MCP session differs (-want +got):\n%s", d)
	}
	if err := s.PutMCPSession(ctx, &store.MCPSession{ID: "m1"}); !errors.Is(err, store.ErrExists) {
		t.Errorf("second put of m1: %v, want ErrExists", err)
	}
	if _, err := s.MCPSession(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("reading a missing MCP session: %v, want ErrNotFound", err)
	}
	if _, err := s.AddMCPExposed(ctx, "nope", []string{"x"}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("adding to a missing MCP session: %v, want ErrNotFound", err)
	}
	ok, err := s.DeleteMCPSession(ctx, "m1")
	if err != nil || !ok {
		t.Fatalf("delete m1: %v %v", ok, err)
	}
	if ok, err := s.DeleteMCPSession(ctx, "m1"); err != nil || ok {
		t.Errorf("second delete of m1: %v %v, want false, nil", ok, err)
	}
	if _, err := s.MCPSession(ctx, "m1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("reading a deleted MCP session: %v, want ErrNotFound", err)
	}
}

func testMCPExposed(t *testing.T, s store.MCPSessions) {
	ctx := context.Background()
	if err := s.PutMCPSession(ctx, &store.MCPSession{ID: "m2", Exposed: []string{"a", "b"}}); err != nil {
		t.Fatal(err)
	}
	got, err := s.AddMCPExposed(ctx, "m2", []string{"c", "a", "d"})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"a", "b", "c", "d"}, got); d != "" {
		t.Errorf("exposed after add (-want +got):\n%s", d)
	}
	m, err := s.MCPSession(ctx, "m2")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"a", "b", "c", "d"}, m.Exposed); d != "" || m.Version != 2 {
		t.Errorf("stored exposed (-want +got):\n%s; version %d, want 2", d, m.Version)
	}
	// Adding nothing new writes nothing.
	if _, err := s.AddMCPExposed(ctx, "m2", []string{"b"}); err != nil {
		t.Fatal(err)
	}
	if m, _ := s.MCPSession(ctx, "m2"); m.Version != 2 {
		t.Errorf("version after adding nothing new: %d, want 2", m.Version)
	}
}

// testMCPConcurrentExposed adds from many writers at once (several
// replicas finding tools for one session): every name is kept.
func testMCPConcurrentExposed(t *testing.T, s store.MCPSessions) {
	ctx := context.Background()
	if err := s.PutMCPSession(ctx, &store.MCPSession{ID: "m3"}); err != nil {
		t.Fatal(err)
	}
	const writers, each = 8, 5
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if _, err := s.AddMCPExposed(ctx, "m3", []string{fmt.Sprintf("w%d_%d", w, i)}); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	m, err := s.MCPSession(ctx, "m3")
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Exposed) != writers*each {
		t.Errorf("%d names kept of %d added concurrently: %v", len(m.Exposed), writers*each, m.Exposed)
	}
}

func testMCPTouchExpire(t *testing.T, s store.MCPSessions) {
	ctx := context.Background()
	for i, id := range []string{"old", "young"} {
		if err := s.PutMCPSession(ctx, &store.MCPSession{ID: id, Identity: "bob", CreatedAt: t0.Add(time.Duration(i) * time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.PutMCPSession(ctx, &store.MCPSession{ID: "other", Identity: "carol", CreatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	if n, err := s.CountMCPSessions(ctx, "bob"); err != nil || n != 2 {
		t.Errorf("bob's sessions: %d %v, want 2", n, err)
	}
	if n, err := s.CountMCPSessions(ctx, "*"); err != nil || n != 3 {
		t.Errorf("all sessions: %d %v, want 3", n, err)
	}
	// Touching moves forward only.
	if err := s.TouchMCPSession(ctx, "old", t0.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := s.TouchMCPSession(ctx, "old", t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := s.TouchMCPSession(ctx, "gone", t0); err != nil {
		t.Errorf("touching a missing session: %v", err)
	}
	n, err := s.ExpireMCPSessions(ctx, t0.Add(90*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Errorf("expired %d, want 2 (young, other)", n)
	}
	if _, err := s.MCPSession(ctx, "old"); err != nil {
		t.Errorf("the touched session expired: %v", err)
	}
	if _, err := s.MCPSession(ctx, "young"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the untouched session stayed: %v", err)
	}
}

func testMCPInvalid(t *testing.T, s store.MCPSessions) {
	ctx := context.Background()
	for _, m := range []*store.MCPSession{
		{ID: ""},
		{ID: "x", State: json.RawMessage(`{not json`)},
		{ID: "nul\x00"},
	} {
		if err := s.PutMCPSession(ctx, m); err == nil {
			t.Errorf("put %q: no error", m.ID)
		}
	}
}
