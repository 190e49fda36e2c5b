package eval

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/capbroker/capbroker/card"
)

// CannedResult is the text a tool served by [ServeTools] answers every
// call with: the session eval checks it to tell a call that reached the
// upstream tool from one the gateway answered itself.
func CannedResult(tool string) string { return "done: " + tool + " ran" }

// NewToolServer returns an MCP server (named name) that lists tools, each
// with its name, description and input schema, and answers any call of
// one with [CannedResult]. It is the upstream of the session eval: a
// benchmark's catalog served by a real MCP server. A schema whose type is
// not "object" (BFCL writes "dict") is served as an object schema, as an
// MCP server must; a tool without a schema takes no arguments.
func NewToolServer(name string, tools []card.Card) (*mcp.Server, error) {
	s := mcp.NewServer(&mcp.Implementation{Name: name, Version: "eval"},
		&mcp.ServerOptions{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	seen := map[string]bool{}
	for i := range tools {
		t := &tools[i]
		if seen[t.Name] {
			return nil, fmt.Errorf("serving %s: tool %q is listed twice", name, t.Name)
		}
		seen[t.Name] = true
		schema, err := objectSchema(t.InputSchema)
		if err != nil {
			return nil, fmt.Errorf("serving %s: tool %q: %w", name, t.Name, err)
		}
		tool := &mcp.Tool{Name: t.Name, Description: t.Description, InputSchema: schema}
		if len(t.Annotations) > 0 {
			var a mcp.ToolAnnotations
			if json.Unmarshal(t.Annotations, &a) == nil {
				tool.Annotations = &a
			}
		}
		text := CannedResult(t.Name)
		s.AddTool(tool, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
		})
	}
	return s, nil
}

// ServeTools serves tools over t (stdio for a subprocess) until the
// client leaves or ctx ends. See [NewToolServer].
func ServeTools(ctx context.Context, name string, tools []card.Card, t mcp.Transport) error {
	s, err := NewToolServer(name, tools)
	if err != nil {
		return err
	}
	return s.Run(ctx, t)
}

// objectSchema returns schema as a JSON object whose type is "object".
func objectSchema(schema json.RawMessage) (map[string]any, error) {
	m := map[string]any{}
	if s := bytes.TrimSpace(schema); len(s) > 0 && !bytes.Equal(s, []byte("null")) {
		if err := json.Unmarshal(s, &m); err != nil {
			return nil, fmt.Errorf("input schema is not a JSON object: %w", err)
		}
	}
	m["type"] = "object"
	if _, ok := m["properties"]; !ok {
		m["properties"] = map[string]any{}
	}
	return m, nil
}
