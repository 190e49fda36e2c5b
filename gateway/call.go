package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

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
		ss, _ := req.GetSession().(*mcp.ServerSession)
		if s.mode == ModeAll {
			// Every offered tool is listed; a held one gets told why, and
			// a name that is not a gateway name is resolved.
			if h, held := s.catalog().heldTool(p.Name); held {
				s.traceRefused(p.Name, "held", h.Why)
				return errorResult(h.Why), nil
			}
			if _, ok := s.catalog().tools[p.Name]; !ok {
				return s.callByName(ctx, ss, p.Name, p.Arguments, p.Meta)
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
		return s.callByName(ctx, ss, p.Name, p.Arguments, p.Meta)
	}
}

// callByName runs a tool called by a name the session does not list: a
// tool it was never shown, a name with a client's prefix, a slip of case
// or separators (see [catalog.resolveName]). An allowed tool runs and
// joins the session's tools ("called by name" in the trace); a held one
// is refused with why and what releases it; an ambiguous or unknown name
// is refused with the candidates.
func (s *session) callByName(ctx context.Context, ss *mcp.ServerSession, name string, args json.RawMessage, meta mcp.Meta) (*mcp.CallToolResult, error) {
	cat := s.catalog()
	allow := s.withinLimits(cat)
	target, cands := cat.resolveName(name, allow)
	if target == "" {
		return s.unknownName(name, cands), nil
	}
	if allow != nil && !allow(target) {
		// An exact name, prefixed or from call_capability: the profile
		// middleware saw only the name as called.
		_, why := s.g.limitAllows(s.limitRefs(), cat.serverOf(target), target)
		msg := fmt.Sprintf("capbroker gateway: %s is outside %s", target, why)
		s.traceRefused(target, "denied", msg)
		return errorResult(msg), nil
	}
	if h, ok := cat.heldTool(target); ok {
		s.traceRefused(target, "held", h.Why)
		return errorResult(h.Why), nil
	}
	s.mu.Lock()
	added := s.addLocked([]string{target})
	s.mu.Unlock()
	how := ""
	if len(added) > 0 {
		how = "called by name"
		if target != name {
			how = fmt.Sprintf("called by name (as %q)", name)
		}
		s.share(ctx)
	}
	return s.g.callTool(ctx, s, ss, target, args, meta, how)
}

// unknownName refuses a call to a name that resolves to no tool, with the
// tools it could mean.
func (s *session) unknownName(name string, cands []string) *mcp.CallToolResult {
	var msg string
	if down, why := s.downServer(name); down != "" {
		// Not a slip: the tool's server is not connected, so none of its
		// tools is offered now.
		msg = fmt.Sprintf("no tool is named %q now: server %q is not connected, so its tools are not offered (%s); try again once it starts, or call find_capability for another way", name, down, why)
		s.traceRefused(name, "unavailable", msg)
		return errorResult(msg)
	}
	if len(cands) > 0 {
		msg = fmt.Sprintf("no tool is named %q; did you mean %s? Call it by that name", name, strings.Join(quoteAll(cands), " or "))
		if s.mode.callsThrough() {
			msg += ", directly or with call_capability"
		}
		msg += "; or call find_capability with what you need"
	} else {
		msg = fmt.Sprintf("no tool is named %q and no name is close; call find_capability with what you need, in plain words", name)
	}
	s.traceRefused(name, "unknown", msg)
	return errorResult(msg)
}

// downServer returns the server a called name is prefixed with (in any
// form nameForms gives) when it is one the gateway fronts but is not
// connected, with why (as find_capability's "down" says it); "" otherwise,
// and for a server outside the profiles the session keeps within (see
// couldUse).
func (s *session) downServer(name string) (string, string) {
	for _, f := range nameForms(name) {
		head, _, ok := strings.Cut(f, card.Separator)
		if !ok || head == "" {
			continue
		}
		for _, u := range s.g.upstreams() {
			if !strings.EqualFold(u.cfg.Name, head) {
				continue
			}
			st := u.status()
			if st.Connected || !s.couldUse(u.cfg.Name) {
				return "", ""
			}
			state, _ := upstreamState(u, st)
			if state == "starting" {
				return u.cfg.Name, "still starting"
			}
			return u.cfg.Name, state + ": " + clip(u.redact(st.Error), 300)
		}
	}
	return "", ""
}

func quoteAll(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = fmt.Sprintf("%q", n)
	}
	return out
}

// traceRefused records a call the gateway refused without reaching an
// upstream.
func (s *session) traceRefused(name, outcome, msg string) {
	cat := s.catalog()
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
	return s.g.callTool(ctx, s, req.Session, req.Params.Name, req.Params.Arguments, req.Params.Meta, "")
}

