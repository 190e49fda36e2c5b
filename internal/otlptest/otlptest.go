// Package otlptest is an in-process OTLP/HTTP trace receiver for tests:
// an httptest server that decodes each ExportTraceServiceRequest
// (protobuf or JSON, gzip or not) the way a collector does and keeps the
// spans, so a test can point OTEL_EXPORTER_OTLP_ENDPOINT at it and check
// names, parents and attributes.
package otlptest

import (
	"compress/gzip"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	common "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// Span is a received span, flattened.
type Span struct {
	Name string
	// Kind is "internal", "server", "client", "producer" or "consumer".
	Kind                      string
	TraceID, SpanID, ParentID string // hex; ParentID "" for a root
	Attrs                     map[string]any
	// Status is "unset", "ok" or "error"; StatusMessage its description.
	Status, StatusMessage string
	// Resource holds the resource's attributes, Scope the
	// instrumentation scope's name.
	Resource map[string]any
	Scope    string
}

// Str returns attribute key as a string ("" if absent or not a string).
func (s Span) Str(key string) string {
	v, _ := s.Attrs[key].(string)
	return v
}

// Receiver collects spans sent to URL + "/v1/traces".
type Receiver struct {
	// URL is the receiver's base URL, the value for
	// OTEL_EXPORTER_OTLP_ENDPOINT.
	URL string

	mu      sync.Mutex
	spans   []Span
	headers []http.Header
	errs    []error
}

// New starts a receiver, closed when the test ends. A request that is
// not a valid export fails the test.
func New(t testing.TB) *Receiver {
	t.Helper()
	r := &Receiver{}
	srv := httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(func() {
		srv.Close()
		r.mu.Lock()
		defer r.mu.Unlock()
		for _, err := range r.errs {
			t.Errorf("otlptest: %v", err)
		}
	})
	r.URL = srv.URL
	return r
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	err := r.receive(req)
	r.mu.Lock()
	r.headers = append(r.headers, req.Header.Clone())
	if err != nil {
		r.errs = append(r.errs, err)
	}
	r.mu.Unlock()
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", req.Header.Get("Content-Type"))
	if strings.Contains(req.Header.Get("Content-Type"), "json") {
		io.WriteString(w, "{}")
		return
	}
	b, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
	w.Write(b)
}

func (r *Receiver) receive(req *http.Request) error {
	if req.Method != http.MethodPost || req.URL.Path != "/v1/traces" {
		return fmt.Errorf("%s %s: want POST /v1/traces", req.Method, req.URL.Path)
	}
	var body io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(req.Body)
		if err != nil {
			return fmt.Errorf("gzip body: %w", err)
		}
		body = zr
	}
	b, err := io.ReadAll(body)
	if err != nil {
		return fmt.Errorf("reading the body: %w", err)
	}
	var ex coltrace.ExportTraceServiceRequest
	switch ct := req.Header.Get("Content-Type"); ct {
	case "application/x-protobuf":
		err = proto.Unmarshal(b, &ex)
	case "application/json":
		err = protojson.Unmarshal(b, &ex)
	default:
		return fmt.Errorf("content type %q", ct)
	}
	if err != nil {
		return fmt.Errorf("decoding the export: %w", err)
	}
	var got []Span
	for _, rs := range ex.ResourceSpans {
		res := attrs(rs.GetResource().GetAttributes())
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				got = append(got, Span{
					Name: s.Name, Kind: kind(s.Kind),
					TraceID: hex.EncodeToString(s.TraceId), SpanID: hex.EncodeToString(s.SpanId), ParentID: hex.EncodeToString(s.ParentSpanId),
					Attrs:  attrs(s.Attributes),
					Status: status(s.GetStatus().GetCode()), StatusMessage: s.GetStatus().GetMessage(),
					Resource: res, Scope: ss.GetScope().GetName(),
				})
			}
		}
	}
	r.mu.Lock()
	r.spans = append(r.spans, got...)
	r.mu.Unlock()
	return nil
}

// Spans returns every span received so far, in the order received.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Span(nil), r.spans...)
}

// Named returns the spans named name.
func (r *Receiver) Named(name string) []Span {
	var out []Span
	for _, s := range r.Spans() {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

// Headers returns the headers of every export request received.
func (r *Receiver) Headers() []http.Header {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]http.Header(nil), r.headers...)
}

func kind(k tracepb.Span_SpanKind) string {
	return strings.ToLower(strings.TrimPrefix(k.String(), "SPAN_KIND_"))
}

func status(c tracepb.Status_StatusCode) string {
	return strings.ToLower(strings.TrimPrefix(c.String(), "STATUS_CODE_"))
}

func attrs(kvs []*common.KeyValue) map[string]any {
	m := make(map[string]any, len(kvs))
	for _, kv := range kvs {
		m[kv.Key] = value(kv.Value)
	}
	return m
}

func value(v *common.AnyValue) any {
	switch x := v.GetValue().(type) {
	case *common.AnyValue_StringValue:
		return x.StringValue
	case *common.AnyValue_BoolValue:
		return x.BoolValue
	case *common.AnyValue_IntValue:
		return x.IntValue
	case *common.AnyValue_DoubleValue:
		return x.DoubleValue
	case *common.AnyValue_ArrayValue:
		var out []any
		for _, e := range x.ArrayValue.GetValues() {
			out = append(out, value(e))
		}
		return out
	case *common.AnyValue_BytesValue:
		return x.BytesValue
	}
	return nil
}
