package gateway

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Defaults of the gateway's limits (see [Options]).
const (
	// DefaultMaxSessions bounds the MCP sessions open at once.
	DefaultMaxSessions = 1000
	// DefaultSessionTimeout ends an HTTP session idle this long
	// (HTTPOptions.SessionTimeout).
	DefaultSessionTimeout = 30 * time.Minute
	// DefaultMaxListItems bounds the tools (and, each, the prompts,
	// resources and templates) read from one upstream.
	DefaultMaxListItems = 10_000
	// DefaultMaxListPages bounds the pages of one listing of one upstream.
	DefaultMaxListPages = 100
)

// ErrTooManySessions is returned when a client opens a session while
// Options.MaxSessions are open.
var ErrTooManySessions = errors.New("too many MCP sessions open")

// sessionsFull reports whether Options.MaxSessions sessions are open.
func (g *Gateway) sessionsFull() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.sessions) >= g.opts.MaxSessions
}

// listPaged reads the pages of one list method of an upstream, within
// bounds: at most maxItems items and maxPages pages, and a cursor seen
// before ends it (a server that pages in a circle). A listing cut short
// is not an error: it returns what it read, and truncated says why, so a
// server that pages forever costs maxPages requests once, not a retry
// loop.
func listPaged[T any](ctx context.Context, what string, maxItems, maxPages int,
	page func(ctx context.Context, cursor string) ([]T, string, error)) (items []T, truncated string, err error) {
	seen := map[string]bool{}
	cursor := ""
	for pages := 0; ; pages++ {
		if pages == maxPages {
			return items, fmt.Sprintf("%s: stopped after %d pages (%d items); the server offers more pages than the gateway reads (--max-list-pages)", what, pages, len(items)), nil
		}
		batch, next, err := page(ctx, cursor)
		if err != nil {
			return nil, "", err
		}
		if len(items)+len(batch) > maxItems {
			items = append(items, batch[:maxItems-len(items)]...)
			return items, fmt.Sprintf("%s: kept the first %d; the server offers more than the gateway reads (--max-upstream-tools)", what, maxItems), nil
		}
		items = append(items, batch...)
		if next == "" {
			return items, "", nil
		}
		if seen[next] {
			return items, fmt.Sprintf("%s: stopped after %d pages (%d items): the server sent a cursor it had sent before", what, pages+1, len(items)), nil
		}
		seen[next] = true
		cursor = next
	}
}

// The list methods, page by page.

func pageTools(cs *mcp.ClientSession) func(context.Context, string) ([]*mcp.Tool, string, error) {
	return func(ctx context.Context, cursor string) ([]*mcp.Tool, string, error) {
		res, err := cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor})
		if err != nil {
			return nil, "", err
		}
		return res.Tools, res.NextCursor, nil
	}
}

func pagePrompts(cs *mcp.ClientSession) func(context.Context, string) ([]*mcp.Prompt, string, error) {
	return func(ctx context.Context, cursor string) ([]*mcp.Prompt, string, error) {
		res, err := cs.ListPrompts(ctx, &mcp.ListPromptsParams{Cursor: cursor})
		if err != nil {
			return nil, "", err
		}
		return res.Prompts, res.NextCursor, nil
	}
}

func pageResources(cs *mcp.ClientSession) func(context.Context, string) ([]*mcp.Resource, string, error) {
	return func(ctx context.Context, cursor string) ([]*mcp.Resource, string, error) {
		res, err := cs.ListResources(ctx, &mcp.ListResourcesParams{Cursor: cursor})
		if err != nil {
			return nil, "", err
		}
		return res.Resources, res.NextCursor, nil
	}
}

func pageTemplates(cs *mcp.ClientSession) func(context.Context, string) ([]*mcp.ResourceTemplate, string, error) {
	return func(ctx context.Context, cursor string) ([]*mcp.ResourceTemplate, string, error) {
		res, err := cs.ListResourceTemplates(ctx, &mcp.ListResourceTemplatesParams{Cursor: cursor})
		if err != nil {
			return nil, "", err
		}
		return res.ResourceTemplates, res.NextCursor, nil
	}
}
