package gateway

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/capbroker/capbroker/internal/otlptest"
	"github.com/capbroker/capbroker/telemetry"
	"github.com/capbroker/capbroker/telemetry/export"
)

// seen records the trace context a remote upstream received: the HTTP
// traceparent header of each POST and the params._meta traceparent of
// each tool call.
type seen struct {
	mu      sync.Mutex
	headers []string
	metas   []string
}

func (s *seen) reset() {
	s.mu.Lock()
	s.headers, s.metas = nil, nil
	s.mu.Unlock()
}

func (s *seen) get() (headers, metas []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.headers...), append([]string(nil), s.metas...)
}

// tracedUpstream serves greet (answers) and fail (answers with isError)
// over streamable HTTP, recording what trace context reaches it.
func tracedUpstream(t *testing.T) (string, *seen) {
	sn := &seen{}
	s := mcp.NewServer(&mcp.Implementation{Name: "web", Version: "1"}, nil)
	record := func(req *mcp.CallToolRequest) {
		tp, _ := req.Params.GetMeta()["traceparent"].(string)
		sn.mu.Lock()
		sn.metas = append(sn.metas, tp)
		sn.mu.Unlock()
	}
	mcp.AddTool(s, &mcp.Tool{Name: "greet", Description: "Greet someone by name."},
		func(_ context.Context, req *mcp.CallToolRequest, _ any) (*mcp.CallToolResult, any, error) {
			record(req)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello"}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "fail", Description: "Always fails."},
		func(_ context.Context, req *mcp.CallToolRequest, _ any) (*mcp.CallToolResult, any, error) {
			record(req)
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "secret detail"}}}, nil, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			sn.mu.Lock()
			sn.headers = append(sn.headers, r.Header.Get("traceparent"))
			sn.mu.Unlock()
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, sn
}

