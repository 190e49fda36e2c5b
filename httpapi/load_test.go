package httpapi_test

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	capbroker "github.com/capbroker/capbroker"
	"github.com/capbroker/capbroker/internal/synth"
	"github.com/capbroker/capbroker/internal/testenv"
)

// TestLoad runs `capbroker serve` as its own process on a 5,000-card
// catalog and drives it from this process with 200 concurrent clients
// posting /v1/select for 20 s (CAPBROKER_LOAD_SECONDS overrides), over
// loopback. It requires zero errors and reports p50, p99, throughput and
// the server's resident memory (before, at its peak, after), next to the
// throughput of calling the library directly in the same run.
func TestLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("load test skipped in -short mode")
	}
	seconds := 20
	if s := os.Getenv("CAPBROKER_LOAD_SECONDS"); s != "" {
		fmt.Sscan(s, &seconds)
	}
	const clients, ncards = 200, 5000
	dir := t.TempDir()
	cards := synth.Cards(ncards, 1)
	tools := filepath.Join(dir, "tools.jsonl")
	var buf bytes.Buffer
	for _, c := range cards {
		line, _ := json.Marshal(map[string]any{"name": c.Name, "description": c.Description, "parameters": c.InputSchema})
		buf.Write(append(line, '\n'))
	}
	if err := os.WriteFile(tools, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := os.Getenv("CAPBROKER_LOAD_BIN")
	if bin == "" {
		bin = filepath.Join(dir, "capbroker")
		build := exec.Command("go", "build", "-o", bin, "./cmd/capbroker")
		build.Dir = testenv.Root()
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("building capbroker: %v\n%s", err, out)
		}
	}
	ranker := cmp.Or(os.Getenv("CAPBROKER_LOAD_RANKER"), "lexical") // lexical: the README's figures
	// A home of its own: the user's index and caches (or another test's,
	// written by another build in parallel) are not this test's to read.
	home := filepath.Join(dir, "home")
	env := append(os.Environ(), "CAPBROKER_RANKER="+ranker,
		"HOME="+home, "XDG_DATA_HOME="+filepath.Join(home, "data"), "XDG_CACHE_HOME="+filepath.Join(home, "cache"), "XDG_CONFIG_HOME="+filepath.Join(home, "config"))
	if ranker != "lexical" {
		embed := exec.Command(bin, "embed", "--tools", tools)
		embed.Env = env
		if out, err := embed.CombinedOutput(); err != nil {
			t.Fatalf("embedding the cards: %v\n%s", err, out)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := exec.CommandContext(ctx, bin, "serve", "--addr", "127.0.0.1:0", "--tools", tools)
	var stderr syncBuffer
	srv.Stderr = &stderr
	srv.Env = env
	stdout, _ := srv.StdoutPipe()
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Wait()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		srv.Wait()
		t.Fatalf("server did not start: %v\n%s", err, stderr.String())
	}
	m := regexp.MustCompile(`http://(\S+) `).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("no address in %q", line)
	}
	url := "http://" + m[1] + "/v1/select"
	tasks := synth.Tasks(1000, 2)

	// Over HTTP, from this process.
	tr := &http.Transport{MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients}
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	var (
		mu        sync.Mutex
		latencies []time.Duration
		errs      atomic.Int64
		firstErr  atomic.Value
		wg        sync.WaitGroup
	)
	// The server's resident memory, from /proc (Linux; 0 elsewhere).
	rss := func() int64 {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", srv.Process.Pid))
		if err != nil {
			return 0
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				var kb int64
				fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), &kb)
				return kb << 10
			}
		}
		return 0
	}
	// Warm up; with ranking by meaning, until the server reads the
	// cached vectors (a hit's reason then gives its similarity).
	for try := 0; ; try++ {
		res, err := client.Post(url, "application/json", strings.NewReader(`{"task":"warm up the server"}`))
		var body []byte
		if err == nil {
			body, _ = io.ReadAll(res.Body)
			res.Body.Close()
		}
		if ranker == "lexical" || bytes.Contains(body, []byte("similarity")) {
			break
		}
		if try == 300 {
			t.Fatalf("the server did not rank by meaning within a minute: %s", body)
		}
		time.Sleep(200 * time.Millisecond)
	}
	rssBefore := rss()
	var rssPeak atomic.Int64
	sampled := make(chan struct{})
	deadline := time.Now().Add(time.Duration(seconds) * time.Second)
	go func() {
		defer close(sampled)
		for time.Now().Before(deadline) {
			if r := rss(); r > rssPeak.Load() {
				rssPeak.Store(r)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}()
	start := time.Now()
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var local []time.Duration
			for i := c; time.Now().Before(deadline); i += clients {
				body, _ := json.Marshal(map[string]string{"task": tasks[i%len(tasks)]})
				t0 := time.Now()
				res, err := client.Post(url, "application/json", bytes.NewReader(body))
				if err == nil {
					_, err = io.Copy(io.Discard, res.Body)
					res.Body.Close()
					if err == nil && res.StatusCode != 200 {
						err = fmt.Errorf("status %d", res.StatusCode)
					}
				}
				if err != nil {
					errs.Add(1)
					firstErr.CompareAndSwap(nil, err.Error())
					continue
				}
				local = append(local, time.Since(t0))
			}
			mu.Lock()
			latencies = append(latencies, local...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	<-sampled
	rssAfter := rss()
	cancel()
	if n := errs.Load(); n > 0 {
		t.Errorf("%d errors under load (first: %v)", n, firstErr.Load())
	}
	if len(latencies) == 0 {
		t.Fatal("no request succeeded")
	}
	slices.Sort(latencies)
	pct := func(p float64) time.Duration { return latencies[int(p*float64(len(latencies)-1))] }
	httpRate := float64(len(latencies)) / elapsed.Seconds()

	// The library directly, same catalog, same tasks, same concurrency.
	b, err := capbroker.New(context.Background(), &capbroker.Options{Cards: cards, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	b.Select(context.Background(), tasks[0], nil) // count the full catalog's tokens once, as the server did
	var libN atomic.Int64
	libDeadline := time.Now().Add(time.Duration(max(seconds/4, 1)) * time.Second)
	libStart := time.Now()
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := c; time.Now().Before(libDeadline); i += clients {
				b.Select(context.Background(), tasks[i%len(tasks)], nil)
				libN.Add(1)
			}
		}()
	}
	wg.Wait()
	libRate := float64(libN.Load()) / time.Since(libStart).Seconds()
	t.Logf("HTTP (%s ranking): %d requests in %s by %d clients on %d cards: %.0f req/s, p50 %s, p99 %s, max %s, errors %d",
		ranker, len(latencies), elapsed.Round(time.Millisecond), clients, ncards, httpRate, pct(0.5), pct(0.99), latencies[len(latencies)-1], errs.Load())
	t.Logf("server RSS: %.0f MB before, %.0f MB at peak, %.0f MB after", float64(rssBefore)/(1<<20), float64(rssPeak.Load())/(1<<20), float64(rssAfter)/(1<<20))
	t.Logf("library: %.0f selects/s; HTTP reaches %.0f%% of the library's throughput", libRate, 100*httpRate/libRate)
}

// syncBuffer keeps the last 64 KiB a child process wrote, safe to read
// while the process still writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - 64<<10; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	return len(p), nil
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}
