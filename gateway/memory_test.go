package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/capbroker/capbroker/dense"
	"github.com/capbroker/capbroker/encoder"
)

// memoryEnv makes the test binary run one gateway in front of 1,007 tools
// (see runMemoryChild) and print what it holds in memory, instead of
// running tests: each ranking is measured in a process of its own.
const memoryEnv = "CAPBROKER_GATEWAY_TEST_MEMORY"

// memoryFigures is what a child of [BenchmarkRankingMemory] reports once
// its ranking has settled and it has served a session and a find.
type memoryFigures struct {
	// RSS and HWM are VmRSS and VmHWM after a collection that returns
	// freed memory to the OS, RSSAnon the anonymous part of that VmRSS
	// (the Go heap, stacks, SQLite's pages), Before VmRSS before the
	// collection, as the process runs, all in MiB.
	RSS, HWM, RSSAnon, Before float64
	// Heap is the live heap after a collection, HeapSys what the Go heap
	// holds from the OS and HeapReleased what of it was given back, in
	// MiB.
	Heap, HeapSys, HeapReleased float64
	// CPU is the process's user and system time, in seconds.
	CPU      float64
	Embedded int
	// Mappings sums the resident MiB of the process's mappings by kind:
	// "anon" (the Go runtime's memory, SQLite's page cache and
	// allocations), "binary" (the executable, the encoder's weight table
	// included) and "files"; "go" is what the Go runtime holds from the
	// OS and has not released (heap, stacks, its metadata; some of it
	// never touched, so not resident).
	Mappings map[string]float64
}

// mappings sums /proc/self/smaps' Rss by the kind of mapping.
func mappings() map[string]float64 {
	out := map[string]float64{}
	b, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return out
	}
	exe, _ := os.Executable()
	kind := ""
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) == 0 {
			continue
		}
		if strings.Contains(f[0], "-") && len(f) >= 5 && !strings.HasSuffix(f[0], ":") {
			switch {
			case len(f) >= 6 && f[5] == exe:
				kind = "binary"
			case len(f) >= 6 && strings.HasPrefix(f[5], "/"):
				kind = "files"
			default:
				kind = "anon"
			}
			continue
		}
		if f[0] == "Rss:" && len(f) >= 2 {
			kb, _ := strconv.ParseFloat(f[1], 64)
			out[kind] += kb / 1024
		}
	}
	ms := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(ms)
	out["go"] = float64(ms[0].Value.Uint64()-ms[1].Value.Uint64()) / (1 << 20)
	return out
}

// BenchmarkRankingMemory measures the memory of a gateway in front of one
// upstream of 1,007 tools, each in a process of its own: ranking
// lexically; hybrid with the built-in encoder on its first start (every
// card embedded, in the background); and hybrid again over the same cache
// (no card embedded). Each child serves one session with a task and one
// find_capability before it is measured. It reports each child's VmRSS
// and live heap; with CAPBROKER_MEMORY_PROFILES=DIR, each child writes
// its heap profile there (go tool pprof -sample_index=inuse_space).
//
//	go test ./gateway -run '^$' -bench RankingMemory -benchtime 1x
func BenchmarkRankingMemory(b *testing.B) {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	profiles := os.Getenv("CAPBROKER_MEMORY_PROFILES")
	var db string
	run := func(name, ranker string) memoryFigures {
		cmd := exec.Command(exe)
		cmd.Env = append(os.Environ(), memoryEnv+"="+ranker, memoryEnv+"_DB="+db)
		if profiles != "" {
			cmd.Env = append(cmd.Env, memoryEnv+"_PROFILE="+filepath.Join(profiles, name+".pprof"))
		}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			b.Fatalf("%s: %v\n%s", name, err, stderr.Bytes())
		}
		var f memoryFigures
		if err := json.Unmarshal(out, &f); err != nil {
			b.Fatalf("%s: %v: %s", name, err, out)
		}
		b.Logf("%-12s RSS %5.1f MiB running, %5.1f after the collection (anon %5.1f, peak %5.1f), live heap %5.1f MiB, heap from the OS %5.1f (%.1f released), %d cards embedded, %.2f s CPU",
			name, f.Before, f.RSS, f.RSSAnon, f.HWM, f.Heap, f.HeapSys, f.HeapReleased, f.Embedded, f.CPU)
		b.Logf("%-12s resident MiB: anonymous %.1f (the Go runtime holds about %.1f of it), the binary %.1f, other files %.1f",
			name, f.Mappings["anon"], f.Mappings["go"], f.Mappings["binary"], f.Mappings["files"])
		return f
	}
	for b.Loop() {
		db = filepath.Join(b.TempDir(), "capbroker.db") // a cold cache
		lex := run("lexical", "lexical")
		cold := run("hybrid-cold", "hybrid")
		warm := run("hybrid-warm", "hybrid")
		b.ReportMetric(lex.RSS, "lexical-RSS-MiB")
		b.ReportMetric(cold.RSS, "hybrid-cold-RSS-MiB")
		b.ReportMetric(warm.RSS, "hybrid-warm-RSS-MiB")
		b.ReportMetric(lex.Heap, "lexical-heap-MiB")
		b.ReportMetric(cold.Heap, "hybrid-cold-heap-MiB")
		b.ReportMetric(warm.Heap, "hybrid-warm-heap-MiB")
	}
}

