package gateway

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/capbroker/capbroker/policy"
	"github.com/capbroker/capbroker/store"
)

// sseEvent is one server-sent event.
type sseEvent struct{ id, name, data string }

// readEvents reads server-sent events from r until it ends or stop
// returns true for one.
func readEvents(r io.Reader, stop func(sseEvent) bool) []sseEvent {
	var out []sseEvent
	var e sseEvent
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if e != (sseEvent{}) {
				out = append(out, e)
				if stop != nil && stop(e) {
					return out
				}
			}
			e = sseEvent{}
		case strings.HasPrefix(line, "id: "):
			e.id = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "event: "):
			e.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			e.data += strings.TrimPrefix(line, "data: ")
		}
	}
	return out
}

// post sends one JSON-RPC message to url and returns the response.
func postMsg(t *testing.T, ctx context.Context, url, session string, msg map[string]any) *http.Response {
	t.Helper()
	msg["jsonrpc"] = "2.0"
	body, _ := json.Marshal(msg)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// resume GETs url with Last-Event-ID.
func resume(t *testing.T, url, session, last string) (int, string, []sseEvent) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", session)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	req.Header.Set("Last-Event-ID", last)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b), nil
	}
	return res.StatusCode, res.Header.Get("Capbroker-Replica"), readEvents(res.Body, nil)
}

