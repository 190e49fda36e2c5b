package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/capbroker/capbroker/source/mcpconfig"
)

// TestUpstreamErrorsRedacted: an upstream that echoes what it was sent
// (here the key its URL carries, expanded from ${API_KEY}) in a JSON-RPC
// error, in an invalid-params error and in a tool's error result does not
// get the secret to the model: each shows ${API_KEY}. Before, the
// JSON-RPC error text passed unchanged.
func TestUpstreamErrorsRedacted(t *testing.T) {
	const secret = "sk-live-4e1f9a07c3"
	up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		key := r.URL.Query().Get("key")
		s := mcp.NewServer(&mcp.Implementation{Name: "leaky", Version: "1"}, nil)
		add := func(name string, h mcp.ToolHandler) {
			s.AddTool(&mcp.Tool{Name: name, Description: "Look up a record.", InputSchema: json.RawMessage(`{"type":"object"}`),
				Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, h)
		}
		add("rpc_error", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return nil, &jsonrpc.Error{Code: -32001, Message: "upstream refused --key=" + key, Data: json.RawMessage(`{"sent":"` + key + `"}`)}
		})
		add("bad_params", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "bad key " + key}
		})
		add("tool_error", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "failed with key " + key}}}, nil
		})
		return s
	}, nil))
	t.Cleanup(up.Close) // after the gateway closes (cleanups run last first)

	g := startGateway(t, []ServerConfig{{Name: "leaky", URL: up.URL + "?key=" + secret, Secrets: []mcpconfig.Secret{{Var: "API_KEY", Value: secret}}}},
		&Options{Mode: ModeAll})
	cs := connect(t, serveHTTP(t, g, nil), nil, nil)
	ctx := context.Background()

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "leaky__rpc_error", Arguments: map[string]any{}})
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) {
		t.Fatalf("rpc_error: %v %v, want a JSON-RPC error", res, err)
	}
	if text := werr.Message + string(werr.Data); strings.Contains(text, secret) || !strings.Contains(werr.Message, "--key=${API_KEY}") || !strings.Contains(string(werr.Data), "${API_KEY}") {
		t.Errorf("the JSON-RPC error: %q %s, want the key as ${API_KEY}", werr.Message, werr.Data)
	}
	for _, name := range []string{"leaky__bad_params", "leaky__tool_error"} {
		text, isErr := callText(t, cs, name, map[string]any{})
		if !isErr || strings.Contains(text, secret) || !strings.Contains(text, "${API_KEY}") {
			t.Errorf("%s: %q (error %v), want the key as ${API_KEY}", name, text, isErr)
		}
	}
}
