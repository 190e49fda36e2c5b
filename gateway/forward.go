package gateway

import (
	"context"
	"errors"
	"maps"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// do runs f on the upstream's session within its timeout, with the call
// registered so what the upstream sends meanwhile reaches ss. A progress
// token in meta is replaced by one unique to the gateway and mapped back.
func (u *upstream) do(ctx context.Context, ss *mcp.ServerSession, meta mcp.Meta, f func(context.Context, *mcp.ClientSession, mcp.Meta) error) error {
	ctx, cancel := context.WithTimeout(ctx, u.timeout)
	defer cancel()
	for attempt := 0; ; attempt++ {
		cs, err := u.session(ctx)
		if err != nil {
			return err
		}
		err = u.doOn(ctx, cs, ss, meta, f)
		if attempt == 0 && errors.Is(err, mcp.ErrConnectionClosed) && ctx.Err() == nil {
			// The connection was already closing: the request never left,
			// so it is safe to send it again on the restarted one.
			u.dead(cs)
			continue
		}
		return err
	}
}

func (u *upstream) doOn(ctx context.Context, cs *mcp.ClientSession, ss *mcp.ServerSession, meta mcp.Meta, f func(context.Context, *mcp.ClientSession, mcp.Meta) error) error {
	var token any
	if meta != nil {
		token = meta["progressToken"]
	}
	c, end := u.begin(ctx, ss, token)
	defer end()
	m := forwardMeta(meta)
	if token != nil {
		m["progressToken"] = progressToken(u.cfg.Name, c.id)
	}
	return f(ctx, cs, m)
}

// hopMeta are the _meta keys that describe the client's own connection
// (protocol 2026-07-28 and later send them with every request): they
// belong to the hop between the client and the gateway, and an upstream
// that speaks another version refuses requests that carry them.
var hopMeta = []string{mcp.MetaKeyProtocolVersion, mcp.MetaKeyClientInfo, mcp.MetaKeyClientCapabilities, mcp.MetaKeyLogLevel}

// forwardMeta returns a copy of a downstream request's _meta to send
// upstream, without the hop's own keys; nil stays nil.
func forwardMeta(meta mcp.Meta) mcp.Meta {
	if meta == nil {
		return nil
	}
	m := maps.Clone(meta)
	for _, k := range hopMeta {
		delete(m, k)
	}
	if len(m) == 0 && meta["progressToken"] == nil {
		return nil
	}
	return m
}

// protocolError passes an upstream's JSON-RPC error through, redacted,
// and explains any other failure.
func (g *Gateway) protocolError(u *upstream, method string, err error) error {
	if err == nil {
		return nil
	}
	var werr *jsonrpc.Error
	if errors.As(err, &werr) {
		return u.redactRPC(werr)
	}
	if errors.Is(err, context.Canceled) {
		return err
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: u.redact(g.explain(u, method, err))}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