// callTool runs the named gateway tool on its upstream, asking first when
// it is irreversible. how, if set, says how the tool was reached (the
// trace's reason: "called by name").
func (g *Gateway) callTool(ctx context.Context, s *session, ss *mcp.ServerSession, name string, args json.RawMessage, meta mcp.Meta, how string) (*mcp.CallToolResult, error) {
	start := time.Now()
	cat := s.catalog()
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
	ev := Event{Session: s.key, Client: s.client, Kind: "call", Mode: string(s.mode), Tool: name, ToolDigest: e.card.Digest, Upstream: u.cfg.Name,
		Exposed: exposed, TokensExposed: cat.tokens(exposed), TokensFull: cat.fullTokens, Finds: s.findCount(), Reason: how}
	if how != "" {
		ev.Found = []string{name}
	}
	record := func(outcome string) {
		ev.Outcome, ev.DurationMS = outcome, ms(time.Since(start))
		g.opts.Metrics.call(u.cfg.Name, outcome, time.Since(start))
		g.opts.Trace.Record(ctx, ev)
	}
	args, bad := callArguments(args)
	if bad != "" {
		record("bad_arguments")
		return errorResult(fmt.Sprintf("%s: %s; send the arguments as a JSON object matching its input schema: %s", name, bad, compactSchema(e))), nil
	}
	if e.card.Risk == card.RiskIrreversible && !s.clientProfile().AsksEachCall {
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
			if werr.Code == jsonrpc.CodeInvalidParams || werr.Code == jsonrpc.CodeInternalError {
				// Mostly arguments the server's own validation refused:
				// the model gets to see what to send instead.
				return errorResult(fmt.Sprintf("server %q refused %s: %s; send the arguments as a JSON object matching its input schema: %s",
					u.cfg.Name, name, clip(u.redact(werr.Message), 600), compactSchema(e))), nil
			}
			return nil, u.redactRPC(werr)
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
		if text, ok := refusedArguments(res); ok {
			return errorResult(fmt.Sprintf("server %q refused %s: %s; send the arguments as a JSON object matching its input schema: %s",
				u.cfg.Name, name, clip(u.redact(text), 600), compactSchema(e))), nil
		}
	} else {
		record("ok")
	}
	return u.redactErrorResult(res), nil
}

// refusedArguments returns the text of an error result by which a
// server's own validation refused a call's arguments, as SDKs report it
// in a result rather than a JSON-RPC error: the TypeScript SDK's "MCP
// error -32602: Input validation error: ...", the Python SDK's "...
// validation error(s) for <tool>Arguments ...".
func refusedArguments(res *mcp.CallToolResult) (string, bool) {
	if len(res.Content) != 1 {
		return "", false
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		return "", false
	}
	t := strings.TrimSpace(tc.Text)
	switch {
	case strings.HasPrefix(t, "MCP error -32602:"):
		return t, true
	case pyArgumentsError.MatchString(t):
		return t, true
	}
	return "", false
}

// pyArgumentsError is how the Python SDK (pydantic) says a tool's
// arguments did not validate.
var pyArgumentsError = regexp.MustCompile(`\bvalidation errors? for \w+Arguments\b`)

// callArguments reads a call's arguments as the upstream should get
// them: an object, or nothing. Arguments sent as a JSON string holding an
// object (as some models write them) are that object. bad says what is
// wrong with any other value.
func callArguments(args json.RawMessage) (json.RawMessage, string) {
	t := bytes.TrimSpace(args)
	if len(t) == 0 || string(t) == "null" {
		return nil, ""
	}
	switch t[0] {
	case '{':
		if !json.Valid(t) {
			return nil, "the arguments are not valid JSON"
		}
		return args, ""
	case '"':
		var inner string
		if err := json.Unmarshal(t, &inner); err != nil {
			return nil, "the arguments are not valid JSON (" + err.Error() + ")"
		}
		in := bytes.TrimSpace([]byte(inner))
		if len(in) == 0 {
			return nil, ""
		}
		if in[0] == '{' && json.Valid(in) {
			return json.RawMessage(in), ""
		}
		return nil, "the arguments are a string, not a JSON object"
	case '[':
		return nil, "the arguments are an array, not a JSON object"
	}
	return nil, "the arguments are not a JSON object"
}

// compactSchema is a tool's input schema as one line of JSON.
func compactSchema(e *toolEntry) string {
	b, err := json.Marshal(listedTool(e).InputSchema)
	if err != nil {
		return `{"type":"object"}`
	}
	return clip(string(b), 1500)
}

// clip cuts s past n bytes, at a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// explain turns a failure to reach an upstream into a message a model and
// a person can act on.
func (g *Gateway) explain(u *upstream, tool string, err error) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("capbroker gateway: server %q did not answer %s within %s; the call was cancelled (%v)", u.cfg.Name, tool, u.timeout, err)
	case errors.Is(err, ErrUpstreamDown):
		return fmt.Sprintf("capbroker gateway: server %q is not connected; the gateway restarts it by itself, so a later call may work (%v)", u.cfg.Name, err)
	case errors.Is(err, mcp.ErrConnectionClosed), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Sprintf("capbroker gateway: server %q closed the connection during %s (it is being restarted; try again): %v", u.cfg.Name, tool, err)
	}
	return fmt.Sprintf("capbroker gateway: calling %s on server %q failed: %v", tool, u.cfg.Name, err)
}
