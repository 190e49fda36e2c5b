package index

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/capbroker/capbroker/internal/testenv"
	"github.com/capbroker/capbroker/source"
)

// BenchmarkWarmDiscoverCorpus runs discovery over the whole corpus with a
// warm index: walk, stamps, lookups, catalog, index write.
func BenchmarkWarmDiscoverCorpus(b *testing.B) {
	corpus := testenv.NeedShared(b, "corpus")
	dir := b.TempDir()
	opts := &source.Options{Roots: []source.Root{{Path: corpus}}}
	if _, _, err := Load(context.Background(), dir, nil, opts); err != nil {
		b.Fatal(err)
	}
	var before, after syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &before)
	b.ResetTimer()
	for range b.N {
		res, _, err := Load(context.Background(), dir, nil, opts)
		if err != nil || res.Report.Read != 0 {
			b.Fatalf("%v read %d", err, res.Report.Read)
		}
	}
	b.StopTimer()
	syscall.Getrusage(syscall.RUSAGE_SELF, &after)
	cpu := time.Duration(after.Utime.Nano()+after.Stime.Nano()-before.Utime.Nano()-before.Stime.Nano()) / time.Duration(b.N)
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/run")
	b.ReportMetric(float64(cpu.Microseconds())/1000, "cpu-ms/run")
}
