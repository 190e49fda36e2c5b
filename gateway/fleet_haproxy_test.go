package gateway

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/capbroker/capbroker/internal/testenv"
	"github.com/capbroker/capbroker/policy"
	"github.com/capbroker/capbroker/store"
	"github.com/capbroker/capbroker/store/postgres"
	"github.com/capbroker/capbroker/trace"
)

// replicaEnv makes the test binary run as one gateway replica of the
// fleet test (see runReplica); its value is the replica's configuration
// as JSON.
const replicaEnv = "CAPBROKER_GATEWAY_TEST_REPLICA"

type replicaConfig struct {
	Name, Addr, DSN, Schema string
}

// runReplica serves one gateway replica over HTTP, on PostgreSQL, in
// front of one test upstream, until SIGTERM (then it drains) or SIGKILL.
func runReplica(raw string) {
	var cfg replicaConfig
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		fmt.Fprintln(os.Stderr, "replica configuration:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	st, err := postgres.Open(ctx, cfg.DSN, &postgres.Options{Schema: cfg.Schema})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer st.Close()
	ss := NewStoreSessions(st, &StoreOptions{Task: "fleet test", Durable: true})
	defer ss.Close()
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	g, err := New(&Config{Servers: []ServerConfig{testServer("alpha")}},
		&Options{Mode: ModeAuto, Family: policy.General, Store: ss, Trace: ss, MaxSessions: 5000, Logger: logger})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := g.Start(context.WithoutCancel(ctx)); err != nil { // the drain needs the upstreams
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer g.Close()
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// Every client comes from HAProxy's address: the per-address quota
	// would bound them all together.
	h := g.Handler(&HTTPOptions{Replica: cfg.Name, MaxClientSessions: -1})
	if err := Serve(ctx, ln, h, &ServeOptions{Drain: g.DrainFunc(time.Second), DrainTimeout: 20 * time.Second}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// fleetReplica is one replica process of the fleet test.
type fleetReplica struct {
	name, addr string
	env        []string
	mu         sync.Mutex
	cmd        *exec.Cmd
	exited     chan struct{} // closed when cmd has exited
	log        *testenv.Buffer
}

func (r *fleetReplica) start(tb testing.TB) {
	tb.Helper()
	exe, err := os.Executable()
	if err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), r.env...)
	r.mu.Lock()
	if r.log == nil {
		r.log = &testenv.Buffer{}
	}
	cmd.Stdout, cmd.Stderr = r.log, r.log
	r.mu.Unlock()
	if err := cmd.Start(); err != nil {
		tb.Fatalf("starting replica %s: %v", r.name, err)
	}
	exited := make(chan struct{})
	r.mu.Lock()
	r.cmd, r.exited = cmd, exited
	r.mu.Unlock()
	go func() {
		cmd.Wait()
		close(exited)
	}()
}

// signal sends sig to the replica's process and returns a channel closed
// when it has exited.
func (r *fleetReplica) signal(sig os.Signal) <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cmd == nil {
		c := make(chan struct{})
		close(c)
		return c
	}
	r.cmd.Process.Signal(sig)
	return r.exited
}

// waitReady waits until url answers 200.
func waitReady(tb testing.TB, url string, within time.Duration) {
	tb.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		res, err := http.Get(url)
		if err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	tb.Fatalf("%s not ready within %s", url, within)
}

// fleetClient speaks MCP over streamable HTTP with no library: each
// request is one POST, retried on a failure of the transport or a 5xx
// (what a client does when a replica dies), so every error is counted by
// kind.
type fleetClient struct {
	http    *http.Client
	url     string
	id      string // Mcp-Session-Id
	replica string // the replica that opened the session
	next    int
	stats   *fleetStats
	calls   int // calls answered correctly
	finds   int
	found   bool // echo found
	after   map[string]bool
}

type fleetStats struct {
	mu      sync.Mutex
	lat     []time.Duration // of requests answered
	errs    map[string]int
	ok      atomic.Int64
	served  map[string]int // requests answered, by replica
	retried atomic.Int64
}

func (s *fleetStats) err(kind string) {
	s.mu.Lock()
	s.errs[kind]++
	s.mu.Unlock()
}

var errGiveUp = errors.New("gave up")

// rpc sends one JSON-RPC request (or notification, id < 0) and returns
// its result.
func (c *fleetClient) rpc(ctx context.Context, method string, params any) (json.RawMessage, string, error) {
	c.next++
	msg := map[string]any{"jsonrpc": "2.0", "method": method, "params": params}
	notify := strings.HasPrefix(method, "notifications/")
	if !notify {
		msg["id"] = c.next
	}
	body, _ := json.Marshal(msg)
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			c.stats.retried.Add(1)
			select {
			case <-time.After(time.Duration(100+mrand.IntN(200)) * time.Millisecond):
			case <-ctx.Done():
				return nil, "", errGiveUp
			}
		}
		if attempt > 60 || ctx.Err() != nil {
			return nil, "", errGiveUp
		}
		rctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		req, _ := http.NewRequestWithContext(rctx, http.MethodPost, c.url, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if c.id != "" {
			req.Header.Set("Mcp-Session-Id", c.id)
			req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		}
		start := time.Now()
		res, err := c.http.Do(req)
		if err != nil {
			cancel()
			c.stats.err("transport: " + transportKind(err))
			if os.Getenv("CAPBROKER_FLEET_DEBUG") != "" {
				fmt.Fprintf(os.Stderr, "%s %s %s: %v\n", time.Now().Format("15:04:05.000"), c.id, method, err)
			}
			continue
		}
		data, err := io.ReadAll(res.Body)
		res.Body.Close()
		cancel()
		if err != nil {
			c.stats.err("transport: reading the response")
			continue
		}
		if res.StatusCode >= 500 {
			c.stats.err(fmt.Sprintf("http %d", res.StatusCode))
			continue
		}
		if res.StatusCode >= 400 {
			c.stats.err(fmt.Sprintf("http %d: %s", res.StatusCode, strings.TrimSpace(string(data))))
			return nil, "", fmt.Errorf("%s: %s", res.Status, data)
		}
		replica := res.Header.Get("Capbroker-Replica")
		if c.id == "" {
			c.id = res.Header.Get("Mcp-Session-Id")
			c.replica = replica
		}
		if notify {
			return nil, replica, nil
		}
		var resp struct {
			Result json.RawMessage
			Error  *struct {
				Code    int
				Message string
			}
		}
		payload := sseData(data)
		if err := json.Unmarshal(payload, &resp); err != nil || (resp.Result == nil && resp.Error == nil) {
			c.stats.err("truncated response")
			continue
		}
		if resp.Error != nil {
			c.stats.err(fmt.Sprintf("json-rpc %d", resp.Error.Code))
			return nil, replica, fmt.Errorf("%s: %s", method, resp.Error.Message)
		}
		c.stats.mu.Lock()
		c.stats.lat = append(c.stats.lat, time.Since(start))
		c.stats.served[replica]++
		c.stats.mu.Unlock()
		c.stats.ok.Add(1)
		return resp.Result, replica, nil
	}
}

