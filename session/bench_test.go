package session_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/capbroker/capbroker/session"
)

// reportPercentiles adds p50 and p99 of the measured op durations.
func reportPercentiles(b *testing.B, ds []time.Duration) {
	if len(ds) == 0 {
		return
	}
	slices.Sort(ds)
	b.ReportMetric(float64(ds[len(ds)/2].Microseconds())/1000, "ms-p50")
	b.ReportMetric(float64(ds[len(ds)*99/100].Microseconds())/1000, "ms-p99")
}

// BenchmarkStartSQLite measures a session start on SQLite: select the
// tools for a task and persist the session with its select record.
func BenchmarkStartSQLite(b *testing.B) {
	ctx := context.Background()
	m := session.NewManager(newSelector(b), newSQLite(b), nil)
	m.Start(ctx, codingTask, nil) // warm the token counts
	var ds []time.Duration
	for b.Loop() {
		t0 := time.Now()
		if _, err := m.Start(ctx, codingTask, nil); err != nil {
			b.Fatal(err)
		}
		ds = append(ds, time.Since(t0))
	}
	reportPercentiles(b, ds)
}

// BenchmarkStartPostgres is the same on PostgreSQL.
func BenchmarkStartPostgres(b *testing.B) {
	ctx := context.Background()
	m := session.NewManager(newSelector(b), newPostgres(b), nil)
	m.Start(ctx, codingTask, nil)
	var ds []time.Duration
	for b.Loop() {
		t0 := time.Now()
		if _, err := m.Start(ctx, codingTask, nil); err != nil {
			b.Fatal(err)
		}
		ds = append(ds, time.Since(t0))
	}
	reportPercentiles(b, ds)
}

// BenchmarkFindSQLite measures a find_capability call in a session:
// search, expose, persist the session and its find record.
func BenchmarkFindSQLite(b *testing.B) {
	ctx := context.Background()
	m := session.NewManager(newSelector(b), newSQLite(b), &session.Options{MaxIterations: 1 << 30})
	s, err := m.Start(ctx, codingTask, nil)
	if err != nil {
		b.Fatal(err)
	}
	var ds []time.Duration
	i := 0
	for b.Loop() {
		t0 := time.Now()
		if _, err := s.Find(ctx, workQueries[i%len(workQueries)], 3); err != nil {
			b.Fatal(err)
		}
		ds = append(ds, time.Since(t0))
		i++
	}
	reportPercentiles(b, ds)
}

// BenchmarkStartInMemory isolates selection cost (no store).
func BenchmarkStartInMemory(b *testing.B) {
	ctx := context.Background()
	m := session.NewManager(newSelector(b), nil, nil)
	m.Start(ctx, codingTask, nil)
	for b.Loop() {
		if _, err := m.Start(ctx, codingTask, nil); err != nil {
			b.Fatal(err)
		}
	}
}
