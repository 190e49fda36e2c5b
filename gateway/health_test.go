package gateway

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/capbroker/capbroker/policy"
)

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// TestHealthReady checks /healthz and /readyz: both answer without the
// bearer token; /readyz fails once the gateway drains, while the open
// session is still served and a new one is refused with 503.
func TestHealthReady(t *testing.T) {
	st := persistentStores[0].db(t)()
	t.Cleanup(func() { st.Close() })
	ss := NewStoreSessions(st, nil)
	t.Cleanup(func() { ss.Close() })
	g := startGateway(t, []ServerConfig{testServer("alpha")}, &Options{Mode: ModeSearch, Family: policy.General, Store: ss, Trace: ss})
	url := serveHTTP(t, g, &HTTPOptions{Token: "s3cret"})
	base := strings.TrimSuffix(url, "/mcp")

	if code, body := get(t, base+"/healthz"); code != 200 || body != "ok\n" {
		t.Errorf("/healthz: %d %q", code, body)
	}
	code, body := get(t, base+"/readyz")
	if code != 200 {
		t.Errorf("/readyz: %d %s", code, body)
	}
	if code, _ := get(t, base+"/status"); code != http.StatusUnauthorized {
		t.Errorf("/status without the token: %d, want 401", code)
	}
	cs := connect(t, url, nil, map[string]string{"Authorization": "Bearer s3cret"})

	g.Drain()
	code, body = get(t, base+"/readyz")
	var r struct {
		Ready bool
		Why   []string
	}
	json.Unmarshal([]byte(body), &r)
	if code != http.StatusServiceUnavailable || r.Ready || len(r.Why) != 1 || !strings.Contains(r.Why[0], "draining") {
		t.Errorf("/readyz while draining: %d %s", code, body)
	}
	if names := listNames(t, cs); len(names) == 0 {
		t.Error("the open session lists nothing while draining")
	}
	res, body := post(t, url, map[string]string{"Authorization": "Bearer s3cret"},
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if res.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "shutting down") {
		t.Errorf("a new session while draining: %s %s", res.Status, body)
	}
}

// TestDrainFinishesCalls stops a gateway while a call runs, one longer
// than the 5 s Serve used to wait: Serve returns only once the call has
// finished and been answered.
func TestDrainFinishesCalls(t *testing.T) {
	g := startGateway(t, []ServerConfig{testServer("alpha")}, &Options{Mode: ModeAll})
	ln, err := Listen("127.0.0.1:0", "")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, ln, g.Handler(nil), &ServeOptions{Drain: g.DrainFunc(0), DrainTimeout: time.Minute})
	}()
	cs := connect(t, "http://"+ln.Addr().String()+"/mcp", nil, nil)
	type result struct {
		res *mcp.CallToolResult
		err error
	}
	called := make(chan result, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "alpha__sleep", Arguments: map[string]any{"ms": 5500}})
		called <- result{res, err}
	}()
	for g.inflight.Load() == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	stop()
	if err := <-done; err != nil {
		t.Errorf("Serve: %v", err)
	}
	if n := g.inflight.Load(); n != 0 {
		t.Errorf("Serve returned with %d call(s) in flight", n)
	}
	r := <-called
	if r.err != nil || r.res.IsError || resultText(r.res) != "slept" {
		t.Fatalf("the call in flight at shutdown: %v %+v", r.err, r.res)
	}
}
