// Package export turns on OpenTelemetry tracing for a capbroker process:
// from the standard OTEL_* environment variables it builds a tracer
// provider that sends spans over OTLP/HTTP, installs it (and the W3C
// propagators) as the global provider package telemetry's spans go to,
// and flushes it, within a bound, on [Provider.Shutdown].
//
// Tracing is off, at no cost beyond a no-op call per span, unless an
// endpoint is set (OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT): capbroker never sends to the
// SDK's default localhost:4318 on its own. OTEL_SDK_DISABLED=true and
// OTEL_TRACES_EXPORTER=none turn it off too.
//
// Read (signal-specific OTEL_EXPORTER_OTLP_TRACES_* first, then
// OTEL_EXPORTER_OTLP_*): ENDPOINT, PROTOCOL (http/protobuf, the default,
// or http/json; grpc is not built in and turns tracing off with a
// warning), HEADERS, TIMEOUT, COMPRESSION; OTEL_SERVICE_NAME (default
// capbroker), OTEL_RESOURCE_ATTRIBUTES, OTEL_TRACES_SAMPLER and
// OTEL_TRACES_SAMPLER_ARG, OTEL_PROPAGATORS (tracecontext, baggage,
// none). The SDK reads the rest itself (OTEL_BSP_*, certificates).
//
// Nothing here fails a command: a setting it cannot use is said on the
// warning stream and left out (or turns tracing off), and a collector
// that is down or slow costs at most [Options.ShutdownTimeout] at exit,
// with one line saying so.
package export
