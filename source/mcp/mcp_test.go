package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/internal/testenv"
	"github.com/capbroker/capbroker/source/mcpconfig"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func names(cards []card.Card) []string {
	var out []string
	for _, c := range cards {
		out = append(out, c.OriginalName)
	}
	sort.Strings(out)
	return out
}

func byName(cards []card.Card, tool string) *card.Card {
	for i := range cards {
		if cards[i].OriginalName == tool {
			return &cards[i]
		}
	}
	return nil
}

// TestNPMServersStdio starts the reference servers from npm over stdio
// and checks that well-known tools come back with schema and annotations.
func TestNPMServersStdio(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		bin   string
		args  []string
		tools []string // a few that must be there
		check func(t *testing.T, cards []card.Card)
	}{
		{
			bin: "mcp-server-everything", args: []string{"stdio"},
			tools: []string{"echo", "get-sum"},
		},
		{
			bin: "mcp-server-filesystem", args: []string{dir},
			tools: []string{"read_text_file", "write_file", "list_directory", "move_file"},
			check: func(t *testing.T, cards []card.Card) {
				c := byName(cards, "read_text_file")
				if c.Risk != card.RiskReadOnly || c.RiskFrom != "annotations" {
					t.Errorf("read_text_file risk = %s from %s, want read-only from annotations", c.Risk, c.RiskFrom)
				}
				var schema struct {
					Properties map[string]any `json:"properties"`
				}
				if err := json.Unmarshal(c.InputSchema, &schema); err != nil || schema.Properties["path"] == nil {
					t.Errorf("read_text_file schema lacks path: %s (%v)", c.InputSchema, err)
				}
			},
		},
		{
			bin: "mcp-server-memory", args: nil,
			tools: []string{"create_entities", "read_graph", "search_nodes"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.bin, func(t *testing.T) {
			bin := testenv.NodeBin(t, tt.bin)
			s := mcpconfig.Server{Name: strings.TrimPrefix(tt.bin, "mcp-server-"), Transport: mcpconfig.Stdio, Command: bin, Args: tt.args,
				Env: map[string]string{"MEMORY_FILE_PATH": filepath.Join(dir, "memory.jsonl")}, File: "test.mcp.json"}
			cards, err := List(context.Background(), s, &Options{Timeout: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			got := names(cards)
			for _, want := range tt.tools {
				if byName(cards, want) == nil {
					t.Errorf("tool %s missing; got %q", want, got)
				}
			}
			for _, c := range cards {
				if err := c.Validate(); err != nil {
					t.Error(err)
				}
				if c.Name != s.Name+"__"+c.OriginalName || c.Source != s.Name || c.Kind != card.KindTool {
					t.Errorf("card %s: source %s kind %s", c.Name, c.Source, c.Kind)
				}
				if c.Digest == "" || c.Meta[MetaServer] != s.Name || c.Meta[MetaTransport] != "stdio" {
					t.Errorf("card %s: digest %q meta %v", c.Name, c.Digest, c.Meta)
				}
			}
			if tt.check != nil {
				tt.check(t, cards)
			}
			t.Logf("%d tools: %s", len(cards), strings.Join(got, ", "))
		})
	}
}

// TestNPMServerStreamableHTTP runs server-everything in its streamable
// HTTP mode and lists its tools over HTTP.
func TestNPMServerStreamableHTTP(t *testing.T) {
	bin := testenv.NodeBin(t, "mcp-server-everything")
	port := freePort(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "streamableHttp")
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	setProcessGroup(cmd)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cancel()
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		once := false
		for sc.Scan() {
			if !once && strings.Contains(sc.Text(), "listening") {
				once = true
				close(ready)
			}
		}
	}()
	select {
	case <-ready:
	case <-time.After(time.Minute):
		t.Fatal("server-everything did not start listening")
	}
	s := mcpconfig.Server{Name: "everything", Transport: mcpconfig.HTTP, URL: fmt.Sprintf("http://127.0.0.1:%d/mcp", port)}
	cards, err := List(context.Background(), s, &Options{Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if byName(cards, "echo") == nil || byName(cards, "get-sum") == nil {
		t.Errorf("tools = %q, want echo and get-sum among them", names(cards))
	}
	if cards[0].Meta[MetaTransport] != "http" {
		t.Errorf("transport meta = %q", cards[0].Meta[MetaTransport])
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// goServer serves n tools over streamable HTTP on loopback with a page
// size of 3, and requires the header X-Token: t0k.
func goServer(t *testing.T, n int) string {
	t.Helper()
	srv := sdk.NewServer(&sdk.Implementation{Name: "paged", Version: "1"}, &sdk.ServerOptions{PageSize: 3})
	for i := range n {
		ro := i%2 == 0
		srv.AddTool(&sdk.Tool{
			Name:        fmt.Sprintf("tool_%02d", i),
			Description: fmt.Sprintf("Tool number %d.", i),
			InputSchema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`),
			Annotations: &sdk.ToolAnnotations{ReadOnlyHint: ro, Title: fmt.Sprintf("Tool %d", i)},
		}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{}, nil
		})
	}
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Token") != "t0k" {
			http.Error(w, "missing token", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts.URL
}

// TestPaginationAndHeaders lists 10 tools served 3 per page, through a
// server that rejects requests without the configured header.
func TestPaginationAndHeaders(t *testing.T) {
	url := goServer(t, 10)
	s := mcpconfig.Server{Name: "paged", Transport: mcpconfig.HTTP, URL: url, Headers: map[string]string{"X-Token": "t0k"}}
	cards, err := List(context.Background(), s, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(cards) != 10 {
		t.Fatalf("got %d tools, want 10: %q", len(cards), names(cards))
	}
	c := byName(cards, "tool_04")
	if c.Name != "paged__tool_04" || c.Meta[MetaTitle] != "Tool 4" || c.Risk != card.RiskReadOnly {
		t.Errorf("tool_04 = %+v", c)
	}
	if !strings.Contains(string(c.InputSchema), `"required":["q"]`) {
		t.Errorf("schema = %s", c.InputSchema)
	}

	s.Headers = nil
	if _, err := List(context.Background(), s, nil); err == nil || !strings.Contains(err.Error(), "paged") {
		t.Errorf("without the header: err = %v, want an error naming the server", err)
	}
	if _, err := List(context.Background(), s, &Options{MaxTools: 4}); err == nil {
		t.Errorf("MaxTools 4 of 10: no error")
	}
}

// TestBadServers: a server that never answers costs the timeout; one that
// exits at once is reported with its stderr; a missing command is named.
func TestBadServers(t *testing.T) {
	sh := testenv.LookPath(t, "sh")
	tests := []struct {
		name string
		s    mcpconfig.Server
		want []string
	}{
		{"hangs", mcpconfig.Server{Name: "hang", Transport: mcpconfig.Stdio, Command: sh, Args: []string{"-c", "sleep 600"}}, []string{"MCP server hang: no answer within 1.5s"}},
		{"exits", mcpconfig.Server{Name: "quit", Transport: mcpconfig.Stdio, Command: sh, Args: []string{"-c", "echo boom: bad config >&2; exit 3"}}, []string{"MCP server quit", "boom: bad config"}},
		{"garbage", mcpconfig.Server{Name: "junk", Transport: mcpconfig.Stdio, Command: sh, Args: []string{"-c", "echo not json; sleep 600"}}, []string{"MCP server junk"}},
		{"missing command", mcpconfig.Server{Name: "gone", Transport: mcpconfig.Stdio, Command: "/nonexistent/mcp-server"}, []string{"MCP server gone", "/nonexistent/mcp-server"}},
		{"refused", mcpconfig.Server{Name: "closed", Transport: mcpconfig.HTTP, URL: fmt.Sprintf("http://127.0.0.1:%d/mcp", freePort(t))}, []string{"MCP server closed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			cards, err := List(context.Background(), tt.s, &Options{Timeout: 1500 * time.Millisecond})
			if err == nil {
				t.Fatalf("no error; cards %q", names(cards))
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			// Bounded: the timeout plus the process-kill grace period.
			if el := time.Since(start); el > 10*time.Second {
				t.Errorf("took %s", el)
			}
		})
	}
}
