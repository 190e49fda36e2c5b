package gateway

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"runtime"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/capbroker/capbroker/policy"
	"github.com/capbroker/capbroker/store"
	"github.com/capbroker/capbroker/trace"
)

// countingStore counts the write transactions a gateway sends its
// database, by kind.
type countingStore struct {
	store.Store
	ms                                          store.MCPSessions
	create, update, traces, put, add, touch, rd atomic.Int64
}

func (c *countingStore) CreateSession(ctx context.Context, s *store.Session, recs ...trace.Record) error {
	c.create.Add(1)
	return c.Store.CreateSession(ctx, s, recs...)
}

func (c *countingStore) UpdateSession(ctx context.Context, s *store.Session, recs ...trace.Record) error {
	c.update.Add(1)
	return c.Store.UpdateSession(ctx, s, recs...)
}

func (c *countingStore) AppendTraces(ctx context.Context, recs ...trace.Record) error {
	c.traces.Add(1)
	return c.Store.AppendTraces(ctx, recs...)
}

func (c *countingStore) Session(ctx context.Context, id string) (*store.Session, error) {
	c.rd.Add(1)
	return c.Store.Session(ctx, id)
}

func (c *countingStore) PutMCPSession(ctx context.Context, s *store.MCPSession) error {
	c.put.Add(1)
	return c.ms.PutMCPSession(ctx, s)
}

func (c *countingStore) MCPSession(ctx context.Context, id string) (*store.MCPSession, error) {
	c.rd.Add(1)
	return c.ms.MCPSession(ctx, id)
}

func (c *countingStore) AddMCPExposed(ctx context.Context, id string, names []string) ([]string, error) {
	c.add.Add(1)
	return c.ms.AddMCPExposed(ctx, id, names)
}

func (c *countingStore) TouchMCPSession(ctx context.Context, id string, at time.Time) error {
	c.touch.Add(1)
	return c.ms.TouchMCPSession(ctx, id, at)
}

func (c *countingStore) DeleteMCPSession(ctx context.Context, id string) (bool, error) {
	return c.ms.DeleteMCPSession(ctx, id)
}

func (c *countingStore) ExpireMCPSessions(ctx context.Context, before time.Time) (int64, error) {
	return c.ms.ExpireMCPSessions(ctx, before)
}

func (c *countingStore) CountMCPSessions(ctx context.Context, identity string) (int, error) {
	return c.ms.CountMCPSessions(ctx, identity)
}

// countingEvents is a countingStore of a database that keeps stream
// events (PostgreSQL): it counts their writes too.
type countingEvents struct {
	*countingStore
	ev     store.MCPEvents
	events atomic.Int64
}

func (c *countingEvents) AppendMCPEvents(ctx context.Context, session, stream string, events ...[]byte) (int64, error) {
	c.events.Add(1)
	return c.ev.AppendMCPEvents(ctx, session, stream, events...)
}

func (c *countingEvents) MCPEventsAfter(ctx context.Context, session, stream string, after int64) ([][]byte, error) {
	c.rd.Add(1)
	return c.ev.MCPEventsAfter(ctx, session, stream, after)
}

func (c *countingEvents) DropMCPEvents(ctx context.Context, session string) error {
	return c.ev.DropMCPEvents(ctx, session)
}

func (c *countingEvents) TrimMCPEvents(ctx context.Context, perSession int, before time.Time) (int64, error) {
	return c.ev.TrimMCPEvents(ctx, perSession, before)
}

