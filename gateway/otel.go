package gateway

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"reflect"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/capbroker/capbroker/telemetry"
)

// OpenTelemetry spans of the gateway, as the semantic conventions for MCP
// name them: a SERVER span for each request or notification a client
// sends ("tools/call github__create_issue"), a CLIENT span for each one
// the gateway sends an upstream ("tools/call create_issue"), the first
// the parent of the second. Arguments, results and headers are never
// recorded. The JSON-RPC id (jsonrpc.request.id) is not: the SDK does
// not show it to middleware.

// traceServer is receiving middleware of a session's server. Its parent
// is the trace context in the request's params._meta, else the one in the
// HTTP request's traceparent header.
func (s *session) traceServer(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		extra := req.GetExtra()
		var link []trace.Link
		if prop := otel.GetTextMapPropagator(); len(prop.Fields()) > 0 {
			pctx := telemetry.ExtractMeta(ctx, metaOf(req.GetParams()))
			if extra != nil && extra.Header != nil {
				hctx := prop.Extract(ctx, propagation.HeaderCarrier(extra.Header))
				hsc := trace.SpanContextFromContext(hctx)
				switch psc := trace.SpanContextFromContext(pctx); {
				case !psc.IsValid():
					pctx = hctx
				case hsc.IsValid() && !hsc.Equal(psc):
					link = append(link, trace.Link{SpanContext: hsc})
				}
			}
			ctx = pctx
		}
		ctx, span := telemetry.Start(ctx, method, trace.WithSpanKind(trace.SpanKindServer), trace.WithLinks(link...))
		if !span.IsRecording() {
			defer span.End()
			return next(ctx, method, req)
		}
		transport := semconv.NetworkTransportPipe
		if extra != nil && extra.Header != nil {
			transport = semconv.NetworkTransportTCP
		}
		span.SetAttributes(transport, telemetry.SessionID.String(s.key), telemetry.GatewayMode.String(string(s.mode)))
		if ss, ok := req.GetSession().(*mcp.ServerSession); ok {
			if id := ss.ID(); id != "" {
				span.SetAttributes(telemetry.MCPSessionID.String(id))
			}
			if ip := ss.InitializeParams(); ip != nil && ip.ProtocolVersion != "" {
				span.SetAttributes(telemetry.MCPProtocolVersion.String(ip.ProtocolVersion))
			}
		}
		nameSpan(span, method, req.GetParams())
		res, err := next(ctx, method, req)
		endMCP(span, res, err)
		return res, err
	}
}

// traceClient is sending middleware of an upstream's client: it adds the
// span's trace context to the request's params._meta (and, through
// [telemetry.Transport], to the HTTP request of a remote upstream).
func (u *upstream) traceClient(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		ctx, span := telemetry.Start(ctx, method, trace.WithSpanKind(trace.SpanKindClient))
		if !span.SpanContext().IsValid() {
			defer span.End()
			return next(ctx, method, req)
		}
		p := req.GetParams()
		if !isNil(p) {
			p.SetMeta(telemetry.InjectMeta(ctx, p.GetMeta()))
		}
		if span.IsRecording() {
			span.SetAttributes(u.spanAttrs()...)
			if cs, ok := req.GetSession().(*mcp.ClientSession); ok {
				if id := cs.ID(); id != "" {
					span.SetAttributes(telemetry.MCPSessionID.String(id))
				}
				if ir := cs.InitializeResult(); ir != nil && ir.ProtocolVersion != "" {
					span.SetAttributes(telemetry.MCPProtocolVersion.String(ir.ProtocolVersion))
				}
			}
			nameSpan(span, method, p)
		}
		res, err := next(ctx, method, req)
		endMCP(span, res, err)
		return res, err
	}
}

// spanAttrs describe the upstream: its name, the transport, and for a
// remote one the server's host and port.
func (u *upstream) spanAttrs() []attribute.KeyValue {
	a := []attribute.KeyValue{telemetry.Upstream.String(u.cfg.Name)}
	if u.cfg.URL == "" {
		return append(a, semconv.NetworkTransportPipe)
	}
	a = append(a, semconv.NetworkTransportTCP, semconv.NetworkProtocolNameKey.String("http"))
	if pu, err := url.Parse(u.cfg.URL); err == nil {
		host, port := pu.Hostname(), pu.Port()
		if port == "" {
			port = map[string]string{"http": "80", "https": "443"}[pu.Scheme]
		}
		a = append(a, semconv.ServerAddressKey.String(host))
		if n, err := strconv.Atoi(port); err == nil {
			a = append(a, semconv.ServerPortKey.Int(n))
		}
	}
	return a
}

// nameSpan names span "method target", target the tool or prompt the
// request is about, and sets mcp.method.name and gen_ai.* attributes.
func nameSpan(span trace.Span, method string, p mcp.Params) {
	span.SetAttributes(telemetry.MCPMethodName.String(method))
	var tool, prompt string
	switch p := p.(type) {
	case *mcp.CallToolParamsRaw:
		if p != nil {
			tool = p.Name
		}
	case *mcp.CallToolParams:
		if p != nil {
			tool = p.Name
		}
	case *mcp.GetPromptParams:
		if p != nil {
			prompt = p.Name
		}
	}
	switch {
	case tool != "":
		span.SetName(method + " " + tool)
		span.SetAttributes(telemetry.GenAIToolName.String(tool), telemetry.GenAIOperationName.String(telemetry.ExecuteTool))
	case prompt != "":
		span.SetName(method + " " + prompt)
		span.SetAttributes(telemetry.GenAIPromptName.String(prompt))
	}
}

// endMCP records the outcome and ends span: a JSON-RPC error by its code
// (error.type and rpc.response.status_code), a tool result with isError
// as "tool_error", any other failure by its kind ("timeout").
func endMCP(span trace.Span, res mcp.Result, err error) {
	defer span.End()
	if !span.IsRecording() {
		return
	}
	var werr *jsonrpc.Error
	switch {
	case errors.As(err, &werr):
		code := strconv.FormatInt(werr.Code, 10)
		span.SetAttributes(telemetry.RPCResponseStatus.String(code))
		telemetry.Fail(span, code, werr.Message)
	case err != nil:
		telemetry.Fail(span, telemetry.ErrorType(err), err.Error())
	default:
		if r, ok := res.(*mcp.CallToolResult); ok && r != nil && r.IsError {
			telemetry.Fail(span, telemetry.ToolError, "the tool answered with isError")
		}
	}
}

// metaOf returns p's _meta, nil for no params.
func metaOf(p mcp.Params) map[string]any {
	if isNil(p) {
		return nil
	}
	return p.GetMeta()
}

// isNil reports whether p is nil or a nil pointer (requests without
// params carry a typed nil).
func isNil(p mcp.Params) bool {
	if p == nil {
		return true
	}
	v := reflect.ValueOf(p)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// upstreamHTTPClient is the HTTP client of remote upstreams: it carries
// the trace context of each request in its traceparent header.
var upstreamHTTPClient = &http.Client{Transport: telemetry.Transport(nil)}
