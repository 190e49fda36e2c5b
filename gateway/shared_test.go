package gateway

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/capbroker/capbroker/identity"
	"github.com/capbroker/capbroker/index"
	"github.com/capbroker/capbroker/internal/testenv"
	"github.com/capbroker/capbroker/policy"
	"github.com/capbroker/capbroker/store"
)

// pinsReplica starts a replica of a fleet on st with its own index
// folder (new tools held until approved) and returns it and its index.
func pinsReplica(t *testing.T, st store.Store, learn bool) (*Gateway, string) {
	t.Helper()
	dir := t.TempDir()
	ix, err := index.Open(dir, &index.Options{HoldNew: true})
	if err != nil {
		t.Fatal(err)
	}
	ss := NewStoreSessions(st, &StoreOptions{Task: "shared test"})
	t.Cleanup(func() { ss.Close() })
	o := &Options{Mode: ModeAll, Family: policy.General, Store: ss, Trace: ss, Pins: ix, PinsInterval: 20 * time.Millisecond}
	if learn {
		o.Learn = st
	}
	return startGateway(t, []ServerConfig{testServer("alpha")}, o), dir
}

// TestFleetSharedPins: an approval made on one replica of a fleet on
// PostgreSQL releases the tool on the other within about a second (the
// other's pins are its own folder's, not shared by a volume), and a
// replica started later takes the fleet's approvals before its first
// catalog. Before pins were shared, the other replica held the tool
// until a person approved it there too.
func TestFleetSharedPins(t *testing.T) {
	open := persistentStores[1].db(t)
	stA, stB := open(), open()
	defer stA.Close()
	defer stB.Close()
	a, dirA := pinsReplica(t, stA, false)
	b, _ := pinsReplica(t, stB, false)
	for _, g := range []*Gateway{a, b} {
		if slices.Contains(g.Tools(), "alpha__echo") {
			t.Fatalf("alpha__echo is listed before any approval (the index holds new tools): %v", g.Tools())
		}
	}

	// A person approves tools one at a time on replica A's machine, as
	// capbroker approve does (another process on A's index folder).
	approver, err := index.Open(dirA, nil)
	if err != nil {
		t.Fatal(err)
	}
	var lat []time.Duration
	for _, tool := range []string{"alpha__echo", "alpha__pid", "alpha__sleep", "alpha__ask", "alpha__grow"} {
		start := time.Now()
		if _, err := approver.Approve(tool); err != nil {
			t.Fatalf("approving %s on A: %v", tool, err)
		}
		eventually(t, tool+" is listed on replica B", func() bool { return slices.Contains(b.Tools(), tool) })
		lat = append(lat, time.Since(start))
		if !slices.Contains(a.Tools(), tool) {
			t.Errorf("%s approved on A is not listed on A", tool)
		}
	}
	slices.Sort(lat)
	t.Logf("approval on A to the tool listed on B (A polls its pins every 20 ms): %v", lat)
	if slices.Contains(b.Tools(), "alpha__reword") {
		t.Error("alpha__reword, never approved, is listed on B")
	}

	// A replica that starts later (its own empty folder) takes the fleet's
	// approvals before its first catalog: it lists them at once.
	stC := open()
	defer stC.Close()
	c, _ := pinsReplica(t, stC, false)
	got := c.Tools()
	for _, tool := range []string{"alpha__echo", "alpha__pid", "alpha__sleep"} {
		if !slices.Contains(got, tool) {
			t.Errorf("replica C, started after the approvals, does not list %s: %v", tool, got)
		}
	}
	if slices.Contains(got, "alpha__reword") {
		t.Errorf("replica C lists alpha__reword, never approved: %v", got)
	}
}

