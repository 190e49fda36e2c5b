package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/capbroker/capbroker/internal/testenv"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// weatherUpstream is a Go SDK MCP server over streamable HTTP whose
// weather tool no word of "what's it like outside in Lyon" names.
func weatherUpstream(t *testing.T) string {
	s := mcp.NewServer(&mcp.Implementation{Name: "meteo", Version: "1"}, nil)
	for name, desc := range map[string]string{
		"get_weather_forecast": "Get the weather forecast for a city: temperature, rain and wind for the next days.",
		"convert_currency":     "Convert an amount of money from one currency to another at today's rate.",
		"translate_text":       "Translate text into another language.",
	} {
		s.AddTool(&mcp.Tool{Name: name, Description: desc, InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
			})
	}
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(srv.Close)
	return srv.URL
}

var listening = regexp.MustCompile(`url=(http://\S+/mcp)`)

// startGatewayCmd runs "capbroker gateway --addr" with env and returns
// its /mcp URL.
func startGatewayCmd(t *testing.T, env map[string]string, args ...string) string {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "servers.json")
	os.WriteFile(cfg, []byte(`{"mcpServers": {"meteo": {"type": "http", "url": "`+weatherUpstream(t)+`"}}}`), 0o644)
	if env["HOME"] == "" {
		env["HOME"] = dir
	}
	stderr := &testenv.Buffer{}
	m := &Main{Stdin: strings.NewReader(""), Stdout: &testenv.Buffer{}, Stderr: stderr, Getenv: func(k string) string { return env[k] }}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- m.Run(ctx, append([]string{"gateway", "--mcp-config", cfg, "--addr", "127.0.0.1:0", "--family", "general",
			"--index", filepath.Join(dir, "index"), "--db", filepath.Join(dir, "sessions.db")}, args...))
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	for i := 0; ; i++ {
		if m := listening.FindStringSubmatch(stderr.String()); m != nil {
			return m[1]
		}
		select {
		case err := <-done:
			t.Fatalf("gateway ended: %v\n%s", err, stderr.String())
		case <-time.After(25 * time.Millisecond):
		}
		if i == 800 {
			t.Fatalf("the gateway did not listen:\n%s", stderr.String())
		}
	}
}

type gatewayRanking struct {
	Ranker    string `json:"ranker"`
	ByMeaning bool   `json:"by_meaning"`
	Why       string `json:"why"`
	Learning  *struct {
		Links int `json:"links"`
	} `json:"learning"`
}

func gatewayStatus(t *testing.T, url string) gatewayRanking {
	t.Helper()
	res, err := http.Get(strings.TrimSuffix(url, "/mcp") + "/status")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var st struct{ Ranking gatewayRanking }
	if err := json.NewDecoder(res.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	return st.Ranking
}

// TestGatewayHybridByDefault: "capbroker gateway" ranks as serve does:
// hybrid with the built-in encoder by default (find_capability finds by
// meaning a tool no word of the task names), learning from its store;
// CAPBROKER_RANKER=lexical and --no-learn turn each off.
func TestGatewayHybridByDefault(t *testing.T) {
	url := startGatewayCmd(t, map[string]string{})
	var st gatewayRanking
	for i := 0; !st.ByMeaning; i++ {
		if st = gatewayStatus(t, url); i == 800 {
			t.Fatalf("not ranking by meaning: %+v", st)
		}
		time.Sleep(25 * time.Millisecond)
	}
	if st.Ranker != "hybrid" || st.Learning == nil {
		t.Errorf("default ranking: %+v", st)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).
		Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "find_capability", Arguments: map[string]any{"query": "what's it like outside in Lyon"}})
	if err != nil || res.IsError {
		t.Fatalf("find: %v %+v", err, res)
	}
	if text := res.Content[0].(*mcp.TextContent).Text; !strings.Contains(text, `"name":"meteo__get_weather_forecast"`) || !strings.Contains(text, "similarity 0.") {
		t.Errorf("find by meaning:\n%s", text)
	}

	off := startGatewayCmd(t, map[string]string{"CAPBROKER_RANKER": "lexical"}, "--no-learn")
	if st := gatewayStatus(t, off); st.Ranker != "lexical" || st.ByMeaning || st.Learning != nil {
		t.Errorf("CAPBROKER_RANKER=lexical --no-learn: %+v", st)
	}
}
