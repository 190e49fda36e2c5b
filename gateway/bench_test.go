package gateway

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/capbroker/capbroker/index"
	"github.com/capbroker/capbroker/store/sqlite"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkOverhead measures what the gateway adds to a tools/call: each
// iteration calls the same stdio upstream's echo tool once directly (a Go
// SDK client over stdio) and once through the gateway (a Go SDK client
// over the SDK's in-memory transport to the gateway, which calls the
// upstream over stdio). It reports p50 and p99 of both, and the p50
// difference, in microseconds: with sessions in memory, and as the
// capbroker command runs it, with sessions and traces in SQLite and the
// pinned digests checked:
//
//	go test ./gateway -run '^$' -bench Overhead -benchtime 2000x
func BenchmarkOverhead(b *testing.B) {
	b.Run("memory", func(b *testing.B) { benchOverhead(b, &Options{}) })
	b.Run("sqlite+pins", func(b *testing.B) {
		dir := b.TempDir()
		st, err := sqlite.Open(context.Background(), filepath.Join(dir, "capbroker.db"), nil)
		if err != nil {
			b.Fatal(err)
		}
		defer st.Close()
		ss := NewStoreSessions(st, nil)
		defer ss.Close()
		ix, err := index.Open(filepath.Join(dir, "index"), nil)
		if err != nil {
			b.Fatal(err)
		}
		benchOverhead(b, &Options{Store: ss, Trace: ss, Pins: ix})
	})
}

func benchOverhead(b *testing.B, opts *Options) {
	ctx := context.Background()
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	// Direct: the same server program, its own process.
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), testServerEnv+"=echo")
	direct, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).
		Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer direct.Close()

	o := *opts
	o.Mode, o.Namespace = ModeAll, NamespaceCollisions
	g := startGateway(b, []ServerConfig{testServer("echo")}, &o)
	ct, st := mcp.NewInMemoryTransports()
	s, err := g.newSession(ctx, "bench", "", ModeAll, false, "")
	if err != nil {
		b.Fatal(err)
	}
	go s.server.Run(ctx, st)
	proxied, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer proxied.Close()

	params := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hello"}}
	call := func(cs *mcp.ClientSession) time.Duration {
		start := time.Now()
		res, err := cs.CallTool(ctx, params)
		d := time.Since(start)
		if err != nil || res.IsError {
			b.Fatalf("call: %v %+v", err, res)
		}
		return d
	}
	for range 50 { // warm up both paths
		call(direct)
		call(proxied)
	}
	ds := make([]time.Duration, 0, b.N)
	ps := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// Alternate the order so neither path always runs on a warmer cache.
		if i%2 == 0 {
			ds = append(ds, call(direct))
			ps = append(ps, call(proxied))
		} else {
			ps = append(ps, call(proxied))
			ds = append(ds, call(direct))
		}
	}
	b.StopTimer()
	dp50, dp99 := percentile(ds, 50), percentile(ds, 99)
	pp50, pp99 := percentile(ps, 50), percentile(ps, 99)
	b.ReportMetric(us(dp50), "direct-p50-µs")
	b.ReportMetric(us(dp99), "direct-p99-µs")
	b.ReportMetric(us(pp50), "gateway-p50-µs")
	b.ReportMetric(us(pp99), "gateway-p99-µs")
	b.ReportMetric(us(pp50-dp50), "added-p50-µs")
}

func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (len(s)*p + 99) / 100
	return s[min(max(i-1, 0), len(s)-1)]
}

func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1000 }

// BenchmarkSessionAll measures what one client session costs the gateway
// in all mode in front of a huge upstream (5,000 tools): the session's own
// MCP server with every tool listed, set up and torn down.
//
//	go test ./gateway -run '^$' -bench SessionAll -benchtime 5x -benchmem
func BenchmarkSessionAll(b *testing.B) {
	huge := testServer("huge")
	huge.Env[testServerEnv+"_TOOLS"] = "5000"
	g := startGateway(b, []ServerConfig{huge}, &Options{Mode: ModeAll, StartTimeout: 5 * time.Minute, CallTimeout: 5 * time.Minute})
	if n := len(g.Tools()); n < 5000 {
		b.Fatalf("%d tools", n)
	}
	ctx := context.Background()
	b.ResetTimer()
	for range b.N {
		s, err := g.newSession(ctx, "bench", "", ModeAll, true, "")
		if err != nil {
			b.Fatal(err)
		}
		g.dropSession(s)
	}
}

// BenchmarkRanking compares a lexical and a hybrid gateway (the built-in
// encoder, card vectors ready) in front of one upstream of 1,000 tools
// plus a few more: each iteration opens a session whose start selects for
// a task (initialize through the SDK's in-memory transport, the session's
// selection included) and calls find_capability once, on each gateway in
// turn. It reports the p50 of both, in microseconds. Every session starts
// with the gateway's task, as with --task, whose vector the gateway
// remembers after the first; every find asks a query not seen before, so
// it is embedded.
//
//	go test ./gateway -run '^$' -bench Ranking -benchtime 200x -cpu 1
func BenchmarkRanking(b *testing.B) {
	const task = "what's it like outside in Lyon"
	huge := meteo()
	huge.Env[testServerEnv+"_TOOLS"] = "1000"
	o := Options{Mode: ModeAuto, Task: task, StartTimeout: 5 * time.Minute}
	lex := startGateway(b, []ServerConfig{huge}, &o)
	o.Embedder = builtin(b)
	o.EmbedCache = openCache(b, filepath.Join(b.TempDir(), "capbroker.db"))
	hyb := startGateway(b, []ServerConfig{huge}, &o)
	for !hyb.Ranking().ByMeaning {
		time.Sleep(10 * time.Millisecond)
	}
	ctx := context.Background()
	n := 0
	session := func(g *Gateway) (time.Duration, time.Duration) {
		n++
		query := fmt.Sprintf("%s on day %d", task, n)
		start := time.Now()
		s, err := g.newSession(ctx, "", "", ModeAuto, true, "")
		if err != nil {
			b.Fatal(err)
		}
		ct, st := mcp.NewInMemoryTransports()
		go s.server.Run(ctx, st)
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, ct, nil)
		if err != nil {
			b.Fatal(err)
		}
		initd := time.Since(start)
		start = time.Now()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "find_capability", Arguments: map[string]any{"query": query}})
		found := time.Since(start)
		if err != nil || res.IsError {
			b.Fatalf("find: %v %+v", err, res)
		}
		cs.Close()
		g.dropSession(s)
		return initd, found
	}
	for range 5 {
		session(lex)
		session(hyb)
	}
	var li, lf, hi, hf []time.Duration
	b.ResetTimer()
	for range b.N {
		i, f := session(lex)
		li, lf = append(li, i), append(lf, f)
		i, f = session(hyb)
		hi, hf = append(hi, i), append(hf, f)
	}
	b.StopTimer()
	b.ReportMetric(us(percentile(li, 50)), "lexical-init-p50-µs")
	b.ReportMetric(us(percentile(hi, 50)), "hybrid-init-p50-µs")
	b.ReportMetric(us(percentile(lf, 50)), "lexical-find-p50-µs")
	b.ReportMetric(us(percentile(hf, 50)), "hybrid-find-p50-µs")
}