// TestTracing sends tool calls through the gateway, to a stdio and a
// streamable HTTP upstream, and checks the spans an OTLP receiver gets:
// one SERVER span per client request, parented on the client's
// params._meta, with one CLIENT span per upstream request under it; and
// the trace context the HTTP upstream receives. With tracing off, nothing
// reaches the upstream.
func TestTracing(t *testing.T) {
	webURL, sn := tracedUpstream(t)
	g := startGateway(t, []ServerConfig{testServer("one"), {Name: "web", URL: webURL}},
		&Options{Mode: ModeAll, CallTimeout: 300 * time.Millisecond})
	gwURL := serveHTTP(t, g, nil)
	cs := connect(t, gwURL, nil, nil)
	ctx := context.Background()

	// Off: no trace context is added on the way to the upstream.
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "web__greet"}); err != nil {
		t.Fatal(err)
	}
	headers, metas := sn.get()
	if strings.Join(headers, "")+strings.Join(metas, "") != "" {
		t.Fatalf("tracing off, yet the upstream got trace context: headers %q, _meta %q", headers, metas)
	}
	sn.reset()

	rcv := otlptest.New(t)
	p := export.Start(ctx, &export.Options{Getenv: func(k string) string {
		if k == "OTEL_EXPORTER_OTLP_ENDPOINT" {
			return rcv.URL
		}
		return ""
	}, Warn: newTestWriter(t)})
	const traceID, parentID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	meta := mcp.Meta{"traceparent": "00-" + traceID + "-" + parentID + "-01"}
	for _, c := range []struct {
		name string
		args any
	}{{"one__echo", map[string]any{"text": "hi"}}, {"web__greet", nil}, {"web__fail", nil}, {"one__sleep", map[string]any{"ms": 5000}}} {
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.name, Arguments: c.args, Meta: meta}); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
	}
	auto := connect(t, gwURL, nil, map[string]string{ModeHeader: "auto"})
	if _, err := auto.CallTool(ctx, &mcp.CallToolParams{Name: "find_capability", Arguments: map[string]any{"query": "echo text back"}, Meta: meta}); err != nil {
		t.Fatal(err)
	}
	if err := p.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}

	spans := rcv.Spans()
	byID := map[string]otlptest.Span{}
	for _, s := range spans {
		byID[s.SpanID] = s
	}
	// child returns the one span named name whose parent is parent.
	child := func(t *testing.T, parent otlptest.Span, name string) otlptest.Span {
		t.Helper()
		var got []otlptest.Span
		for _, s := range spans {
			if s.Name == name && s.ParentID == parent.SpanID {
				got = append(got, s)
			}
		}
		if len(got) != 1 {
			t.Fatalf("%d spans %q under %q, want 1; spans: %+v", len(got), name, parent.Name, spans)
		}
		return got[0]
	}
	client := otlptest.Span{SpanID: parentID}
	wu, _ := url.Parse(webURL)
	for _, tc := range []struct {
		tool, upTool, upstream, transport string
		errType                           string // of both spans; "" none
		upErrType                         string // of the upstream span, when it differs
	}{
		{tool: "one__echo", upTool: "echo", upstream: "one", transport: "pipe"},
		{tool: "web__greet", upTool: "greet", upstream: "web", transport: "tcp"},
		{tool: "web__fail", upTool: "fail", upstream: "web", transport: "tcp", errType: "tool_error"},
		// The upstream timed out; the client is told in a tool result.
		{tool: "one__sleep", upTool: "sleep", upstream: "one", transport: "pipe", errType: "tool_error", upErrType: "timeout"},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			srv := child(t, client, "tools/call "+tc.tool)
			want := map[string]string{"mcp.method.name": "tools/call", "gen_ai.tool.name": tc.tool, "gen_ai.operation.name": "execute_tool",
				"network.transport": "tcp", "capbroker.gateway.mode": "all", "error.type": tc.errType}
			for k, v := range want {
				if srv.Str(k) != v {
					t.Errorf("server span %s = %q, want %q", k, srv.Str(k), v)
				}
			}
			if srv.Kind != "server" || srv.TraceID != traceID || srv.Str("mcp.session.id") == "" || srv.Str("capbroker.session.id") == "" {
				t.Errorf("server span %+v", srv)
			}
			up := child(t, srv, "tools/call "+tc.upTool)
			upErr := tc.errType
			if tc.upErrType != "" {
				upErr = tc.upErrType
			}
			want = map[string]string{"mcp.method.name": "tools/call", "gen_ai.tool.name": tc.upTool, "gen_ai.operation.name": "execute_tool",
				"network.transport": tc.transport, "capbroker.upstream": tc.upstream, "error.type": upErr}
			if tc.transport == "tcp" {
				want["server.address"] = wu.Hostname()
				if up.Attrs["server.port"] != int64(mustPort(t, wu)) || up.Str("mcp.session.id") == "" {
					t.Errorf("upstream span lacks server.port or mcp.session.id: %v", up.Attrs)
				}
			}
			for k, v := range want {
				if up.Str(k) != v {
					t.Errorf("upstream span %s = %q, want %q", k, up.Str(k), v)
				}
			}
			if up.Kind != "client" || (upErr != "") != (up.Status == "error") || (tc.errType != "") != (srv.Status == "error") {
				t.Errorf("kinds or statuses: server %s %s, upstream %s %s", srv.Kind, srv.Status, up.Kind, up.Status)
			}
			if strings.Contains(srv.StatusMessage+up.StatusMessage, "secret detail") {
				t.Error("a span holds the tool's result")
			}
			if tc.upstream == "web" {
				tp := "00-" + traceID + "-" + up.SpanID + "-01"
				headers, metas := sn.get()
				if !contains(headers, tp) || !contains(metas, tp) {
					t.Errorf("the upstream got traceparent headers %q and _meta %q, want %s in both", headers, metas, tp)
				}
			}
		})
	}
	t.Run("find_capability", func(t *testing.T) {
		srv := child(t, client, "tools/call find_capability")
		// Two finds: in the catalog, and among the held tools.
		var found []string
		n := 0
		for _, s := range spans {
			if s.Name == telemetry.SpanFind && s.ParentID == srv.SpanID {
				n++
				found = append(found, anyStrings(s.Attrs["capbroker.matches"])...)
			}
		}
		if srv.Str("capbroker.gateway.mode") != "auto" || n != 2 || !contains(found, "one__echo") {
			t.Errorf("%d find spans under %v found %v, want 2 finding one__echo", n, srv.Attrs, found)
		}
	})
	// No span holds arguments.
	for _, s := range spans {
		for k, v := range s.Attrs {
			if str, ok := v.(string); ok && (str == "hi" || strings.Contains(str, "echo text back")) {
				t.Errorf("span %s attribute %s holds an argument: %q", s.Name, k, str)
			}
		}
	}
}

func mustPort(t *testing.T, u *url.URL) int {
	var n int
	for _, c := range u.Port() {
		n = n*10 + int(c-'0')
	}
	if n == 0 {
		t.Fatalf("no port in %s", u)
	}
	return n
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func anyStrings(v any) []string {
	var out []string
	l, _ := v.([]any)
	for _, x := range l {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}
