package gateway

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/source/mcpconfig"
)

// shapeServer is an MCP server with the tools echo, add and secret.
func shapeServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "shapes", Version: "1"}, nil)
	for _, name := range []string{"echo", "add", "secret"} {
		s.AddTool(&mcp.Tool{Name: name, Description: "The " + name + " tool.", InputSchema: map[string]any{"type": "object"}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name + " answered"}}}, nil
			})
	}
	return s
}

// TestClientShapesUpstreams fronts servers defined the way Cline (a
// legacy SSE server, timeout in seconds), Gemini CLI (includeTools,
// excludeTools) and Windsurf (serverUrl, disabledTools) write them: the
// SSE upstream is reached through the SDK's SSE client transport, and the
// filtered tools are neither listed nor callable.
func TestClientShapesUpstreams(t *testing.T) {
	sse := httptest.NewServer(mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return shapeServer() }, nil))
	t.Cleanup(sse.Close)
	streamable := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return shapeServer() }, nil))
	t.Cleanup(streamable.Close)
	env := map[string]string{"SSE_URL": sse.URL, "HTTP_URL": streamable.URL}
	opts := &mcpconfig.Options{Getenv: func(k string) string { return env[k] }}

	var servers []ServerConfig
	for _, f := range []string{"cline_mcp_settings.json", "gemini-settings.json", "windsurf-mcp_config.json"} {
		defs, probs, err := mcpconfig.Load(filepath.Join("testdata", "shapes", f), opts)
		if err != nil || len(probs) > 0 || len(defs) != 1 {
			t.Fatalf("%s: %v %v %d servers", f, err, probs, len(defs))
		}
		c, err := FromMCPConfig(defs[0])
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		servers = append(servers, c)
	}
	if got := []time.Duration{servers[0].Timeout, servers[1].Timeout, servers[2].Timeout}; !slices.Equal(got, []time.Duration{time.Minute, 30 * time.Second, 0}) {
		t.Errorf("timeouts %v: want Cline's 60 as a minute, Gemini's 30000 as 30s", got)
	}
	if tr := servers[0].Transport(); tr != "sse" {
		t.Errorf("Cline's transportType sse: transport %q", tr)
	}

	g := startGateway(t, servers, &Options{Mode: ModeAll})
	for _, st := range g.Status() {
		if !st.Connected {
			t.Fatalf("upstream %s not connected: %+v", st.Name, st)
		}
	}
	cs := connect(t, serveHTTP(t, g, nil), nil, nil)
	names := listNames(t, cs)
	slices.Sort(names)
	var want []string
	for _, n := range [][2]string{{"filtered", "echo"}, {"legacy", "add"}, {"legacy", "echo"}, {"legacy", "secret"}, {"ws", "add"}, {"ws", "echo"}} {
		want = append(want, card.Namespaced(n[0], n[1]))
	}
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Errorf("tools %v, want %v", names, want)
	}
	if text, isErr := callText(t, cs, card.Namespaced("legacy", "echo"), map[string]any{}); isErr || text != "echo answered" {
		t.Errorf("call over SSE: %q (error %v)", text, isErr)
	}
	for _, n := range []string{card.Namespaced("filtered", "add"), card.Namespaced("ws", "secret")} {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: n, Arguments: map[string]any{}})
		if err == nil && !res.IsError {
			t.Errorf("%s is filtered out but answered %v", n, res.Content)
		}
	}
}