// TestFleetSharedFirstSight: a pin taken at first sight on one replica
// never replaces an approval: a replica whose tool differs from what the
// fleet approved holds it, whatever it saw first.
func TestFleetSharedFirstSight(t *testing.T) {
	open := persistentStores[1].db(t)
	st := open()
	t.Cleanup(func() { st.Close() })
	ctx := context.Background()
	sh, ok := st.(store.Shared)
	if !ok {
		t.Fatal("the PostgreSQL store keeps no shared state")
	}
	approved := index.Pin{Source: "alpha", Tool: "echo", Digest: "sha256:approved-elsewhere", Approved: time.Now().Add(-time.Hour)}
	b, _ := json.Marshal(approved)
	if _, err := sh.PutShared(ctx, store.SharedItem{Kind: sharedPin, Name: pinID(approved), Body: b, At: approved.Approved, Origin: "another"}); err != nil {
		t.Fatal(err)
	}
	// The index holds nothing new: without the fleet's pin, echo would
	// be pinned at first sight and listed.
	dir := t.TempDir()
	ix, err := index.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	ss := NewStoreSessions(st, nil)
	t.Cleanup(func() { ss.Close() })
	g := startGateway(t, []ServerConfig{testServer("alpha")}, &Options{Mode: ModeAll, Family: policy.General, Store: ss, Pins: ix})
	if slices.Contains(g.Tools(), "alpha__echo") {
		t.Errorf("alpha__echo, whose digest differs from the fleet's approval, is listed: %v", g.Tools())
	}
	if !slices.Contains(g.Tools(), "alpha__pid") {
		t.Errorf("alpha__pid, never seen by the fleet, is not pinned at first sight: %v", g.Tools())
	}
	items, err := sh.SharedSince(ctx, sharedPin, 0)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, it := range items {
		names = append(names, it.Name)
		if it.Name == pinID(approved) && it.Origin != "another" {
			t.Errorf("the fleet's approval of alpha/echo was replaced by %s's first sight", it.Origin)
		}
	}
	sort.Strings(names)
	if !slices.Contains(names, "alpha/pid") {
		t.Errorf("the first-sight pins were not written for the fleet: %q", names)
	}
}

// TestFleetSharedLearning: when one replica reads what use teaches, the
// other reads too, within about a second.
func TestFleetSharedLearning(t *testing.T) {
	open := persistentStores[1].db(t)
	stA, stB := open(), open()
	defer stA.Close()
	defer stB.Close()
	a, _ := pinsReplica(t, stA, true)
	b, _ := pinsReplica(t, stB, true)
	readAt := func(g *Gateway) time.Time {
		g.ranking.learnMu.Lock()
		defer g.ranking.learnMu.Unlock()
		return g.ranking.learnAt
	}
	eventually(t, "replica B has read at start", func() bool { return !readAt(b).IsZero() })
	before := readAt(b)
	start := time.Now()
	a.ranking.learnOnce(context.Background(), true)
	eventually(t, "replica B reads after A did", func() bool { return readAt(b).After(before) })
	t.Logf("A read, B read %v later", time.Since(start))
}

