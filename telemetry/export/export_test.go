package export

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/capbroker/capbroker/internal/otlptest"
	"github.com/capbroker/capbroker/telemetry"
)

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name     string
		env      map[string]string
		on       bool
		endpoint string
		warn     string // a warning containing this; "" none
	}{
		{name: "nothing set", env: nil, on: false},
		{name: "endpoint", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, on: true, endpoint: "http://c:4318/v1/traces"},
		{name: "endpoint with slash", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318/"}, on: true, endpoint: "http://c:4318/v1/traces"},
		{name: "traces endpoint as is", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https://t/x"}, on: true, endpoint: "https://t/x"},
		{name: "disabled", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_SDK_DISABLED": "TRUE"}, on: false},
		{name: "exporter none", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_TRACES_EXPORTER": "none"}, on: false},
		{name: "exporter console", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_TRACES_EXPORTER": "console"}, on: false, warn: "OTEL_TRACES_EXPORTER=console: not supported"},
		{name: "exporter otlp and zipkin", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_TRACES_EXPORTER": "otlp,zipkin"}, on: true, endpoint: "http://c:4318/v1/traces", warn: "zipkin not supported"},
		{name: "grpc", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, on: false, warn: "OTEL_EXPORTER_OTLP_PROTOCOL=grpc: capbroker sends OTLP over HTTP only"},
		{name: "traces grpc", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc"}, on: false, warn: "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=grpc"},
		{name: "bad protocol", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "thrift"}, on: false, warn: "unknown protocol"},
		{name: "no scheme", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "c:4318"}, on: false, warn: "want an http:// or https:// URL"},
		{name: "bad header", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_HEADERS": "a=1,secretvalue"}, on: true, endpoint: "http://c:4318/v1/traces", warn: "OTEL_EXPORTER_OTLP_HEADERS: entry 2 is not key=value"},
		{name: "bad timeout", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_TIMEOUT": "5s"}, on: true, endpoint: "http://c:4318/v1/traces", warn: "OTEL_EXPORTER_OTLP_TIMEOUT=5s: want a positive number of milliseconds"},
		{name: "bad sampler", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_TRACES_SAMPLER": "xray"}, on: true, endpoint: "http://c:4318/v1/traces", warn: "OTEL_TRACES_SAMPLER=xray: not supported"},
		{name: "bad ratio", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_TRACES_SAMPLER": "traceidratio", "OTEL_TRACES_SAMPLER_ARG": "2"}, on: true, endpoint: "http://c:4318/v1/traces", warn: "OTEL_TRACES_SAMPLER_ARG=2"},
		{name: "b3 propagator", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_PROPAGATORS": "tracecontext,b3"}, on: true, endpoint: "http://c:4318/v1/traces", warn: "OTEL_PROPAGATORS: b3 not supported"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, warns := parse(env(tc.env))
			if c.on != tc.on || (tc.on && c.endpoint != tc.endpoint) {
				t.Errorf("on %v endpoint %q, want on %v endpoint %q", c.on, c.endpoint, tc.on, tc.endpoint)
			}
			all := strings.Join(warns, "\n")
			if tc.warn == "" && len(warns) > 0 || !strings.Contains(all, tc.warn) {
				t.Errorf("warnings %q, want one containing %q", warns, tc.warn)
			}
			if strings.Contains(all, "secretvalue") {
				t.Errorf("a warning repeats a header's text: %q", warns)
			}
		})
	}
}

func TestParseHeadersAndResource(t *testing.T) {
	c, warns := parse(env(map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT":       "http://c:4318",
		"OTEL_EXPORTER_OTLP_HEADERS":        "authorization=Bearer%20abc, x-a = 1",
		"OTEL_EXPORTER_OTLP_TRACES_HEADERS": "x-a=2",
		"OTEL_RESOURCE_ATTRIBUTES":          "deployment.environment=test,service.name=from-attrs",
		"OTEL_TRACES_SAMPLER":               "parentbased_traceidratio",
		"OTEL_TRACES_SAMPLER_ARG":           "0.25",
	}))
	if len(warns) > 0 {
		t.Fatalf("warnings: %q", warns)
	}
	if c.headers["authorization"] != "Bearer abc" || c.headers["x-a"] != "2" {
		t.Errorf("headers %q", c.headers)
	}
	if c.service != "from-attrs" || len(c.resource) != 1 || c.resource[0].Key != "deployment.environment" {
		t.Errorf("service %q resource %v", c.service, c.resource)
	}
	if c.samplerName != "parentbased_traceidratio" || !strings.Contains(c.sampler.Description(), "0.25") {
		t.Errorf("sampler %s: %s", c.samplerName, c.sampler.Description())
	}
	c, _ = parse(env(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_SERVICE_NAME": "gw", "OTEL_RESOURCE_ATTRIBUTES": "service.name=x"}))
	if c.service != "gw" {
		t.Errorf("OTEL_SERVICE_NAME: service %q", c.service)
	}
}

// TestExport sends a span to a real receiver in each wire format.
func TestExport(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
	}{
		{"protobuf", nil},
		{"json", map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}},
		{"gzip", map[string]string{"OTEL_EXPORTER_OTLP_COMPRESSION": "gzip"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rcv := otlptest.New(t)
			e := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": rcv.URL, "OTEL_EXPORTER_OTLP_HEADERS": "x-tenant=t1"}
			for k, v := range tc.env {
				e[k] = v
			}
			var warn bytes.Buffer
			p := Start(context.Background(), &Options{Getenv: env(e), Warn: &warn, ServiceVersion: "v9"})
			if !p.Enabled() {
				t.Fatalf("not enabled: %s", warn.String())
			}
			ctx, parent := telemetry.Start(context.Background(), "outer")
			_, child := telemetry.Start(ctx, telemetry.SpanSelect)
			child.SetAttributes(telemetry.Family.String("coding"))
			child.End()
			parent.End()
			if err := p.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
			if warn.Len() > 0 {
				t.Errorf("warnings: %s", warn.String())
			}
			spans := rcv.Spans()
			if len(spans) != 2 {
				t.Fatalf("received %d spans, want 2: %+v", len(spans), spans)
			}
			sel, outer := spans[0], spans[1]
			if sel.Name != telemetry.SpanSelect || outer.Name != "outer" || sel.ParentID != outer.SpanID || sel.TraceID != outer.TraceID || outer.ParentID != "" {
				t.Errorf("spans not linked: %+v", spans)
			}
			if sel.Str("capbroker.family") != "coding" || sel.Scope != telemetry.ScopeName {
				t.Errorf("span %+v", sel)
			}
			if sel.Resource["service.name"] != "capbroker" || sel.Resource["service.version"] != "v9" {
				t.Errorf("resource %v", sel.Resource)
			}
			if h := rcv.Headers(); len(h) == 0 || h[0].Get("X-Tenant") != "t1" {
				t.Errorf("OTEL_EXPORTER_OTLP_HEADERS not sent: %v", h)
			}
			// Off again after Shutdown.
			if _, s := telemetry.Start(context.Background(), "after"); s.IsRecording() {
				t.Error("a span records after Shutdown")
			}
		})
	}
}

// TestOff: with no endpoint nothing is installed and spans do not record.
func TestOff(t *testing.T) {
	for _, e := range []map[string]string{
		nil,
		{"OTEL_SERVICE_NAME": "x", "OTEL_TRACES_SAMPLER": "always_on"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_SDK_DISABLED": "true"},
	} {
		var warn bytes.Buffer
		p := Start(context.Background(), &Options{Getenv: env(e), Warn: &warn})
		if p.Enabled() || p.Endpoint() != "" {
			t.Errorf("%v: enabled", e)
		}
		if _, s := telemetry.Start(context.Background(), "x"); s.IsRecording() || s.SpanContext().IsValid() {
			t.Errorf("%v: a span records with tracing off", e)
		}
		if err := p.Shutdown(context.Background()); err != nil || warn.Len() > 0 {
			t.Errorf("%v: shutdown %v, warnings %q", e, err, warn.String())
		}
	}
}

// TestCollectorDown: a refused connection and a collector that never
// answers each cost one line and an error from Shutdown, bounded by the
// shutdown timeout, never a hang.
func TestCollectorDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + ln.Addr().String()
	ln.Close()
	hang := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-hang:
		case <-r.Context().Done():
		}
	}))
	defer slow.Close()
	defer close(hang)
	for _, tc := range []struct{ name, url, want string }{
		{"refused", refused, "connection refused"},
		{"hangs", slow.URL, "no answer within 200ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var warn bytes.Buffer
			p := Start(context.Background(), &Options{Getenv: env(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": tc.url}), Warn: &warn, ShutdownTimeout: 200 * time.Millisecond})
			for range 3 {
				_, s := telemetry.Start(context.Background(), "x")
				s.End()
			}
			if err := p.Shutdown(context.Background()); err == nil {
				t.Fatalf("Shutdown: no error from a collector that is down; warned %q", warn.String())
			}
			out := warn.String()
			if strings.Count(out, "\n") != 1 || !strings.Contains(out, "capbroker: tracing: sending spans to "+tc.url+"/v1/traces") || !strings.Contains(out, tc.want) {
				t.Errorf("warning %q, want one line naming the endpoint and %q", out, tc.want)
			}
		})
	}
}
