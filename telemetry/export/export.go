package export

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace/noop"
)

// DefaultShutdownTimeout bounds the flush at exit when
// [Options.ShutdownTimeout] is zero.
const DefaultShutdownTimeout = 2 * time.Second

// Options configures [Start]. A nil *Options reads the process's
// environment and warns on os.Stderr.
type Options struct {
	// Getenv reads the environment. If nil, os.Getenv.
	Getenv func(string) string
	// Warn receives, one line each, the settings that could not be used
	// and the first failure to send spans. If nil, os.Stderr.
	Warn io.Writer
	// ServiceVersion is the resource's service.version.
	ServiceVersion string
	// ShutdownTimeout bounds [Provider.Shutdown]'s flush. If zero,
	// DefaultShutdownTimeout.
	ShutdownTimeout time.Duration
}

// Provider is the tracing of one process run. Its zero value, and the
// one [Start] returns when tracing is off, does nothing.
type Provider struct {
	tp       *sdktrace.TracerProvider // nil when off
	endpoint string                   // for messages, without user info
	timeout  time.Duration
	warn     io.Writer

	mu     sync.Mutex
	failed error // the first failure, the one line printed
}

// Start reads the OTEL_* configuration and, when it sets an endpoint,
// installs a tracer provider exporting over OTLP/HTTP as the global one
// (and the configured propagators as the global propagator). It never
// fails: what it cannot use is written to opts.Warn, and tracing stays
// off when it cannot export.
func Start(ctx context.Context, opts *Options) *Provider {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.Warn == nil {
		o.Warn = os.Stderr
	}
	if o.ShutdownTimeout <= 0 {
		o.ShutdownTimeout = DefaultShutdownTimeout
	}
	c, warns := parse(o.Getenv)
	for _, w := range warns {
		fmt.Fprintf(o.Warn, "capbroker: tracing: %s\n", w)
	}
	p := &Provider{timeout: o.ShutdownTimeout, warn: o.Warn}
	if !c.on {
		return p
	}
	eopts := []otlptracehttp.Option{otlptracehttp.WithEndpointURL(c.endpoint), otlptracehttp.WithHeaders(c.headers)}
	if c.json {
		eopts = append(eopts, otlptracehttp.WithEncoding(otlptracehttp.EncodingJSON))
	}
	if c.timeout > 0 {
		eopts = append(eopts, otlptracehttp.WithTimeout(c.timeout))
	}
	if c.gzip {
		eopts = append(eopts, otlptracehttp.WithCompression(otlptracehttp.GzipCompression))
	}
	exp, err := otlptracehttp.New(ctx, eopts...)
	if err != nil {
		fmt.Fprintf(o.Warn, "capbroker: tracing: creating the OTLP exporter for %s: %v; tracing is off\n", c.endpoint, err)
		return p
	}
	attrs := append(c.resource, semconv.ServiceName(c.service))
	if o.ServiceVersion != "" {
		attrs = append(attrs, semconv.ServiceVersion(o.ServiceVersion))
	}
	res, err := resource.New(ctx, resource.WithTelemetrySDK(), resource.WithSchemaURL(semconv.SchemaURL), resource.WithAttributes(attrs...))
	if err != nil {
		fmt.Fprintf(o.Warn, "capbroker: tracing: building the resource: %v; some of its attributes are left out\n", err)
	}
	p.endpoint = c.endpoint
	if u, err := url.Parse(c.endpoint); err == nil {
		p.endpoint = u.Redacted()
	}
	p.tp = sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res), sdktrace.WithSampler(c.sampler))
	var props []propagation.TextMapPropagator
	for _, name := range c.propagators {
		switch name {
		case "tracecontext":
			props = append(props, propagation.TraceContext{})
		case "baggage":
			props = append(props, propagation.Baggage{})
		}
	}
	otel.SetErrorHandler(otel.ErrorHandlerFunc(p.fail))
	otel.SetTracerProvider(p.tp)
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(props...))
	return p
}

// Enabled reports whether spans are exported.
func (p *Provider) Enabled() bool { return p != nil && p.tp != nil }

// Endpoint is the URL spans are sent to ("" when off).
func (p *Provider) Endpoint() string {
	if p == nil {
		return ""
	}
	return p.endpoint
}

// fail says, once, that spans could not be sent.
func (p *Provider) fail(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.failed != nil {
		return
	}
	p.failed = err
	fmt.Fprintf(p.warn, "capbroker: tracing: sending spans to %s: %v (later failures are not shown)\n", p.endpoint, err)
}

// Shutdown sends the spans not sent yet and stops exporting, giving up
// after the shutdown timeout (or when ctx ends); the global provider and
// propagator become no-ops again. A failure is written to the
// warning stream once, and the first one of the run (this or an earlier
// export's) is returned; it is never worth failing a command for.
func (p *Provider) Shutdown(ctx context.Context) error {
	if !p.Enabled() {
		return nil
	}
	// No-ops, not the provider before Start: the SDK's default global
	// delegates, once set, to the first provider for good.
	otel.SetTracerProvider(noop.NewTracerProvider())
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator())
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), p.timeout)
	defer cancel()
	err := p.tp.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("no answer within %s: %w", p.timeout, err)
	}
	if err != nil {
		p.fail(err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.failed
}
