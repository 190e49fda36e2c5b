// Package telemetry is capbroker's OpenTelemetry instrumentation: the
// tracer its packages start spans with, the span names and attribute keys
// they use, and the HTTP pieces that carry trace context in and out.
//
// It depends on the OpenTelemetry API only. Spans go to the global tracer
// provider, which is a no-op until a program sets one: the capbroker
// command does that through package telemetry/export when an OTLP endpoint
// is configured (OTEL_EXPORTER_OTLP_ENDPOINT), and a program embedding the
// library can set its own. Off, a span costs a no-op call and attributes
// are not computed ([Recording] guards them).
//
// # What is traced
//
//   - [SpanSelect] and [SpanFind] (capbroker.Broker.Select and Find), with
//     the family, the picks and their tokens ([SelectionAttrs],
//     [FindAttrs]);
//   - [SpanRoute] (route.Cache) and [SpanPlan] (plan.Planner);
//   - the session calls [SpanSessionStart], [SpanSessionResume],
//     [SpanSessionFind] and [SpanSessionCall] (package session);
//   - every HTTP API request ([Handler]: "POST /v1/select"), parented on
//     the caller's W3C traceparent header;
//   - in the gateway, every MCP request a client sends ("tools/call
//     github__create_issue", a SERVER span) and every request the gateway
//     sends an upstream ("tools/call create_issue", a CLIENT span), named
//     and attributed as the OpenTelemetry semantic conventions for MCP say
//     (mcp.method.name, gen_ai.tool.name, gen_ai.operation.name
//     "execute_tool", mcp.session.id, network.transport, error.type).
//     Trace context goes to upstreams in params._meta (traceparent) and,
//     over HTTP, in the traceparent header ([Transport]).
//
// What is never recorded: task and query text, tool arguments and
// results, headers, tokens. Names of tools, counts, families and modes
// are.
package telemetry
