package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/capbroker/capbroker/store"
)

// runShared runs the shared state tests on a store that implements
// [store.Shared].
func runShared(t *testing.T, h Harness) {
	for _, tc := range []struct {
		name string
		fn   func(t *testing.T, s store.Shared)
	}{
		{"SharedPutAndSince", testSharedPutAndSince},
		{"SharedConcurrentSeq", testSharedConcurrentSeq},
		{"SharedInvalid", testSharedInvalid},
		{"SharedTokens", testSharedTokens},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, ok := open(t, h).(store.Shared)
			if !ok {
				t.Fatal("the store does not keep shared state (store.Shared)")
			}
			tc.fn(t, s)
		})
	}
}

func testSharedPutAndSince(t *testing.T, s store.Shared) {
	ctx := context.Background()
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	item := func(name, body string, at time.Time, weak bool) store.SharedItem {
		return store.SharedItem{Kind: "pin", Name: name, Body: json.RawMessage(body), At: at, Weak: weak, Origin: "a"}
	}
	seq0, err := s.SharedSeq(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := s.PutShared(ctx, item("x", `{"d":1}`, t0, true), item("y", `{"d":2}`, t0, false))
	if err != nil || len(ch) != 2 || ch[0].Seq != seq0+1 || ch[1].Seq != seq0+1 {
		t.Fatalf("first write: %+v, %v", ch, err)
	}
	for _, tc := range []struct {
		name string
		it   store.SharedItem
		want bool
	}{
		{"weak over an item", item("x", `{"d":9}`, t0.Add(time.Hour), true), false},
		{"older", item("y", `{"d":9}`, t0.Add(-time.Second), false), false},
		{"the same", item("y", `{"d":2}`, t0.Add(time.Hour), false), false},
		{"newer", item("x", `{"d":3}`, t0.Add(time.Second), false), true},
	} {
		ch, err := s.PutShared(ctx, tc.it)
		if err != nil || (len(ch) == 1) != tc.want {
			t.Errorf("%s: changed %+v (%v), want a change: %v", tc.name, ch, err, tc.want)
		}
	}
	if _, err := s.PutShared(ctx, store.SharedItem{Kind: "learn", Name: "evidence", Body: json.RawMessage(`1`)}); err != nil {
		t.Fatal(err)
	}
	all, err := s.SharedSince(ctx, "", seq0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range all {
		got = append(got, fmt.Sprintf("%s/%s=%s@%d", it.Kind, it.Name, it.Body, it.Seq-seq0))
	}
	want := []string{"pin/y={\"d\":2}@1", "pin/x={\"d\":3}@2", "learn/evidence=1@3"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("since %d: %v, want %v", seq0, got, want)
	}
	pins, err := s.SharedSince(ctx, "pin", seq0+1)
	if err != nil || len(pins) != 1 || pins[0].Name != "x" || !pins[0].At.Equal(t0.Add(time.Second)) || pins[0].Origin != "a" {
		t.Errorf("pins since %d: %+v (%v)", seq0+1, pins, err)
	}
	if n, err := s.SharedSeq(ctx); err != nil || n != seq0+3 {
		t.Errorf("sequence %d (%v), want %d", n, err, seq0+3)
	}
	if n, err := s.DeleteShared(ctx, "pin", t0.Add(time.Millisecond)); err != nil || n != 1 {
		t.Errorf("deleted %d stale pins (%v), want 1", n, err)
	}
}

// testSharedConcurrentSeq: writers at once each get their own number, and
// a reader that has seen number n has seen every write numbered below.
func testSharedConcurrentSeq(t *testing.T, s store.Shared) {
	ctx := context.Background()
	seq0, err := s.SharedSeq(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const writers, each = 4, 10
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				_, err := s.PutShared(ctx, store.SharedItem{Kind: "k", Name: fmt.Sprintf("%d-%d", w, i), Body: json.RawMessage(`true`)})
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	all, err := s.SharedSince(ctx, "k", seq0)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int64]bool{}
	for _, it := range all {
		if seen[it.Seq] {
			t.Errorf("number %d given twice", it.Seq)
		}
		seen[it.Seq] = true
	}
	if len(all) != writers*each || len(seen) != writers*each {
		t.Errorf("%d items, %d numbers; want %d", len(all), len(seen), writers*each)
	}
}

func testSharedInvalid(t *testing.T, s store.Shared) {
	ctx := context.Background()
	for _, it := range []store.SharedItem{
		{Kind: "", Name: "x", Body: json.RawMessage(`1`)},
		{Kind: "k", Name: "x", Body: json.RawMessage(`{`)},
		{Kind: "k", Name: "x\x00", Body: json.RawMessage(`1`)},
	} {
		if _, err := s.PutShared(ctx, it); err == nil {
			t.Errorf("%+v was stored", it)
		}
	}
}

// testSharedTokens: concurrent takers share one bucket: together they
// get its burst at once, then its rate.
func testSharedTokens(t *testing.T, s store.Shared) {
	ctx := context.Background()
	var mu sync.Mutex
	total := 0
	var wg sync.WaitGroup
	start := time.Now()
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 10 {
				got, _, err := s.TakeTokens(ctx, "id", 2, 6, 2)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				total += got
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	// The burst, and what the rate added while they took.
	if most := 6 + int(2*time.Since(start).Seconds()); total < 6 || total > most {
		t.Errorf("took %d tokens together, want 6 to %d", total, most)
	}
	got, wait, err := s.TakeTokens(ctx, "other", 1, 1, 3)
	if err != nil || got != 1 {
		t.Fatalf("a fresh bucket of burst 1 gave %d (%v)", got, err)
	}
	got, wait, err = s.TakeTokens(ctx, "other", 1, 1, 1)
	if err != nil || got != 0 || wait <= 0 || wait > time.Second {
		t.Errorf("an empty bucket gave %d, wait %v (%v)", got, wait, err)
	}
	if _, _, err := s.TakeTokens(ctx, "x", 0, 1, 1); err == nil {
		t.Error("a rate of 0 was accepted")
	}
}
