package telemetry

import (
	"context"
	"errors"
	"os"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// ScopeName is the instrumentation scope of every capbroker span.
const ScopeName = "github.com/capbroker/capbroker"

// Span names of capbroker's own operations. HTTP spans are named
// "METHOD /route" and MCP spans "method target" (see the package doc).
const (
	SpanSelect        = "capbroker.select"
	SpanFind          = "capbroker.find"
	SpanRoute         = "capbroker.route"
	SpanPlan          = "capbroker.plan"
	SpanSessionStart  = "capbroker.session.start"
	SpanSessionResume = "capbroker.session.resume"
	SpanSessionFind   = "capbroker.session.find"
	SpanSessionCall   = "capbroker.session.call"
)

// Attribute keys capbroker defines (the capbroker.* namespace), for what
// no semantic convention names.
const (
	// Command is the CLI command a span of the capbroker command ran
	// ("capbroker select").
	Command = attribute.Key("capbroker.command")
	// Family is the task family a selection decided ("coding").
	Family = attribute.Key("capbroker.family")
	// SelectedCount and Selected are the tools a selection picked (the
	// hatch not counted), in order.
	SelectedCount = attribute.Key("capbroker.selected_count")
	Selected      = attribute.Key("capbroker.selected")
	// TokensExposed and TokensFull are the payload tokens of the exposed
	// tools and of the whole catalog.
	TokensExposed = attribute.Key("capbroker.tokens.exposed")
	TokensFull    = attribute.Key("capbroker.tokens.full")
	// AspectCount is how many steps a task was split into (set when more
	// than one).
	AspectCount = attribute.Key("capbroker.aspect_count")
	// Degraded is true when ranking failed and the full set was exposed.
	Degraded = attribute.Key("capbroker.degraded")
	// Ranker is the ranker's type ("rank.Index" lexical, "dense.Hybrid").
	Ranker = attribute.Key("capbroker.ranker")
	// FindK is how many capabilities a find asked for; MatchCount and
	// Matches what it found.
	FindK      = attribute.Key("capbroker.find.k")
	MatchCount = attribute.Key("capbroker.match_count")
	Matches    = attribute.Key("capbroker.matches")
	// SessionID is a capbroker session's ID, or a gateway session's name.
	SessionID = attribute.Key("capbroker.session.id")
	// Upstream names the MCP server a gateway request went to.
	Upstream = attribute.Key("capbroker.upstream")
	// GatewayMode is a gateway session's exposure mode (auto, search,
	// call, all).
	GatewayMode = attribute.Key("capbroker.gateway.mode")
	// RouteCapability, RouteAgent, RouteConfidence and RouteDefault
	// describe a routing decision.
	RouteCapability = attribute.Key("capbroker.route.capability")
	RouteAgent      = attribute.Key("capbroker.route.agent")
	RouteConfidence = attribute.Key("capbroker.route.confidence")
	RouteDefault    = attribute.Key("capbroker.route.default")
	// PlanTaskCount is how many tasks a plan has; PlanWarnings how many
	// warnings planning gave.
	PlanTaskCount = attribute.Key("capbroker.plan.task_count")
	PlanWarnings  = attribute.Key("capbroker.plan.warning_count")
)

// Keys of the OpenTelemetry semantic conventions for MCP and GenAI
// (semantic-conventions-genai; they left the semconv Go package after
// v1.41.0, so they are spelled here).
const (
	MCPMethodName      = attribute.Key("mcp.method.name")
	MCPSessionID       = attribute.Key("mcp.session.id")
	MCPProtocolVersion = attribute.Key("mcp.protocol.version")
	GenAIToolName      = attribute.Key("gen_ai.tool.name")
	GenAIPromptName    = attribute.Key("gen_ai.prompt.name")
	GenAIOperationName = attribute.Key("gen_ai.operation.name")
	RPCResponseStatus  = attribute.Key("rpc.response.status_code")
	// The model that answered a planning request and its token usage.
	GenAIResponseModel     = attribute.Key("gen_ai.response.model")
	GenAIUsageInputTokens  = attribute.Key("gen_ai.usage.input_tokens")
	GenAIUsageOutputTokens = attribute.Key("gen_ai.usage.output_tokens")
	// ExecuteTool is gen_ai.operation.name of a tool call.
	ExecuteTool = "execute_tool"
	// ToolError is error.type of a tool call answered with isError.
	ToolError = "tool_error"
)

// Tracer returns the tracer of capbroker's spans, from the global
// provider as it is now (so a provider set later, or replaced, is used).
func Tracer() trace.Tracer {
	return otel.GetTracerProvider().Tracer(ScopeName)
}

// Start starts a span named name as a child of ctx's span (an internal
// span unless opts say otherwise).
func Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	return Tracer().Start(ctx, name, opts...)
}

// End records err on span (status Error, error.type), if not nil, and
// ends it.
func End(span trace.Span, err error) {
	if err != nil && span.IsRecording() {
		Fail(span, ErrorType(err), err.Error())
	}
	span.End()
}

// Fail marks span failed: status Error with description msg, and
// error.type typ.
func Fail(span trace.Span, typ, msg string) {
	span.SetStatus(codes.Error, msg)
	span.SetAttributes(semconv.ErrorTypeKey.String(typ))
}

// ErrorType is the low-cardinality error.type of err: "timeout" for a
// deadline, "cancelled" for a cancellation, else err's Go type.
func ErrorType(err error) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "cancelled"
	}
	return semconv.ErrorType(err).Value.AsString()
}
