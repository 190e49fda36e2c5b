package telemetry

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// Handler traces each request to next as a SERVER span named pattern
// ("POST /v1/select", a ServeMux pattern), a child of the trace context
// the request carries (W3C traceparent, through the global propagator).
// It records the method, route, path and status, never headers, query or
// body; a status of 500 or more fails the span.
func Handler(pattern string, next http.Handler) http.Handler {
	route := pattern
	if _, path, ok := strings.Cut(pattern, " "); ok {
		route = path
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := otel.GetTextMapPropagator().Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		ctx, span := Start(ctx, pattern, trace.WithSpanKind(trace.SpanKindServer))
		if !span.IsRecording() {
			// Off, or not sampled: a valid context still travels on.
			if span.SpanContext().IsValid() {
				r = r.WithContext(ctx)
			}
			next.ServeHTTP(w, r)
			span.End()
			return
		}
		span.SetAttributes(semconv.HTTPRequestMethodKey.String(r.Method), semconv.HTTPRouteKey.String(route),
			semconv.URLPathKey.String(r.URL.Path))
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			status := sw.status
			if status == 0 {
				status = http.StatusOK
			}
			span.SetAttributes(semconv.HTTPResponseStatusCodeKey.Int(status))
			if status >= 500 {
				Fail(span, strconv.Itoa(status), http.StatusText(status))
			}
			span.End()
		}()
		next.ServeHTTP(sw, r.WithContext(ctx))
	})
}

// statusWriter remembers the status written. Unwrap lets
// http.ResponseController reach the writer's Flush and deadlines.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Transport returns base (nil: http.DefaultTransport) adding the trace
// context of each request's context to its headers (traceparent,
// tracestate), so an upstream server continues the trace. With no span in
// the context, or tracing off, requests pass untouched.
func Transport(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return propagating{base}
}

type propagating struct{ base http.RoundTripper }

func (p propagating) RoundTrip(r *http.Request) (*http.Response, error) {
	if trace.SpanContextFromContext(r.Context()).IsValid() {
		h := propagation.HeaderCarrier(r.Header.Clone())
		otel.GetTextMapPropagator().Inject(r.Context(), h)
		r = r.Clone(r.Context())
		r.Header = http.Header(h)
	}
	return p.base.RoundTrip(r)
}

// MetaCarrier carries trace context in an MCP request's params._meta, the
// way the semantic conventions for MCP say: the W3C keys (traceparent,
// tracestate, baggage) unprefixed.
type MetaCarrier map[string]any

func (m MetaCarrier) Get(key string) string {
	s, _ := m[key].(string)
	return s
}

func (m MetaCarrier) Set(key, value string) { m[key] = value }

func (m MetaCarrier) Keys() []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}

// InjectMeta returns meta with ctx's trace context added, as a new map
// (meta is never changed); with no span in ctx, or no propagator set, it
// returns meta itself.
func InjectMeta(ctx context.Context, meta map[string]any) map[string]any {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return meta
	}
	p := otel.GetTextMapPropagator()
	if len(p.Fields()) == 0 {
		return meta
	}
	out := make(MetaCarrier, len(meta)+2)
	for k, v := range meta {
		out[k] = v
	}
	p.Inject(ctx, out)
	return out
}

// ExtractMeta returns ctx with the trace context meta carries, if any.
func ExtractMeta(ctx context.Context, meta map[string]any) context.Context {
	if len(meta) == 0 {
		return ctx
	}
	return otel.GetTextMapPropagator().Extract(ctx, MetaCarrier(meta))
}
