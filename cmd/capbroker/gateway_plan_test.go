package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/capbroker/capbroker/gateway"
	"github.com/capbroker/capbroker/plan"
	"github.com/capbroker/capbroker/session"
	"github.com/capbroker/capbroker/store"
	_ "github.com/capbroker/capbroker/store/sqlite"
)

// newOfficeServer is a Go SDK MCP server over streamable HTTP with a few
// office tools, for plans to name.
func newOfficeServer(t *testing.T) string {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "office", Version: "1"}, nil)
	type args struct {
		Text string `json:"text"`
	}
	for name, desc := range map[string]string{
		"translate": "Translate a text into another human language.",
		"summarize": "Summarize a long document into its key points.",
		"chart":     "Draw a bar or line chart from a table of numbers.",
	} {
		mcp.AddTool(srv, &mcp.Tool{Name: name, Description: desc},
			func(_ context.Context, _ *mcp.CallToolRequest, a args) (*mcp.CallToolResult, any, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name + ": " + a.Text}}}, nil, nil
			})
	}
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	return ts.URL
}

const officePlan = `{
  "goal": "Brief the Paris office on the quarterly numbers",
  "tasks": [
    {"id": "t1", "description": "Summarize the quarterly report and translate the summary into French.",
     "capabilities": ["office__summarize", "office__translate"]},
    {"id": "t2", "description": "Chart the quarterly numbers for the Paris office.", "depends_on": ["t1"],
     "capabilities": ["office__chart"]}
  ]
}
`

// TestGatewayPlanTask: a gateway handed a plan task starts the session
// with that task's tools (plus the hatch): over stdio with --plan and
// --plan-task, over HTTP with the Capbroker-Plan-Task header, naming a
// task of the --plan file or of a plan stored in the trace.
func TestGatewayPlanTask(t *testing.T) {
	url := newOfficeServer(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "servers.json")
	writeFile(t, cfg, fmt.Sprintf(`{"mcpServers": {"office": {"url": %q}}}`, url))
	planFile := filepath.Join(dir, "plan.json")
	writeFile(t, planFile, officePlan)
	db := filepath.Join(dir, "sessions.db")
	env := map[string]string{"HOME": dir}
	base := []string{"--mcp-config", cfg, "--family", "general", "--index", filepath.Join(dir, "index"), "--db", db}

	g := runGateway(t, env, nil, append(base, "--plan", planFile, "--plan-task", "t1", "--session", "p1")...)
	if diff := cmp.Diff([]string{"call_capability", "find_capability", "office__summarize", "office__translate"}, g.tools(t)); diff != "" {
		t.Errorf("stdio, task t1 (-want +got):\n%s", diff)
	}
	if text, isErr := g.call(t, "office__translate", map[string]any{"text": "bonjour"}); isErr || text != "translate: bonjour" {
		t.Errorf("translate: %v %q", isErr, text)
	}
	// A tool of another task is not listed, yet callable by name.
	if text, isErr := g.call(t, "office__chart", map[string]any{"text": "x"}); isErr || text != "chart: x" {
		t.Errorf("a tool of another task, by name: %v %q", isErr, text)
	}
	g.stop()
	out, stderr, code := runEnv(t, env, "trace", "--session", "p1", "--db", db, "--json")
	if code != 0 {
		t.Fatalf("trace: exit %d: %s", code, stderr)
	}
	var recs []struct {
		Kind, Task       string
		CapabilityReason string `json:"capability_reason"`
	}
	json.Unmarshal([]byte(out), &recs)
	if len(recs) < 2 || recs[0].Kind != "plan" || recs[1].Kind != "select" ||
		!strings.Contains(recs[0].CapabilityReason, `plan task t1: task t1 of the plan "Brief the Paris office on the quarterly numbers": 2 named before the run (office__summarize, office__translate)`) ||
		!strings.HasPrefix(recs[0].Task, "Summarize the quarterly report") {
		t.Errorf("gateway plan session trace: %s", out)
	}

	// An unknown task is refused, naming the plan's tasks.
	_, stderr, code = runIO(t, env, "", append([]string{"gateway"}, append(base, "--plan", planFile, "--plan-task", "t9")...)...)
	if code == 0 || !strings.Contains(stderr, `the plan has no task "t9" (it has t1, t2)`) {
		t.Errorf("unknown task: exit %d, %s", code, stderr)
	}

	// Over HTTP: the header names a task of the plan file, or of a plan
	// stored in the trace under its id.
	ctx := context.Background()
	st, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	p, err := plan.Parse([]byte(officePlan))
	if err != nil {
		t.Fatal(err)
	}
	stored := *p
	stored.Tasks = append(stored.Tasks[:1:1], plan.Task{ID: "t2", Description: "Translate the numbers' commentary.", Capabilities: []string{"office__translate"}})
	rec := session.PlanRecord("planned", &stored, nil, nil)
	rec.At = time.Now()
	if err := st.AppendTraces(ctx, rec); err != nil {
		t.Fatal(err)
	}
	up, err := m0(env).explicitUpstreams(context.Background(), []string{cfg}, "")
	if err != nil {
		t.Fatal(err)
	}
	gw, err := gateway.New(&gateway.Config{Servers: up.servers}, &gateway.Options{Family: "general",
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), PlanTasks: &gatewayPlans{file: p, st: st, log: slog.New(slog.NewTextHandler(io.Discard, nil))}})
	if err != nil {
		t.Fatal(err)
	}
	if err := gw.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer gw.Close()
	hs := httptest.NewServer(gw.Handler(nil))
	defer hs.Close()
	for _, tt := range []struct {
		ref  string
		want []string
	}{
		{"t2", []string{"call_capability", "find_capability", "office__chart"}},
		{stored.ID() + "/t2", []string{"call_capability", "find_capability", "office__translate"}},
		{"", []string{"call_capability", "find_capability"}},
	} {
		client := &http.Client{Transport: headerRT{PlanTaskHeader: tt.ref}}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).
			Connect(ctx, &mcp.StreamableClientTransport{Endpoint: hs.URL + "/mcp", HTTPClient: client}, nil)
		if err != nil {
			t.Fatalf("%q: connecting: %v", tt.ref, err)
		}
		var got []string
		for tool, err := range cs.Tools(ctx, nil) {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, tool.Name)
		}
		cs.Close()
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("HTTP, %s %q (-want +got):\n%s", PlanTaskHeader, tt.ref, diff)
		}
	}
	// A task no plan has is refused before any session opens.
	req, _ := http.NewRequest("POST", hs.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`))
	req.Header.Set(PlanTaskHeader, "nope/t1")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "no plan nope in the trace") {
		t.Errorf("unknown stored plan: %d %s", resp.StatusCode, body)
	}
}

const PlanTaskHeader = gateway.PlanTaskHeader

// headerRT sets headers on every request.
type headerRT map[string]string

func (h headerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h {
		if v != "" {
			r.Header.Set(k, v)
		}
	}
	return http.DefaultTransport.RoundTrip(r)
}

func m0(env map[string]string) *Main {
	return &Main{Stdout: io.Discard, Stderr: io.Discard, Getenv: func(k string) string { return env[k] }}
}
