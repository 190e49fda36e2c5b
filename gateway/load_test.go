package gateway

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// rawSession opens an MCP session over streamable HTTP the way a client
// does (initialize, then notifications/initialized) without an SDK
// client, so a test can hold hundreds. It returns the session ID, or the
// status and body of a refusal.
func rawSession(c *http.Client, url string) (id string, status int, body string, err error) {
	post := func(sid, msg string) (*http.Response, string, error) {
		req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(msg))
		if err != nil {
			return nil, "", err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		}
		resp, err := c.Do(req)
		if err != nil {
			return nil, "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return resp, string(b), err
	}
	resp, b, err := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"load","version":"1"}}}`)
	if err != nil {
		return "", 0, "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", resp.StatusCode, b, nil
	}
	id = resp.Header.Get("Mcp-Session-Id")
	if id == "" || !strings.Contains(b, `"protocolVersion"`) {
		return "", resp.StatusCode, b, fmt.Errorf("initialize answered %q without a session", b)
	}
	resp, b, err = post(id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if err != nil {
		return "", 0, "", err
	}
	if resp.StatusCode != http.StatusAccepted {
		return "", resp.StatusCode, b, fmt.Errorf("initialized: %d %s", resp.StatusCode, b)
	}
	return id, http.StatusOK, "", nil
}

// memory returns the live heap and the process's resident set, in MiB,
// after a collection that returns freed memory to the OS.
func memory() (heap, rss float64) {
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return float64(ms.HeapAlloc) / (1 << 20), procStatus("VmRSS:")
}

// procStatus returns a line of /proc/self/status in MiB ("VmRSS:", say).
func procStatus(field string) float64 {
	b, _ := os.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == field {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}

// TestIdleSessionsLoad opens 500 MCP sessions over HTTP and leaves them
// idle: none is refused or fails, and once the idle timeout has passed
// every one is gone and the heap is back near where it started. (The old
// gateway kept idle sessions for a fixed hour, with no cap.)
func TestIdleSessionsLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("opens 500 sessions")
	}
	const n = 500
	const idle = 5 * time.Second
	g := startGateway(t, []ServerConfig{testServer("alpha")}, &Options{Mode: ModeSearch})
	url := serveHTTP(t, g, &HTTPOptions{SessionTimeout: idle, MaxClientSessions: -1})
	tr := &http.Transport{MaxIdleConnsPerHost: 32}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	if _, _, _, err := rawSession(c, url); err != nil { // warm up (token counter, SDK)
		t.Fatal(err)
	}
	eventually(t, "the warm-up session ends", func() bool { return len(g.liveSessions()) == 0 })
	heap0, rss0 := memory()

	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		errs   []string
		ids    = make(chan string, n)
		start  = time.Now()
		worker = make(chan struct{}, 16)
	)
	for range n {
		wg.Add(1)
		worker <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-worker }()
			id, status, body, err := rawSession(c, url)
			if err != nil || status != http.StatusOK {
				mu.Lock()
				errs = append(errs, fmt.Sprintf("%d %s %v", status, body, err))
				mu.Unlock()
				return
			}
			ids <- id
		}()
	}
	wg.Wait()
	opened := time.Since(start)
	if len(errs) > 0 {
		t.Fatalf("%d of %d sessions failed, e.g. %s", len(errs), n, errs[0])
	}
	// On a loaded machine the first sessions may reach their idle
	// timeout before the last is open; then not all are live at once.
	if live := len(g.liveSessions()); live != n && opened < idle-time.Second {
		t.Fatalf("%d live sessions, want %d", live, n)
	}
	heap1, rss1 := memory()
	tr.CloseIdleConnections()

	for i := 0; len(g.liveSessions()) > 0; i++ {
		if i == 200 {
			t.Fatalf("%d sessions still live %s after the %s idle timeout", len(g.liveSessions()), 200*50*time.Millisecond, idle)
		}
		time.Sleep(50 * time.Millisecond)
	}
	gone := time.Since(start)
	heap2, rss2 := memory()
	t.Logf("%d idle sessions opened in %s, 0 errors; all gone %s after the first opened (idle timeout %s)", n, opened.Round(time.Millisecond), gone.Round(time.Millisecond), idle)
	t.Logf("heap MiB: before %.1f, with %d sessions %.1f (%.1f KiB each), after the timeout %.1f", heap0, n, heap1, (heap1-heap0)*1024/n, heap2)
	t.Logf("RSS MiB:  before %.1f, with %d sessions %.1f, after the timeout %.1f", rss0, n, rss1, rss2)
	if grown := heap1 - heap0; heap2-heap0 > 0.25*grown+0.5 {
		t.Errorf("heap after the idle timeout %.1f MiB: more than a quarter of the %.1f MiB the sessions took stayed (before %.1f)", heap2, grown, heap0)
	}
}

// TestMaxSessions: with MaxSessions open, one more is refused with 503,
// saying why and which flag raises the bound; when one ends, a new one
// is accepted.
func TestMaxSessions(t *testing.T) {
	g := startGateway(t, nil, &Options{Mode: ModeSearch, MaxSessions: 3})
	url := serveHTTP(t, g, nil)
	c := &http.Client{}
	var ids []string
	for range 3 {
		id, status, body, err := rawSession(c, url)
		if err != nil || status != http.StatusOK {
			t.Fatalf("session %d: %d %s %v", len(ids)+1, status, body, err)
		}
		ids = append(ids, id)
	}
	_, status, body, err := rawSession(c, url)
	if err != nil || status != http.StatusServiceUnavailable || !strings.Contains(body, "--max-sessions") {
		t.Fatalf("a 4th session: %d %q %v; want 503 naming --max-sessions", status, body, err)
	}
	req, _ := http.NewRequest(http.MethodDelete, url, nil)
	req.Header.Set("Mcp-Session-Id", ids[0])
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	eventually(t, "the deleted session ends", func() bool { return len(g.liveSessions()) == 2 })
	if _, status, body, err := rawSession(c, url); err != nil || status != http.StatusOK {
		t.Fatalf("a session after one ended: %d %s %v", status, body, err)
	}
}