// runMemoryChild is a child of [BenchmarkRankingMemory]: a gateway as
// capbroker gateway runs it (ranker lexical or hybrid, the card vectors
// cached in the database at $CAPBROKER_GATEWAY_TEST_MEMORY_DB), measured
// once it ranks as it will and has served a session and a find.
func runMemoryChild(ranker string) {
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const task = "what's it like outside in Lyon"
	huge := testServer("huge")
	huge.Env[testServerEnv+"_TOOLS"] = "1000"
	o := Options{Mode: ModeAuto, Task: task, StartTimeout: 5 * time.Minute,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if ranker == "hybrid" {
		enc, err := encoder.New(nil)
		if err != nil {
			fail(err)
		}
		cache, err := dense.OpenCache(ctx, os.Getenv(memoryEnv+"_DB"))
		if err != nil {
			fail(err)
		}
		defer cache.Close()
		o.Embedder, o.EmbedCache = enc, cache
	}
	g, err := New(&Config{Servers: []ServerConfig{huge}}, &o)
	if err != nil {
		fail(err)
	}
	defer g.Close()
	if err := g.Start(ctx); err != nil {
		fail(err)
	}
	if err := g.Ready(ctx); err != nil {
		fail(err)
	}
	for deadline := time.Now().Add(5 * time.Minute); ; time.Sleep(20 * time.Millisecond) {
		st := g.Ranking()
		if st.Cards >= 1007 && (ranker == "lexical" || st.ByMeaning) {
			break
		}
		if time.Now().After(deadline) {
			fail(fmt.Errorf("not settled: %+v", st))
		}
	}
	s, err := g.newSession(ctx, "", "", ModeAuto, true, "")
	if err != nil {
		fail(err)
	}
	ct, st := mcp.NewInMemoryTransports()
	go s.server.Run(ctx, st)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "memory", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		fail(err)
	}
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "find_capability", Arguments: map[string]any{"query": task}}); err != nil || res.IsError {
		fail(fmt.Errorf("find: %v %+v", err, res))
	}
	cs.Close()
	g.dropSession(s)

	var f memoryFigures
	f.Before = procStatus("VmRSS:")
	f.Heap, f.RSS = memory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	f.HeapSys, f.HeapReleased = float64(ms.HeapSys)/(1<<20), float64(ms.HeapReleased)/(1<<20)
	f.HWM, f.RSSAnon = procStatus("VmHWM:"), procStatus("RssAnon:")
	if b, err := os.ReadFile("/proc/self/stat"); err == nil {
		// Fields after the command's closing parenthesis; utime and stime
		// are the 14th and 15th of the line, in clock ticks (100 a second).
		fs := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		u, _ := strconv.ParseFloat(fs[11], 64)
		s, _ := strconv.ParseFloat(fs[12], 64)
		f.CPU = (u + s) / 100
	}
	f.Embedded = g.Ranking().Embedded
	f.Mappings = mappings()
	if p := os.Getenv(memoryEnv + "_PROFILE"); p != "" {
		pf, err := os.Create(p)
		if err != nil {
			fail(err)
		}
		if err := pprof.Lookup("heap").WriteTo(pf, 0); err != nil {
			fail(err)
		}
		pf.Close()
	}
	json.NewEncoder(os.Stdout).Encode(f)
}
