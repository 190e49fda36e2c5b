package httpapi_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/capbroker/capbroker/internal/otlptest"
	"github.com/capbroker/capbroker/telemetry/export"
)

// TestTracing sends API requests carrying a W3C traceparent to a server
// exporting to an in-process OTLP receiver, and checks each request's
// SERVER span continues the caller's trace and holds the span of the
// operation it ran.
func TestTracing(t *testing.T) {
	ts := sessionServer(t, newStore(t))
	rcv := otlptest.New(t)
	p := export.Start(context.Background(), &export.Options{Getenv: func(k string) string {
		if k == "OTEL_EXPORTER_OTLP_ENDPOINT" {
			return rcv.URL
		}
		return ""
	}})
	type want map[string]any
	cases := []struct {
		method, path, body string
		status             int
		route              string // http.route
		child              string // the operation's span; "" none
		attrs              want   // some of the child's attributes
	}{
		{"POST", "/v1/select", `{"task":"` + codingTask + `"}`, 200, "/v1/select", "capbroker.select",
			want{"capbroker.family": "coding", "capbroker.ranker": "rank.Index"}},
		{"POST", "/v1/find", `{"query":"who last changed a line of a file","k":2}`, 200, "/v1/find", "capbroker.find",
			want{"capbroker.find.k": int64(2), "capbroker.match_count": int64(2)}},
		{"POST", "/v1/route", `{"phase":"VERIFY"}`, 200, "/v1/route", "capbroker.route",
			want{"capbroker.route.capability": "code-review", "capbroker.route.agent": "review:code-reviewer", "capbroker.route.default": false}},
		{"POST", "/v1/sessions", `{"task":"` + codingTask + `","id":"otel-1"}`, 201, "/v1/sessions", "capbroker.session.start",
			want{"capbroker.session.id": "otel-1", "capbroker.family": "coding"}},
		{"POST", "/v1/sessions/otel-1/find", `{"query":"who last changed a line of a file","k":2}`, 200, "/v1/sessions/{id}/find", "capbroker.session.find",
			want{"capbroker.session.id": "otel-1", "capbroker.match_count": int64(2)}},
		{"POST", "/v1/sessions/otel-1/call", `{"tool":"git_blame"}`, 200, "/v1/sessions/{id}/call", "capbroker.session.call",
			want{"capbroker.session.id": "otel-1", "gen_ai.tool.name": "git_blame"}},
		{"POST", "/v1/sessions/otel-1/resume", ``, 200, "/v1/sessions/{id}/resume", "capbroker.session.resume",
			want{"capbroker.session.id": "otel-1"}},
		{"GET", "/v1/sessions/nope", ``, 404, "/v1/sessions/{id}", "", nil},
	}
	for i, c := range cases {
		tp := fmt.Sprintf("00-%032x-%016x-01", i+1, i+1)
		if status, body := do(t, ts, c.method, c.path, c.body, map[string]string{"traceparent": tp}); status != c.status {
			t.Fatalf("%s %s: status %d, want %d: %s", c.method, c.path, status, c.status, body)
		}
	}
	if err := p.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	spans := rcv.Spans()
	for i, c := range cases {
		t.Run(c.method+" "+c.path, func(t *testing.T) {
			traceID, parent := fmt.Sprintf("%032x", i+1), fmt.Sprintf("%016x", i+1)
			var srv, child []otlptest.Span
			for _, s := range spans {
				if s.TraceID != traceID {
					continue
				}
				switch {
				case s.Name == c.method+" "+c.route && s.ParentID == parent:
					srv = append(srv, s)
				case s.Name == c.child:
					child = append(child, s)
				}
			}
			if len(srv) != 1 {
				t.Fatalf("%d spans %q continuing trace %s, want 1 (spans: %+v)", len(srv), c.method+" "+c.route, traceID, spans)
			}
			s := srv[0]
			if s.Kind != "server" || s.Str("http.request.method") != c.method || s.Str("http.route") != c.route ||
				s.Str("url.path") != c.path || s.Attrs["http.response.status_code"] != int64(c.status) || s.Status == "error" {
				t.Errorf("server span %+v", s)
			}
			if c.child == "" {
				return
			}
			if len(child) != 1 || child[0].ParentID != s.SpanID {
				t.Fatalf("want one %s span under the request's: %+v", c.child, child)
			}
			for k, v := range c.attrs {
				if child[0].Attrs[k] != v {
					t.Errorf("%s: %s = %#v, want %#v", c.child, k, child[0].Attrs[k], v)
				}
			}
		})
	}
}