func transportKind(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "connection closed"
	case errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	}
	return "other"
}

// sseData is the data of the last event of an event-stream body, or the
// body itself if it is JSON.
func sseData(b []byte) []byte {
	if len(b) > 0 && b[0] == '{' {
		return b
	}
	var last []byte
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if d, ok := bytes.CutPrefix(sc.Bytes(), []byte("data: ")); ok && len(d) > 0 {
			last = slices.Clone(d)
		}
	}
	return last
}

func (c *fleetClient) open(ctx context.Context) error {
	_, _, err := c.rpc(ctx, "initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "fleet-load", "version": "1"}})
	if err != nil {
		return err
	}
	_, _, err = c.rpc(ctx, "notifications/initialized", map[string]any{})
	return err
}

// tool calls a tool and returns its text, or an error for an error
// result.
func (c *fleetClient) tool(ctx context.Context, name string, args any) (string, string, error) {
	res, replica, err := c.rpc(ctx, "tools/call", map[string]any{"name": name, "arguments": args})
	if err != nil {
		return "", replica, err
	}
	var r struct {
		IsError bool
		Content []struct{ Text string }
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return "", replica, err
	}
	var text string
	for _, p := range r.Content {
		text += p.Text
	}
	if r.IsError {
		c.stats.err("tool error")
		return "", replica, fmt.Errorf("%s: %s", name, text)
	}
	return text, replica, nil
}

// TestFleetHAProxy is the fleet on loopback: PostgreSQL, three gateway
// replicas (processes of this test binary) and HAProxy balancing every
// request round-robin, with no affinity. 200 clients open sessions and
// mix find_capability and calls of what they found for
// CAPBROKER_FLEET_SECONDS (60 by default) while one replica is killed
// with SIGKILL and restarted, and another is stopped with SIGTERM
// (drained) and restarted, as a rolling deploy does. Afterwards every
// session a client was answered for is in the database and served, every
// call answered is in the trace, and the sessions opened on the killed
// replica went on on the others. It logs the figures: requests per
// second, p50/p99 latency, errors by kind.
func TestFleetHAProxy(t *testing.T) {
	if testing.Short() {
		t.Skip("the fleet test runs for a minute; not with -short")
	}
	haproxy, err := exec.LookPath("haproxy")
	if err != nil {
		testenv.Missing(t, "HAProxy (scripts/setup.d/60-haproxy.sh installs it from Debian)")
	}
	dsn := testenv.Postgres(t)
	seconds := 60
	if s, err := strconv.Atoi(os.Getenv("CAPBROKER_FLEET_SECONDS")); err == nil && s > 0 {
		seconds = s
	}
	clients := 200
	if n, err := strconv.Atoi(os.Getenv("CAPBROKER_FLEET_CLIENTS")); err == nil && n > 0 {
		clients = n
	}
	var b [6]byte
	rand.Read(b[:])
	schema := "capbroker_fleet_" + hex.EncodeToString(b[:])
	defer func() {
		conn, err := pgx.Connect(context.Background(), dsn)
		if err == nil {
			conn.Exec(context.Background(), `DROP SCHEMA IF EXISTS `+pgx.Identifier{schema}.Sanitize()+` CASCADE`)
			conn.Close(context.Background())
		}
	}()
	// The schema exists before the replicas race to create it.
	st, err := postgres.Open(context.Background(), dsn, &postgres.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()

	replicas := make([]*fleetReplica, 3)
	for i := range replicas {
		r := &fleetReplica{name: fmt.Sprintf("r%d", i+1), addr: freePort(t)}
		cfg, _ := json.Marshal(replicaConfig{Name: r.name, Addr: r.addr, DSN: dsn, Schema: schema})
		r.env = []string{replicaEnv + "=" + string(cfg)}
		replicas[i] = r
		r.start(t)
		defer func() {
			<-r.signal(syscall.SIGKILL)
			if t.Failed() || os.Getenv("CAPBROKER_FLEET_DEBUG") != "" {
				t.Logf("replica %s log:\n%s", r.name, tail(r.log.String(), 6000))
			}
		}()
	}
	for _, r := range replicas {
		waitReady(t, "http://"+r.addr+"/readyz", 60*time.Second)
	}

	front, statsAddr := freePort(t), freePort(t)
	var cfg strings.Builder
	fmt.Fprintf(&cfg, `global
	maxconn 4096
defaults
	mode http
	timeout connect 1s
	timeout client 60s
	timeout server 30s
	retries 3
	option redispatch 1
	retry-on conn-failure empty-response junk-response 503
	option http-buffer-request
listen stats
	bind %s
	stats enable
	stats uri /stats
frontend fleet
	bind %s
	default_backend replicas
backend replicas
	balance roundrobin
	option httpchk
	http-check send meth GET uri /readyz ver HTTP/1.1 hdr Host localhost
	http-check expect status 200
	default-server inter 300ms fall 2 rise 2
`, statsAddr, front)
	for _, r := range replicas {
		fmt.Fprintf(&cfg, "\tserver %s %s check\n", r.name, r.addr)
	}
	cfgPath := filepath.Join(t.TempDir(), "haproxy.cfg")
	if err := os.WriteFile(cfgPath, []byte(cfg.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(haproxy, "-c", "-f", cfgPath).CombinedOutput(); err != nil {
		t.Fatalf("haproxy -c: %v\n%s", err, out)
	}
	hlog := &testenv.Buffer{}
	hp := exec.Command(haproxy, "-db", "-f", cfgPath)
	hp.Stdout, hp.Stderr = hlog, hlog
	if err := hp.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		hp.Process.Kill()
		hp.Wait()
	}()
	url := "http://" + front + "/mcp"
	waitReady(t, "http://"+front+"/healthz", 30*time.Second)

	stats := &fleetStats{errs: map[string]int{}, served: map[string]int{}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(seconds)*time.Second)
	defer cancel()
	transport := &http.Transport{MaxIdleConnsPerHost: clients, MaxConnsPerHost: 0, IdleConnTimeout: 30 * time.Second}
	defer transport.CloseIdleConnections()

	// The killed replica dies a third of the way in and comes back
	// after a sixth; the drained one a little after.
	killed, drained := replicas[1], replicas[2]
	var killedAt, restartedAt, drainedAt atomic.Int64
	go func() {
		d := time.Duration(seconds) * time.Second
		select {
		case <-time.After(d / 3):
		case <-ctx.Done():
			return
		}
		<-killed.signal(syscall.SIGKILL)
		killedAt.Store(time.Now().UnixNano())
		select {
		case <-time.After(d / 6):
		case <-ctx.Done():
			return
		}
		killed.start(t)
		restartedAt.Store(time.Now().UnixNano())
		select {
		case <-time.After(d / 6):
		case <-ctx.Done():
			return
		}
		<-drained.signal(syscall.SIGTERM)
		drainedAt.Store(time.Now().UnixNano())
		drained.start(t)
	}()

	all := make([]*fleetClient, clients)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range all {
		c := &fleetClient{http: &http.Client{Transport: transport}, url: url, stats: stats, after: map[string]bool{}}
		all[i] = c
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Clients arrive over the first seconds, as they would.
			time.Sleep(time.Duration(mrand.IntN(3000)) * time.Millisecond)
			if c.open(ctx) != nil || c.id == "" {
				return
			}
			for n := 0; ctx.Err() == nil; n++ {
				var replica string
				var err error
				switch {
				case !c.found || mrand.IntN(5) == 0:
					var text string
					text, replica, err = c.tool(ctx, policy.HatchName, map[string]any{"query": "echo the text back"})
					if err == nil {
						c.finds++
						if !strings.Contains(text, "alpha__echo") {
							stats.err("find without alpha__echo")
						} else {
							c.found = true
						}
					}
				default:
					want := fmt.Sprintf("%s-%d", c.id[:8], n)
					var text string
					text, replica, err = c.tool(ctx, "alpha__echo", map[string]any{"text": want})
					if err == nil {
						if text != "alpha: "+want {
							stats.err("wrong result")
						} else {
							c.calls++
						}
					}
				}
				if err == nil {
					if k := killedAt.Load(); k != 0 && time.Now().UnixNano() > k {
						c.after[replica] = true
					}
				}
				time.Sleep(time.Duration(20+mrand.IntN(80)) * time.Millisecond)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)

	// Figures.
	sort.Slice(stats.lat, func(i, j int) bool { return stats.lat[i] < stats.lat[j] })
	pct := func(p float64) time.Duration {
		if len(stats.lat) == 0 {
			return 0
		}
		return stats.lat[int(math.Min(float64(len(stats.lat)-1), p*float64(len(stats.lat))))]
	}
	var kinds []string
	for k, n := range stats.errs {
		kinds = append(kinds, fmt.Sprintf("%s: %d", k, n))
	}
	sort.Strings(kinds)
	opened, calls, finds := 0, 0, 0
	for _, c := range all {
		if c.id != "" {
			opened++
		}
		calls += c.calls
		finds += c.finds
	}
	t.Logf("fleet: start %s", start.Format("15:04:05.000"))
	at := func(ns int64) time.Duration {
		return time.Duration(ns - start.UnixNano()).Round(100 * time.Millisecond)
	}
	t.Logf("fleet: %d clients, %s, 3 replicas (%s killed -9 at %s and restarted at %s, %s drained (SIGTERM) and gone at %s, then restarted)",
		clients, elapsed.Round(time.Second), killed.name, at(killedAt.Load()), at(restartedAt.Load()), drained.name, at(drainedAt.Load()))
	t.Logf("fleet: %d requests answered, %.0f req/s, p50 %.1f ms, p99 %.1f ms; %d sessions, %d calls, %d finds answered; %d retries",
		stats.ok.Load(), float64(stats.ok.Load())/elapsed.Seconds(), ms(pct(0.50)), ms(pct(0.99)), opened, calls, finds, stats.retried.Load())
	t.Logf("fleet: answered by replica: %v", stats.served)
	t.Logf("fleet: errors by kind at the clients (each retried): %s", strings.Join(kinds, "; "))
	t.Logf("fleet: at HAProxy: %s", haproxyStats(t, "http://"+statsAddr+"/stats;csv"))
	if opened < clients*9/10 {
		t.Errorf("only %d of %d clients got a session", opened, clients)
	}
	for k, n := range stats.errs {
		if strings.HasPrefix(k, "http 4") || k == "wrong result" || k == "find without alpha__echo" || strings.HasPrefix(k, "json-rpc") || k == "tool error" {
			t.Errorf("%d errors a fleet must not give: %s", n, k)
		}
	}

	// Every session answered is in the database, its calls in the trace,
	// its finds in its tools; and it is served now.
	bg := context.Background()
	var missing, short, unserved, movedOn, onKilled int
	ms := store.MCPSessions(st)
	for _, c := range all {
		if c.id == "" {
			continue
		}
		m, err := ms.MCPSession(bg, c.id)
		if err != nil {
			missing++
			continue
		}
		if c.found && !slices.Contains(m.Exposed, "alpha__echo") {
			t.Errorf("session %s: find answered, alpha__echo not in its stored tools %v", c.id, m.Exposed)
		}
		recs, err := st.Traces(bg, &store.TraceQuery{SessionID: c.id, Kind: trace.KindCall})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, r := range recs {
			if r.Tool == "alpha__echo" {
				n++
			}
		}
		if n < c.calls {
			short++
			t.Errorf("session %s: %d calls answered, %d in the trace", c.id, c.calls, n)
		}
		if c.replica == killed.name {
			onKilled++
			for r := range c.after {
				if r != killed.name {
					movedOn++
					break
				}
			}
		}
		if c.found {
			c.next = 1000
			if _, _, err := c.tool(bg, "alpha__echo", map[string]any{"text": "after"}); err != nil {
				unserved++
				t.Errorf("session %s not served after the run: %v", c.id, err)
			}
		}
	}
	t.Logf("fleet: afterwards: %d sessions missing from the database, %d with calls missing from the trace, %d not served; %d of %d sessions opened on the killed replica went on on another",
		missing, short, unserved, movedOn, onKilled)
	if missing > 0 {
		t.Errorf("%d sessions answered are not in the database", missing)
	}
	if onKilled == 0 || movedOn < onKilled {
		t.Errorf("%d of %d sessions opened on the killed replica were served by another after", movedOn, onKilled)
	}
	if t.Failed() {
		t.Logf("haproxy log:\n%s", tail(hlog.String(), 3000))
	}
}

// haproxyStats sums what HAProxy's CSV statistics say of the replicas:
// the requests it retried (wretr) or sent to another replica (wredis),
// the connection and response errors it saw, and its 5xx answers.
func haproxyStats(tb testing.TB, url string) string {
	res, err := http.Get(url)
	if err != nil {
		return err.Error()
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) < 2 {
		return "no statistics"
	}
	cols := strings.Split(strings.TrimPrefix(lines[0], "# "), ",")
	want := []string{"wretr", "wredis", "econ", "eresp", "hrsp_5xx", "chkdown"}
	sum := map[string]int{}
	for _, l := range lines[1:] {
		f := strings.Split(l, ",")
		if len(f) < len(cols) || f[0] != "replicas" {
			continue
		}
		for i, c := range cols {
			// Transitions to down per replica; the rest for the backend.
			if slices.Contains(want, c) && (c == "chkdown") == (f[1] != "BACKEND") {
				n, _ := strconv.Atoi(f[i])
				sum[c] += n
			}
		}
	}
	return fmt.Sprintf("%d retries, %d redispatched, %d connection errors, %d response errors, %d 5xx to clients, %d replica transitions to down",
		sum["wretr"], sum["wredis"], sum["econ"], sum["eresp"], sum["hrsp_5xx"], sum["chkdown"])
}
