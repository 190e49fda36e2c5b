package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/capbroker/capbroker/card"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// guard answers calls to tools this session was not given with an error
// that names find_capability (auto, search and call modes), and calls to tools
// held back (irreversible, changed since approved, new) with why and what
// releases them (every mode).
func (s *session) guard(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "initialize" && method != "ping" && !strings.HasPrefix(method, "notifications/") {
			// Answered at once, initialize never waits for upstreams; the
			// requests after it do, up to Options.StartWait after Start.
			s.g.awaitStart(ctx)
		}
		if method != "initialize" && method != "server/discover" {
			// The session is in use (clients of protocol 2026-07-28 and
			// later send no initialized notification).
			s.started()
		}
		if s.mode == ModeAll && method == "tools/list" {
			return s.listAll(req)
		}
		if method != "tools/call" {
			return next(ctx, method, req)
		}
		p, ok := req.GetParams().(*mcp.CallToolParamsRaw)
		if !ok {
			return next(ctx, method, req)
		}
		if s.mode == ModeAll {
			// Every offered tool is listed; a held one gets told why.
			if h, held := s.g.catalog().heldTool(p.Name); held {
				s.traceRefused(p.Name, "held", h.Why)
				return errorResult(h.Why), nil
			}
			s.registerAll(p.Name)
			return next(ctx, method, req)
		}
		s.mu.Lock()
		_, listed := s.listed[p.Name]
		s.mu.Unlock()
		if listed || isHatch(s.mode, p.Name) || s.routes(p.Name) {
			return next(ctx, method, req)
		}
		return s.notExposed(p.Name), nil
	}
}

func (s *session) notExposed(name string) *mcp.CallToolResult {
	how := "call find_capability with what you need; the tools it finds become callable"
	switch s.mode {
	case ModeCall:
		how = "call find_capability with what you need, then call what it finds with call_capability"
	case ModeAuto:
		how = "call find_capability with what you need, then call what it finds by name or with call_capability"
	}
	cat := s.g.catalog()
	if h, ok := cat.heldTool(name); ok {
		s.traceRefused(name, "held", h.Why)
		return errorResult(h.Why)
	}
	if _, ok := cat.tools[name]; !ok {
		msg := fmt.Sprintf("unknown tool %q: no server offers it; %s", name, how)
		s.traceRefused(name, "unknown", msg)
		return errorResult(msg)
	}
	msg := fmt.Sprintf("tool %q is not exposed in this session; %s", name, how)
	s.traceRefused(name, "not_exposed", msg)
	return errorResult(msg)
}

// traceRefused records a call the gateway refused without reaching an
// upstream.
func (s *session) traceRefused(name, outcome, msg string) {
	cat := s.g.catalog()
	exposed := s.exposedNames(cat)
	s.g.opts.Trace.Record(context.Background(), Event{Session: s.key, Kind: "call", Mode: string(s.mode), Tool: name,
		Outcome: outcome, Failure: msg, Exposed: exposed, TokensExposed: cat.tokens(exposed), TokensFull: cat.fullTokens,
		Finds: s.findCount()})
}
func errorResult(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
}

// callTool proxies a listed tool.
func (s *session) callTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return s.g.callTool(ctx, s, req.Session, req.Params.Name, req.Params.Arguments, req.Params.Meta)
}

// callTool runs the named gateway tool on its upstream, asking first when
// it is irreversible.
func (g *Gateway) callTool(ctx context.Context, s *session, ss *mcp.ServerSession, name string, args json.RawMessage, meta mcp.Meta) (*mcp.CallToolResult, error) {
	start := time.Now()
	cat := g.catalog()
	e, ok := cat.tools[name]
	if !ok {
		if h, held := cat.heldTool(name); held {
			s.traceRefused(name, "held", h.Why)
			return errorResult(h.Why), nil
		}
		msg := fmt.Sprintf("tool %q is no longer offered: its server stopped listing it", name)
		s.traceRefused(name, "unknown", msg)
		return errorResult(msg), nil
	}
	u := e.up
	exposed := s.exposedNames(cat)
	ev := Event{Session: s.key, Kind: "call", Mode: string(s.mode), Tool: name, ToolDigest: e.card.Digest, Upstream: u.cfg.Name,
		Exposed: exposed, TokensExposed: cat.tokens(exposed), TokensFull: cat.fullTokens, Finds: s.findCount()}
	record := func(outcome string) {
		ev.Outcome, ev.DurationMS = outcome, ms(time.Since(start))
		g.opts.Metrics.call(u.cfg.Name, outcome, time.Since(start))
		g.opts.Trace.Record(ctx, ev)
	}
	if e.card.Risk == card.RiskIrreversible {
		if msg := g.confirm(ctx, ss, e, args); msg != "" {
			record("denied")
			return errorResult(msg), nil
		}
	}
	var res *mcp.CallToolResult
	err := u.do(ctx, ss, meta, func(ctx context.Context, cs *mcp.ClientSession, m mcp.Meta) error {
		var a any
		if len(args) > 0 {
			a = args
		}
		var err error
		res, err = cs.CallTool(ctx, &mcp.CallToolParams{Meta: m, Name: e.tool.Name, Arguments: a})
		return err
	})
	if err != nil {
		if ctx.Err() != nil {
			record("cancelled")
			return nil, ctx.Err()
		}
		var werr *jsonrpc.Error
		if errors.As(err, &werr) {
			record("error")
			return nil, werr
		}
		outcome := "error"
		if errors.Is(err, context.DeadlineExceeded) {
			outcome = "timeout"
		}
		record(outcome)
		return errorResult(u.redact(g.explain(u, e.tool.Name, err))), nil
	}
	if res.IsError {
		record("tool_error")
	} else {
		record("ok")
	}
	return res, nil
}

// explain turns a failure to reach an upstream into a message a model and
// a person can act on.
func (g *Gateway) explain(u *upstream, tool string, err error) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("capbroker gateway: server %q did not answer %s within %s; the call was cancelled (%v)", u.cfg.Name, tool, u.timeout, err)
	case errors.Is(err, ErrUpstreamDown):
		return fmt.Sprintf("capbroker gateway: server %q is not connected and is being restarted; try again shortly (%v)", u.cfg.Name, err)
	case errors.Is(err, mcp.ErrConnectionClosed), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Sprintf("capbroker gateway: server %q closed the connection during %s (it is being restarted; try again): %v", u.cfg.Name, tool, err)
	}
	return fmt.Sprintf("capbroker gateway: calling %s on server %q failed: %v", tool, u.cfg.Name, err)
}
