package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// addChatty adds the tool chatty(n): it sends n log messages ("line 0"…)
// and, when the call has a progress token, n progress notifications, then
// returns "said n" at once, so the last notification and the result leave
// the server back to back.
func addChatty(s *mcp.Server) {
	type chattyArgs struct {
		N int `json:"n"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "chatty", Description: "Log n lines and report progress, then return."},
		func(ctx context.Context, req *mcp.CallToolRequest, a chattyArgs) (*mcp.CallToolResult, any, error) {
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

// TestEventTap feeds event streams to an eventTap whole and a byte at a
// time, and checks that the bytes pass through unchanged and that each
// event's data is seen once, before any byte of the event can be read.
func TestEventTap(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []string
	}{
		{"sdk", "event: message\nid: 1\ndata: {\"a\":1}\n\nevent: message\nid: 2\ndata: {\"b\":2}\n\n", []string{`{"a":1}`, `{"b":2}`}},
		{"crlf", "data: x\r\n\r\ndata:y\r\n\r\n", []string{"x", "y"}},
		{"cr", "data: x\r\rdata: y\r\r", []string{"x", "y"}},
		{"multi-line data", "data: a\ndata:  b\ndata\n\n", []string{"a\n b\n"}},
		{"no data, comments, other fields", ": ping\n\nretry: 500\nid: 3\n\ndatum: no\n\n", nil},
		{"partial last event", "data: x\n\ndata: y\n", []string{"x"}},
		{"empty", "", nil},
	} {
		for _, oneByte := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/onebyte=%v", tc.name, oneByte), func(t *testing.T) {
				var body io.Reader = strings.NewReader(tc.in)
				if oneByte {
					body = iotest.OneByteReader(body)
				}
				var seen []string
				var out bytes.Buffer
				tap := &eventTap{body: io.NopCloser(body), see: func(data []byte) {
					seen = append(seen, string(data))
					// Every event seen so far is whole in what is read next:
					// nothing of this one has been handed on yet.
					if strings.Contains(out.String(), string(data)) && string(data) != "" {
						t.Errorf("event %q seen after its bytes were read", data)
					}
				}}
				buf := make([]byte, 7)
				for {
					n, err := tap.Read(buf)
					out.Write(buf[:n])
					if err == io.EOF {
						break
					}
					if err != nil {
						t.Fatal(err)
					}
				}
				if out.String() != tc.in {
					t.Errorf("passed on %q, want %q", out.String(), tc.in)
				}
				if diff := cmp.Diff(tc.want, seen); diff != "" {
					t.Errorf("events seen (-want +got):\n%s", diff)
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
						Result json.RawMessage
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
						got = append(got, "result")
					}
				}
				var want []string
				for i := range n {
					want = append(want, fmt.Sprint("line ", i), fmt.Sprint("progress ", i+1))
				}
				want = append(want, "result")
				if diff := cmp.Diff(want, got); diff != "" {
					t.Fatalf("call %d: the call's stream (-want +got):\n%s", id, diff)
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

// TestTapEvents: an event-stream response's notifications are seen, also
// when the server escapes "/" in JSON strings; its responses are not, and
// nor is anything in a JSON response.
func TestTapEvents(t *testing.T) {
	const stream = "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications\\/message\",\"params\":{\"level\":\"info\",\"data\":\"a\"}}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"p\",\"progress\":1}}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"notifications/message\"}]}}\n\n"
	for _, tc := range []struct {
		contentType string
		want        []string
	}{
		{"text/event-stream; charset=utf-8", []string{"notifications/message", "notifications/progress"}},
		{"application/json", nil},
	} {
		var seen []string
		c := &http.Client{Transport: tapEvents{fixedResponse{tc.contentType, stream}, func(_ context.Context, m jsonrpc.Message) {
			if r, ok := m.(*jsonrpc.Request); ok {
				seen = append(seen, r.Method)
			}
		}}}
		res, err := c.Get("http://upstream.invalid/mcp")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if string(b) != stream {
			t.Errorf("%s: body changed to %q", tc.contentType, b)
		}
		if diff := cmp.Diff(tc.want, seen); diff != "" {
			t.Errorf("%s: notifications seen (-want +got):\n%s", tc.contentType, diff)
		}
	}
}