// BenchmarkFleetSession measures what one MCP session of a fleet costs:
// each iteration opens an anonymous session on replica A (initialize,
// initialized), finds a tool and calls it there, then calls it on replica
// B, which rebuilds the session from the database. It reports the write
// transactions and reads sent to the database per session, the heap
// each session holds on a replica (the sessions stay open), and the
// latency of a warm call against the first call on the replica that
// rebuilds:
//
//	go test ./gateway -run '^$' -bench FleetSession -benchtime 200x
func BenchmarkFleetSession(b *testing.B) {
	type run struct {
		name   string
		db     func(testing.TB) func() store.Store
		events int
	}
	runs := []run{{persistentStores[0].name, persistentStores[0].db, 0}, {persistentStores[1].name, persistentStores[1].db, 0},
		{persistentStores[1].name + "-no-resume", persistentStores[1].db, -1}}
	for _, db := range runs {
		b.Run(db.name, func(b *testing.B) {
			open := db.db(b)
			var counts []*countingStore
			var evCounts []*countingEvents
			replica := func() string {
				st := open()
				b.Cleanup(func() { st.Close() })
				cs := &countingStore{Store: st, ms: st.(store.MCPSessions)}
				counts = append(counts, cs)
				var counted store.Store = cs
				if ev, ok := st.(store.MCPEvents); ok {
					ce := &countingEvents{countingStore: cs, ev: ev}
					evCounts = append(evCounts, ce)
					counted = ce
				}
				ss := NewStoreSessions(counted, &StoreOptions{Durable: true})
				b.Cleanup(func() { ss.Close() })
				g := startGateway(b, []ServerConfig{testServer("alpha")}, &Options{Mode: ModeAuto, Family: policy.General,
					Store: ss, Trace: ss, MaxSessions: 100000, Logger: slog.New(slog.DiscardHandler)})
				return serveHTTP(b, g, &HTTPOptions{MaxClientSessions: -1, StreamEvents: db.events})
			}
			urlA, urlB := replica(), replica()
			tr := &http.Transport{MaxIdleConnsPerHost: 4}
			defer tr.CloseIdleConnections()
			ctx := context.Background()
			var warm, cold []time.Duration
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			b.ResetTimer()
			for i := range b.N {
				stats := &fleetStats{errs: map[string]int{}, served: map[string]int{}}
				c := &fleetClient{http: &http.Client{Transport: tr}, url: urlA, stats: stats}
				if err := c.open(ctx); err != nil {
					b.Fatal(err)
				}
				if _, _, err := c.tool(ctx, policy.HatchName, map[string]any{"query": "echo the text back"}); err != nil {
					b.Fatal(err)
				}
				t0 := time.Now()
				if _, _, err := c.tool(ctx, "alpha__echo", map[string]any{"text": fmt.Sprint(i)}); err != nil {
					b.Fatal(err)
				}
				warm = append(warm, time.Since(t0))
				c.url = urlB
				t0 = time.Now()
				if _, _, err := c.tool(ctx, "alpha__echo", map[string]any{"text": fmt.Sprint(i)}); err != nil {
					b.Fatal(err)
				}
				cold = append(cold, time.Since(t0))
			}
			b.StopTimer()
			runtime.GC()
			runtime.ReadMemStats(&after)
			n := float64(b.N)
			var writes, reads, puts, adds, traces, touches, events int64
			for _, c := range evCounts {
				writes += c.events.Load()
				events += c.events.Load()
			}
			for _, c := range counts {
				writes += c.create.Load() + c.update.Load() + c.traces.Load() + c.put.Load() + c.add.Load() + c.touch.Load()
				reads += c.rd.Load()
				puts += c.put.Load()
				adds += c.add.Load()
				traces += c.traces.Load() + c.update.Load() + c.create.Load()
				touches += c.touch.Load()
			}
			// Two replicas hold each session: half the heap is one's.
			b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n/2, "heap-B/session/replica")
			b.ReportMetric(float64(writes)/n, "db-writes/session")
			b.ReportMetric(float64(reads)/n, "db-reads/session")
			med := func(d []time.Duration) float64 {
				sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
				return float64(d[len(d)/2].Microseconds()) / 1000
			}
			b.ReportMetric(med(warm), "ms-call-warm")
			b.ReportMetric(med(cold), "ms-call-rebuilt")
			b.Logf("per session: %.1f writes (mcp_sessions put %.1f, found tools %.1f, traces and finds %.1f, touches %.1f, stream events %.1f), %.1f reads; %s",
				float64(writes)/n, float64(puts)/n, float64(adds)/n, float64(traces)/n, float64(touches)/n, float64(events)/n, float64(reads)/n,
				strings.TrimSpace(fmt.Sprintf("%d sessions", b.N)))
		})
	}
}