// TestFleetRateLimit: an identity's rate bounds its requests across the
// fleet, not on each replica: requests sent to two replicas of one
// PostgreSQL database in turn get through up to the burst once (and what
// the rate adds), not the burst on each. Before the bucket was the
// fleet's, two replicas let through twice the burst.
func TestFleetRateLimit(t *testing.T) {
	const token = "carol-secret-token"
	set, err := identity.Parse([]byte(`identities:
  - name: carol
    token_sha256: `+identity.Hash(token)+`
    rate: 1
    burst: 6
`), "ids.yaml")
	if err != nil {
		t.Fatal(err)
	}
	open := persistentStores[1].db(t)
	var urls []string
	for range 2 {
		st := open()
		t.Cleanup(func() { st.Close() })
		ss := NewStoreSessions(st, nil)
		t.Cleanup(func() { ss.Close() })
		g := startGateway(t, []ServerConfig{testServer("alpha")}, &Options{Mode: ModeAuto, Family: policy.General, Store: ss})
		urls = append(urls, serveHTTP(t, g, &HTTPOptions{Identities: set}))
	}
	h := map[string]string{"Authorization": "Bearer " + token}
	start := time.Now()
	ok, limited := 0, 0
	for i := range 24 {
		res, body := post(t, urls[i%2], h, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
		switch res.StatusCode {
		case http.StatusTooManyRequests:
			limited++
			if !strings.Contains(body, "carol sends more than 1 requests a second") || res.Header.Get("Retry-After") == "" {
				t.Errorf("refused with %q, Retry-After %q", body, res.Header.Get("Retry-After"))
			}
		default:
			ok++ // past the limit: the ping itself needs a session
		}
	}
	// The burst once, what the rate added meanwhile, and a lease of one
	// token a replica.
	most := 6 + int(time.Since(start).Seconds()) + 2
	if ok > most || ok < 6 {
		t.Errorf("%d of 24 requests let through by two replicas (%d refused), want 6 to %d: the burst of the fleet", ok, limited, most)
	}
}

// BenchmarkFleetShared measures how long a change written on one replica
// takes to reach another of the same PostgreSQL database (the write, its
// NOTIFY, the other's read of what it has not seen), p50 and p99:
//
//	go test ./gateway -run '^$' -bench FleetShared -benchtime 200x
func BenchmarkFleetShared(b *testing.B) {
	open := persistentStores[1].db(b)
	heard := make(chan time.Time, 1)
	var gs []*Gateway
	for i := range 2 {
		st := open()
		b.Cleanup(func() { st.Close() })
		ss := NewStoreSessions(st, nil)
		b.Cleanup(func() { ss.Close() })
		g, err := New(&Config{}, &Options{Mode: ModeAll, Store: ss, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			b.Fatal(err)
		}
		if i == 1 {
			g.OnShared("bench", func(string, json.RawMessage) { heard <- time.Now() })
		}
		ctx, cancel := context.WithCancel(context.Background())
		if err := g.Start(ctx); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { cancel(); g.Close() })
		gs = append(gs, g)
	}
	time.Sleep(500 * time.Millisecond) // both listen
	ctx := context.Background()
	var lat []time.Duration
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		if err := gs[0].Share(ctx, "bench", "x", json.RawMessage(strconv.Itoa(i)), false); err != nil {
			b.Fatal(err)
		}
		select {
		case at := <-heard:
			lat = append(lat, at.Sub(start))
		case <-time.After(time.Minute):
			b.Fatalf("change %d not heard in a minute", i)
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(lat[len(lat)/2]), "ms-p50")
	b.ReportMetric(ms(lat[len(lat)*99/100]), "ms-p99")
}

// TestFleetSharedCatchUpOnReconnect: an approval written while a
// replica's listening connection was down (its notification lost) is
// read when the replica listens again, not at its next poll.
func TestFleetSharedCatchUpOnReconnect(t *testing.T) {
	open := persistentStores[1].db(t)
	st := open()
	t.Cleanup(func() { st.Close() })
	b, dirB := pinsReplica(t, st, false)
	if slices.Contains(b.Tools(), "alpha__echo") {
		t.Fatal("alpha__echo listed before any approval")
	}
	other, err := index.Open(dirB, nil)
	if err != nil {
		t.Fatal(err)
	}
	var pending *index.Change
	for _, c := range other.Changed() {
		if c.Name == "alpha__echo" {
			pending = &c
		}
	}
	if pending == nil {
		t.Fatalf("alpha__echo is not pending on B: %+v", other.Changed())
	}
	// B listens (and has read what was there when it began).
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, testenv.Postgres(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	listeners := func() int {
		var n int
		conn.QueryRow(ctx, `SELECT COUNT(*) FROM pg_stat_activity WHERE query LIKE 'LISTEN %capbroker_fleet%'`).Scan(&n)
		return n
	}
	eventually(t, "B listens", func() bool { return listeners() > 0 })
	time.Sleep(300 * time.Millisecond)
	// Another replica approves it, and its notification is lost: the
	// write is in the table, nobody is told.
	approved := index.Pin{Source: "alpha", Tool: "echo", Digest: pending.New.Digest, Approved: time.Now()}
	body, _ := json.Marshal(approved)
	if _, err := st.(store.Shared).PutShared(ctx, store.SharedItem{Kind: sharedPin, Name: pinID(approved), Body: body, At: approved.Approved, Origin: "lost"}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if slices.Contains(b.Tools(), "alpha__echo") {
		t.Fatal("B listed alpha__echo without being told (the test needs the notification lost)")
	}
	// B's listening connection drops; listening again, B reads what it
	// missed.
	var n int
	if err := conn.QueryRow(ctx, `SELECT COUNT(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE query LIKE 'LISTEN %capbroker_fleet%'`).Scan(&n); err != nil || n == 0 {
		t.Fatalf("terminated %d listening connections (%v)", n, err)
	}
	start := time.Now()
	eventually(t, "B lists alpha__echo after listening again", func() bool { return slices.Contains(b.Tools(), "alpha__echo") })
	t.Logf("listed %v after the connection was cut (Listen waits 500 ms before listening again)", time.Since(start))
}
