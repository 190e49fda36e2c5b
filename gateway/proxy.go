package gateway

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func (s *session) getPrompt(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	e, ok := s.g.catalog().prompts[req.Params.Name]
	if !ok {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown prompt %q", req.Params.Name)}
	}
	var res *mcp.GetPromptResult
	err := e.up.do(ctx, req.Session, req.Params.Meta, func(ctx context.Context, cs *mcp.ClientSession, m mcp.Meta) error {
		p := *req.Params
		p.Meta, p.Name = m, e.prompt.Name
		var err error
		res, err = cs.GetPrompt(ctx, &p)
		return err
	})
	return res, s.g.protocolError(e.up, "prompts/get", err)
}

func (s *session) readResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	u := s.g.catalog().resourceOwner(req.Params.URI)
	if u == nil {
		return nil, mcp.ResourceNotFoundError(req.Params.URI)
	}
	var res *mcp.ReadResourceResult
	err := u.do(ctx, req.Session, req.Params.Meta, func(ctx context.Context, cs *mcp.ClientSession, m mcp.Meta) error {
		p := *req.Params
		p.Meta = m
		var err error
		res, err = cs.ReadResource(ctx, &p)
		return err
	})
	return res, s.g.protocolError(u, "resources/read", err)
}

func (s *session) complete(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	empty := &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{}}}
	if req.Params == nil || req.Params.Ref == nil {
		return empty, nil
	}
	cat := s.g.catalog()
	p := *req.Params
	ref := *p.Ref
	var u *upstream
	switch ref.Type {
	case "ref/prompt":
		if e, ok := cat.prompts[ref.Name]; ok {
			u, ref.Name = e.up, e.prompt.Name
		}
	case "ref/resource":
		u = cat.resourceOwner(ref.URI)
		if u == nil {
			if t, ok := cat.templates[ref.URI]; ok {
				u = t.up
			}
		}
	}
	if u == nil {
		return empty, nil
	}
	if l := u.listing(); l.caps == nil || l.caps.Completions == nil {
		return empty, nil
	}
	p.Ref = &ref
	var res *mcp.CompleteResult
	err := u.do(ctx, req.Session, p.Meta, func(ctx context.Context, cs *mcp.ClientSession, m mcp.Meta) error {
		p.Meta = m
		var err error
		res, err = cs.Complete(ctx, &p)
		return err
	})
	return res, s.g.protocolError(u, "completion/complete", err)
}

func (s *session) subscribe(ctx context.Context, req *mcp.SubscribeRequest) error {
	u := s.g.catalog().resourceOwner(req.Params.URI)
	if u == nil {
		return mcp.ResourceNotFoundError(req.Params.URI)
	}
	return s.g.protocolError(u, "resources/subscribe", u.subscribe(ctx, req.Params.URI))
}

func (s *session) unsubscribe(ctx context.Context, req *mcp.UnsubscribeRequest) error {
	u := s.g.catalog().resourceOwner(req.Params.URI)
	if u == nil {
		return nil
	}
	return s.g.protocolError(u, "resources/unsubscribe", u.unsubscribe(ctx, req.Params.URI))
}