// TestFleetStreamResume: a client's call streams on replica A; the
// stream is cut after its first event; the client resumes it with
// Last-Event-ID on replica B, which replays the call's result that A sent
// after the cut. A resumption from events no longer kept is refused with
// a message that says so. Before streams were stored, B answered 400
// "stream replay unsupported".
func TestFleetStreamResume(t *testing.T) {
	open := persistentStores[1].db(t)
	replica := func(name string) (string, store.Store) {
		st := open()
		t.Cleanup(func() { st.Close() })
		ss := NewStoreSessions(st, &StoreOptions{Task: "stream test"})
		t.Cleanup(func() { ss.Close() })
		g := startGateway(t, []ServerConfig{testServer("alpha")}, &Options{Mode: ModeAuto, Family: policy.General, Store: ss, Trace: ss})
		return serveHTTP(t, g, &HTTPOptions{Replica: name}), st
	}
	urlA, _ := replica("a")
	urlB, stB := replica("b")
	ctx := context.Background()

	res := postMsg(t, ctx, urlA, "", map[string]any{"id": 1, "method": "initialize", "params": map[string]any{
		"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "resume-test", "version": "1"}}})
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	id := res.Header.Get("Mcp-Session-Id")
	if res.StatusCode != http.StatusOK || id == "" {
		t.Fatalf("initialize: %d, session %q", res.StatusCode, id)
	}
	res = postMsg(t, ctx, urlA, id, map[string]any{"method": "notifications/initialized", "params": map[string]any{}})
	res.Body.Close()

	// The call sleeps; the client reads the stream's priming event, then
	// the connection is cut.
	cctx, cut := context.WithCancel(ctx)
	res = postMsg(t, cctx, urlA, id, map[string]any{"id": 2, "method": "tools/call", "params": map[string]any{
		"name": CallName, "arguments": map[string]any{"name": "alpha__sleep", "arguments": map[string]any{"ms": 600}}}})
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("the call's answer is %q, not a stream", ct)
	}
	first := readEvents(res.Body, func(sseEvent) bool { return true })
	cut()
	res.Body.Close()
	if len(first) != 1 || first[0].id == "" || first[0].data != "" {
		t.Fatalf("the stream's first event is %+v, want a priming event with an ID", first)
	}

	// The client resumes on B until the result is there (A sends it
	// after the cut), as the SDK's client retries a resumption.
	var got []sseEvent
	var served string
	eventually(t, "replica B replays the call's result", func() bool {
		code, who, events := resume(t, urlB, id, first[0].id)
		if code != http.StatusOK {
			t.Fatalf("resuming on B: %d %s", code, who)
		}
		got, served = events, who
		return len(got) > 0
	})
	if served != "b" {
		t.Errorf("the resumption was served by %q, not B", served)
	}
	var msg struct {
		ID     int                `json:"id"`
		Result mcp.CallToolResult `json:"result"`
	}
	if err := json.Unmarshal([]byte(got[len(got)-1].data), &msg); err != nil || msg.ID != 2 {
		t.Fatalf("replayed %+v (%v), want the result of call 2", got, err)
	}
	if tc, ok := msg.Result.Content[0].(*mcp.TextContent); !ok || tc.Text != "slept" || msg.Result.IsError {
		t.Errorf("the replayed result is %+v", msg.Result)
	}
	stream, _, _ := strings.Cut(first[0].id, "_")
	if want := stream + "_1"; got[len(got)-1].id != want {
		t.Errorf("the replayed event's ID is %q, want %q", got[len(got)-1].id, want)
	}

	// Events no longer kept: a clear refusal, not a hang.
	for _, tc := range []struct{ name, last, want string }{
		{"a stream never sent", "nosuchstream_3", "no event of it is kept"},
		{"an event never sent", stream + "_9", "was never sent"},
	} {
		code, body, _ := resume(t, urlB, id, tc.last)
		if code != http.StatusBadRequest || !strings.Contains(body, "cannot resume the stream") || !strings.Contains(body, tc.want) {
			t.Errorf("%s: %d %q", tc.name, code, body)
		}
	}
	ev := stB.(store.MCPEvents)
	if _, err := ev.TrimMCPEvents(ctx, 1000, time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	code, body, _ := resume(t, urlA, id, first[0].id)
	if code != http.StatusBadRequest || !strings.Contains(body, "were dropped") {
		t.Errorf("resuming after the retention dropped the events: %d %q", code, body)
	}
}

// TestStreamEventsRetention: a session keeps at most its newest events,
// and a resumption from before them is refused as dropped.
func TestStreamEventsRetention(t *testing.T) {
	st := persistentStores[1].db(t)()
	t.Cleanup(func() { st.Close() })
	ev := st.(store.MCPEvents)
	ms := st.(store.MCPSessions)
	ctx := context.Background()
	if err := ms.PutMCPSession(ctx, &store.MCPSession{ID: "s1", State: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if _, err := ev.AppendMCPEvents(ctx, "s1", "st", []byte{byte('a' + i)}); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := ev.TrimMCPEvents(ctx, 4, time.Now().Add(-time.Hour)); err != nil || n != 6 {
		t.Fatalf("trimmed %d (%v), want 6", n, err)
	}
	got, err := ev.MCPEventsAfter(ctx, "s1", "st", 6)
	if err != nil || string(bytes.Join(got, nil)) != "hij" {
		t.Errorf("after 6: %q (%v), want hij", got, err)
	}
	if _, err := ev.MCPEventsAfter(ctx, "s1", "st", 2); err == nil || !strings.Contains(err.Error(), "dropped") {
		t.Errorf("after 2 (dropped): %v", err)
	}
	if got, err := ev.MCPEventsAfter(ctx, "s1", "st", 9); err != nil || len(got) != 0 {
		t.Errorf("after the last: %q (%v)", got, err)
	}
	if _, err := ms.DeleteMCPSession(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	if n, err := ev.TrimMCPEvents(ctx, 4, time.Now().Add(-time.Hour)); err != nil || n != 4 {
		t.Errorf("trimmed %d of an ended session (%v), want 4", n, err)
	}
}

// cutAfterFirstEvent is a client transport that cuts the stream of the
// POST that calls cut after its first event, sends every request after
// it to next (another replica), and records the resumptions.
type cutAfterFirstEvent struct {
	b       *balancer
	cut     string // a POST whose body holds this is cut
	next    string
	mu      sync.Mutex
	resumes []string // "replica status" of each GET with Last-Event-ID
}

func (c *cutAfterFirstEvent) RoundTrip(r *http.Request) (*http.Response, error) {
	cutThis := false
	if r.Method == http.MethodPost && r.Body != nil {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		cutThis = strings.Contains(string(body), c.cut)
	}
	res, err := c.b.RoundTrip(r)
	if err != nil {
		return res, err
	}
	if r.Method == http.MethodGet && r.Header.Get("Last-Event-ID") != "" {
		c.mu.Lock()
		c.resumes = append(c.resumes, res.Header.Get("Capbroker-Replica")+" "+res.Status)
		c.mu.Unlock()
	}
	if cutThis {
		res.Body = &cutBody{r: bufio.NewReader(res.Body), c: res.Body, after: func() { c.b.to(c.next) }}
	}
	return res, nil
}

// cutBody passes its first event through, then fails as a dropped
// connection does.
type cutBody struct {
	r     *bufio.Reader
	c     io.Closer
	buf   []byte
	done  bool
	after func()
}

func (b *cutBody) Read(p []byte) (int, error) {
	if b.done && len(b.buf) == 0 {
		return 0, io.ErrUnexpectedEOF
	}
	if !b.done {
		for !bytes.HasSuffix(b.buf, []byte("\n\n")) {
			line, err := b.r.ReadBytes('\n')
			b.buf = append(b.buf, line...)
			if err != nil {
				break
			}
		}
		b.done = true
		b.c.Close()
		b.after()
	}
	n := copy(p, b.buf)
	b.buf = b.buf[n:]
	return n, nil
}

func (b *cutBody) Close() error { return b.c.Close() }

// TestFleetStreamResumeSDK: the Go SDK's own client (protocol
// 2025-11-25, the last with Last-Event-ID) calls a tool on replica A; its
// stream is cut after the priming event and the balancer now sends to
// replica B; the client resumes by itself with Last-Event-ID, B replays
// the result A sent after the cut, and the call returns it.
func TestFleetStreamResumeSDK(t *testing.T) {
	open := persistentStores[1].db(t)
	replica := func(name string) string {
		st := open()
		t.Cleanup(func() { st.Close() })
		ss := NewStoreSessions(st, nil)
		t.Cleanup(func() { ss.Close() })
		g := startGateway(t, []ServerConfig{testServer("alpha")}, &Options{Mode: ModeAuto, Family: policy.General, Store: ss, Trace: ss})
		return serveHTTP(t, g, &HTTPOptions{Replica: name})
	}
	urlA, urlB := replica("a"), replica("b")
	b := &balancer{}
	b.to(urlA)
	rt := &cutAfterFirstEvent{b: b, cut: `"ms":700`, next: urlB}
	c := mcp.NewClient(&mcp.Implementation{Name: "resume-sdk", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: "http://replica/mcp",
		HTTPClient: &http.Client{Transport: rt}, DisableStandaloneSSE: true}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: CallName, Arguments: map[string]any{"name": "alpha__sleep", "arguments": map[string]any{"ms": 700}}})
	rt.mu.Lock()
	resumes := slices.Clone(rt.resumes)
	rt.mu.Unlock()
	if err != nil {
		t.Fatalf("the call across the cut: %v (resumptions: %v)", err, resumes)
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); !ok || tc.Text != "slept" || res.IsError {
		t.Errorf("the call's result: %+v", res.Content)
	}
	if len(resumes) == 0 || !slices.Contains(resumes, "b 200 OK") {
		t.Errorf("resumptions %v, want one answered by replica b", resumes)
	}
	t.Logf("resumptions: %v", resumes)
}
