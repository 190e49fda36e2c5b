package gateway

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// addChatty adds the tool chatty(n, later_ms): it sends n log messages
// ("line 0"…) and, when the call has a progress token, n progress
// notifications, then returns "said n" at once, so the last notification
// and the result leave the server back to back. With later_ms, it returns
// at once and logs the lines that long after, in no call.
func addChatty(s *mcp.Server) {
	type chattyArgs struct {
		N       int `json:"n"`
		LaterMS int `json:"later_ms,omitempty"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "chatty", Description: "Log n lines and report progress, then return."},
		func(ctx context.Context, req *mcp.CallToolRequest, a chattyArgs) (*mcp.CallToolResult, any, error) {
			if a.LaterMS > 0 {
				go func() {
					time.Sleep(time.Duration(a.LaterMS) * time.Millisecond)
					for i := range a.N {
						req.Session.Log(context.Background(), &mcp.LoggingMessageParams{Level: "info", Data: fmt.Sprintf("line %d", i)})
					}
				}()
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "will say"}}}, nil, nil
			}
			token := req.Params.GetProgressToken()
			for i := range a.N {
				if err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: fmt.Sprintf("line %d", i)}); err != nil {
					return nil, nil, err
				}
				if token != nil {
					if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: float64(i + 1), Total: float64(a.N)}); err != nil {
						return nil, nil, err
					}
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("said %d", a.N)}}}, nil, nil
		})
}

// completedEvents counts the events in a stream's bytes so far that the
// SDK could deliver (ended by a blank line, with data, named "message" or
// not named): those an eventTap must have seen before handing them on.
func completedEvents(stream string) int {
	n, data, other := 0, false, false
	lines := strings.Split(stream, "\n")
	for _, line := range lines[:len(lines)-1] { // the last is not ended
		line = strings.TrimRight(line, "\r")
		name, value, ok := strings.Cut(line, ":")
		switch {
		case line == "":
			if data && !other {
				n++
			}
			data, other = false, false
		case !ok:
			return n // the SDK reads no further
		case name == "data":
			data = true
		case name == "event":
			other = strings.TrimSpace(value) != "" && strings.TrimSpace(value) != "message"
		}
	}
	return n
}

// errAfter is a body that ends with err after its bytes.
type errAfter struct {
	r   io.Reader
	err error
}

func (e errAfter) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err == io.EOF {
		err = e.err
	}
	return n, err
}

// TestEventTap feeds event streams to an eventTap in chunks of several
// sizes. The bytes must pass through unchanged; each event the SDK would
// deliver must be seen once, with the data the SDK would give it, and
// before any byte that completes it can be read.
func TestEventTap(t *testing.T) {
	big := strings.Repeat("y", 100_000)
	reset := errors.New("connection reset")
	for _, tc := range []struct {
		name, in string
		err      error // the body's error after its bytes; nil: io.EOF
		max      int
		want     []string
	}{
		{"sdk", "event: message\nid: 1\ndata: {\"a\":1}\n\nevent: message\nid: 2\ndata: {\"b\":2}\n\n", nil, 0, []string{`{"a":1}`, `{"b":2}`}},
		{"crlf", "data: x\r\n\r\ndata:y\r\n\r\n", nil, 0, []string{"x", "y"}},
		{"lone cr is no line end", "data: x\r\rdata: y\r\r", nil, 0, []string{"x\r\rdata: y"}},
		{"multi-line data, trimmed", "data: a\ndata:  b \ndata:\n\n", nil, 0, []string{"a\nb\n"}},
		{"comments and other fields", ": ping\n\nretry: 500\nid: 3\n\ndatum: no\n\n", nil, 0, nil},
		{"named events", "event: endpoint\ndata: /messages\n\nevent: message\ndata: z\n\n", nil, 0, []string{"z"}},
		{"last event ended by eof", "data: x\n\ndata: y\n", nil, 0, []string{"x", "y"}},
		{"last line ended by eof", "data: x\n\ndata: y", nil, 0, []string{"x", "y"}},
		{"last event cut by an error", "data: x\n\ndata: y\n", reset, 0, []string{"x"}},
		{"a line without a colon ends the stream", "data: x\n\nbogus\n\ndata: y\n\n", nil, 0, []string{"x"}},
		{"an event too long ends the stream", "data: x\n\ndata: " + big + "\n\ndata: y\n\n", nil, 1000, []string{"x"}},
		{"a long event", "data: x\n\ndata: " + big + "\n\ndata: y\n\n", nil, 0, []string{"x", big, "y"}},
		{"empty", "", nil, 0, nil},
	} {
		for _, chunk := range []int{1, 7, 4096, 1 << 20} {
			t.Run(fmt.Sprintf("%s/read=%d", tc.name, chunk), func(t *testing.T) {
				var body io.Reader = strings.NewReader(tc.in)
				if chunk == 1 {
					body = iotest.OneByteReader(body)
				}
				if tc.err != nil {
					body = errAfter{body, tc.err}
				}
				var seen []string
				var out bytes.Buffer
				tap := &eventTap{body: io.NopCloser(body), max: tc.max, see: func(data []byte) {
					if n := completedEvents(out.String()); n > len(seen) {
						t.Errorf("event %d (%.20q) seen after %d events could be read", len(seen), data, n)
					}
					seen = append(seen, string(data))
				}}
				buf := make([]byte, chunk)
				var err error
				for err == nil {
					var n int
					n, err = tap.Read(buf)
					out.Write(buf[:n])
				}
				if want := cmp.Or(tc.err, io.EOF); err != want {
					t.Errorf("read ended with %v, want %v", err, want)
				}
				if out.String() != tc.in {
					t.Errorf("passed on %.60q, want %.60q", out.String(), tc.in)
				}
				if diff := gocmp.Diff(tc.want, seen); diff != "" {
					t.Errorf("events seen (-want +got):\n%.2000s", diff)
				}
			})
		}
	}
}

// TestNotificationsBeforeResult calls a tool that logs and reports
// progress up to the moment it returns, through the gateway, to a stdio
// upstream, a streamable HTTP one and an SSE one, many times; on the raw
// event stream of each call, every log message and progress notification
// must come before the result. Before the gateway forwarded them as they
// were read, the SDK's handlers could run after the result had been sent:
// the last message was lost on a closed stream or arrived after the
// result (the conformance suite's tools-call-with-logging failed about
// once in 20 runs under load).
func TestNotificationsBeforeResult(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "chatty", Version: "1"}, nil)
	addChatty(s)
	streamable := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(streamable.Close)
	sse := httptest.NewServer(mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(sse.Close)

	stdio := testServer("stdio")
	stdio.Env[testServerEnv+"_CHATTY"] = "1"
	g := startGateway(t, []ServerConfig{
		stdio,
		{Name: "http", URL: streamable.URL},
		{Name: "sse", URL: sse.URL, SSE: true},
	}, &Options{Mode: ModeAll})
	url := serveHTTP(t, g, nil)
	sid, status, body, err := rawSession(http.DefaultClient, url)
	if err != nil || status != http.StatusOK {
		t.Fatalf("opening a session: %d %s %v", status, body, err)
	}
	ctx := context.Background()
	res := postMsg(t, ctx, url, sid, map[string]any{"id": 2, "method": "logging/setLevel", "params": map[string]any{"level": "debug"}})
	io.Copy(io.Discard, res.Body)
	res.Body.Close()

	const n, calls = 4, 25
	id := 10
	for _, up := range []string{"stdio", "http", "sse"} {
		t.Run(up, func(t *testing.T) {
			for range calls {
				id++
				res := postMsg(t, ctx, url, sid, map[string]any{"id": id, "method": "tools/call", "params": map[string]any{
					"name": up + "__chatty", "arguments": map[string]any{"n": n}, "_meta": map[string]any{"progressToken": "p"},
				}})
				var got []string
				events := readEvents(res.Body, func(e sseEvent) bool { return strings.Contains(e.data, `"result"`) })
				res.Body.Close()
				for _, e := range events {
					var m struct {
						Method string
						Params struct {
							Data     string
							Progress float64
						}
						Result *mcp.CallToolResult
					}
					if err := json.Unmarshal([]byte(e.data), &m); err != nil {
						t.Fatalf("event %q: %v", e.data, err)
					}
					switch {
					case m.Method == "notifications/message":
						got = append(got, m.Params.Data)
					case m.Method == "notifications/progress":
						got = append(got, fmt.Sprint("progress ", m.Params.Progress))
					case m.Result != nil:
						got = append(got, "result: "+resultText(m.Result))
					}
				}
				var want []string
				for i := range n {
					want = append(want, fmt.Sprint("line ", i), fmt.Sprint("progress ", i+1))
				}
				want = append(want, fmt.Sprint("result: said ", n))
				if diff := gocmp.Diff(want, got); diff != "" {
					t.Fatalf("call %d: the call's stream (-want +got):\n%s\nevents: %v", id, diff, events)
				}
			}
		})
	}
}

// BenchmarkEventTap reads an event stream through an eventTap, and as it
// is ("plain"), for small events (log messages) and one large one (a big
// tool result).
func BenchmarkEventTap(b *testing.B) {
	event := func(size int) string {
		return "event: message\nid: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"" + strings.Repeat("x", size) + "\"}}\n\n"
	}
	for _, tc := range []struct {
		name   string
		stream string
	}{
		{"small", strings.Repeat(event(100), 1000)},
		{"large", event(1 << 20)},
	} {
		for _, tap := range []bool{false, true} {
			name := tc.name + "/plain"
			if tap {
				name = tc.name + "/tap"
			}
			b.Run(name, func(b *testing.B) {
				b.SetBytes(int64(len(tc.stream)))
				b.ReportAllocs()
				seen := 0
				for b.Loop() {
					var r io.Reader = strings.NewReader(tc.stream)
					if tap {
						r = &eventTap{body: io.NopCloser(r), see: func([]byte) { seen++ }}
					}
					if _, err := io.Copy(io.Discard, struct{ io.Reader }{r}); err != nil {
						b.Fatal(err)
					}
				}
				if tap && seen == 0 {
					b.Fatal("no event seen")
				}
			})
		}
	}
}

type fixedResponse struct {
	contentType, body string
}

func (f fixedResponse) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {f.contentType}}, Body: io.NopCloser(strings.NewReader(f.body)), Request: r}, nil
}

// TestTapEvents: the notifications of an event-stream response are
// seen, also when the server escapes "/" in JSON strings, and so are those
// of a GET whatever its content type (the legacy SSE transport reads any);
// responses in the stream are not, and nothing of a JSON response is.
func TestTapEvents(t *testing.T) {
	const stream = "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications\\/message\",\"params\":{\"level\":\"info\",\"data\":\"a\"}}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"p\",\"progress\":1}}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"notifications/message\"}]}}\n\n"
	notes := []string{"notifications/message", "notifications/progress"}
	for _, tc := range []struct {
		method, contentType string
		want                []string
	}{
		{http.MethodPost, "text/event-stream; charset=utf-8", notes},
		{http.MethodGet, "text/event-stream", notes},
		{http.MethodGet, "text/plain", notes},
		{http.MethodPost, "application/json", nil},
		{http.MethodGet, "application/json", nil},
	} {
		var seen []string
		c := &http.Client{Transport: tapEvents{fixedResponse{tc.contentType, stream}, func(m jsonrpc.Message) {
			switch m := m.(type) {
			case *jsonrpc.Request:
				seen = append(seen, m.Method)
			default:
				seen = append(seen, fmt.Sprintf("%T", m))
			}
		}}}
		req, _ := http.NewRequest(tc.method, "http://upstream.invalid/mcp", nil)
		res, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if string(b) != stream {
			t.Errorf("%s %s: body changed to %q", tc.method, tc.contentType, b)
		}
		if diff := gocmp.Diff(tc.want, seen); diff != "" {
			t.Errorf("%s %s: messages seen (-want +got):\n%s", tc.method, tc.contentType, diff)
		}
	}
}

// TestLogsOfNoCall: log messages an upstream sends while no call is in
// flight reach every session, in order.
func TestLogsOfNoCall(t *testing.T) {
	stdio := testServer("stdio")
	stdio.Env[testServerEnv+"_CHATTY"] = "1"
	g := startGateway(t, []ServerConfig{stdio}, &Options{Mode: ModeAll})
	url := serveHTTP(t, g, nil)
	type heard struct {
		sync.Mutex
		lines []string
	}
	var got [2]heard
	var sessions [2]*mcp.ClientSession
	for i := range sessions {
		h := &got[i]
		sessions[i] = connect(t, url, &mcp.ClientOptions{LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			h.Lock()
			h.lines = append(h.lines, fmt.Sprint(r.Params.Data))
			h.Unlock()
		}}, nil)
		if err := sessions[i].SetLoggingLevel(context.Background(), &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
			t.Fatal(err)
		}
	}
	if text, _ := callText(t, sessions[0], "chatty", map[string]any{"n": 5, "later_ms": 100}); text != "will say" {
		t.Fatalf("chatty said %q", text)
	}
	want := []string{"line 0", "line 1", "line 2", "line 3", "line 4"}
	for i := range got {
		h := &got[i]
		ok := soon(func() bool {
			h.Lock()
			defer h.Unlock()
			return len(h.lines) >= len(want)
		})
		h.Lock()
		if diff := gocmp.Diff(want, h.lines); !ok || diff != "" {
			t.Errorf("session %d heard (-want +got):\n%s", i, diff)
		}
		h.Unlock()
	}
}
