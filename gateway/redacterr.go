package gateway

import (
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// redactRPC returns an upstream's JSON-RPC error with its message and
// data redacted like every other output of the gateway: a value its
// config expanded from ${VAR} shows as ${VAR}. An upstream that echoes
// its arguments or environment in an error would otherwise hand a secret
// to the model.
func (u *upstream) redactRPC(werr *jsonrpc.Error) *jsonrpc.Error {
	out := &jsonrpc.Error{Code: werr.Code, Message: u.redact(werr.Message)}
	if len(werr.Data) > 0 {
		data := u.redact(string(werr.Data))
		if json.Valid([]byte(data)) {
			out.Data = json.RawMessage(data)
		} else {
			out.Data, _ = json.Marshal(data)
		}
	}
	return out
}

// redactErrorResult redacts the text of a tool's error result (IsError),
// which is the upstream's error text as much as a JSON-RPC error is. A
// successful result is the tool's data and passes unchanged.
func (u *upstream) redactErrorResult(res *mcp.CallToolResult) *mcp.CallToolResult {
	if res == nil || !res.IsError {
		return res
	}
	changed := false
	content := make([]mcp.Content, len(res.Content))
	for i, c := range res.Content {
		content[i] = c
		if t, ok := c.(*mcp.TextContent); ok {
			if r := u.redact(t.Text); r != t.Text {
				cp := *t
				cp.Text = r
				content[i] = &cp
				changed = true
			}
		}
	}
	if !changed {
		return res
	}
	cp := *res
	cp.Content = content
	return &cp
}
