package gateway

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/capbroker/capbroker/policy"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// namesServers are two test servers sharing their tools' names, the
// second with one of its own (create_issue).
func namesServers() []ServerConfig {
	beta := testServer("beta")
	beta.Env[testServerEnv+"_EXTRA"] = `[{"name":"create_issue","description":"Open an issue in the tracker."}]`
	return []ServerConfig{testServer("alpha"), beta}
}

// TestResolveName checks the names an agent calls a tool by: the
// gateway's own, a client's prefix, slips of case and separators, the
// bare upstream name when one server has it; an ambiguous or misspelt
// name resolves to nothing, with the candidates.
func TestResolveName(t *testing.T) {
	g := startGateway(t, namesServers(), &Options{Mode: ModeSearch, Family: policy.General})
	cat := g.catalog()
	tests := []struct {
		name, want string
		cands      []string
	}{
		{"alpha__echo", "alpha__echo", nil},
		{"mcp__capbroker__alpha__echo", "alpha__echo", nil},
		{"mcp__alpha__echo", "alpha__echo", nil},
		{"mcp__capbroker__create_issue", "beta__create_issue", nil},
		{"ALPHA.Echo", "alpha__echo", nil},
		{"alpha-echo", "alpha__echo", nil},
		{"alpha_echo", "alpha__echo", nil},
		{"beta/create-issue", "beta__create_issue", nil},
		{"create_issue", "beta__create_issue", nil},
		{"createIssue", "beta__create_issue", nil},
		{"functions.beta__pid", "beta__pid", nil},
		{"capbroker__alpha__echo", "alpha__echo", nil},             // Goose: extension__tool
		{"capbroker:beta:create-issue", "beta__create_issue", nil}, // the gateway's entry name, any separator
		{"capbroker.create_issue", "beta__create_issue", nil},
		{"mcpgw__beta__create_issue", "beta__create_issue", nil},
		{"gamma__create_issue", "", []string{"beta__create_issue"}}, // a server not there is not guessed
		{"capbrokerish", "", nil},
		{"alpha__delete_all", "alpha__delete_all", nil}, // held: resolved, refused later
		{"echo", "", []string{"alpha__echo", "beta__echo"}},
		{"mcp__capbroker__echo", "", []string{"alpha__echo", "beta__echo"}},
		{"create_isue", "", []string{"beta__create_issue"}},
		{"qwzx_vbnm", "", nil},
	}
	for _, tt := range tests {
		got, cands := cat.resolveName(tt.name, nil)
		if got != tt.want {
			t.Errorf("resolveName(%q) = %q (%v), want %q", tt.name, got, cands, tt.want)
			continue
		}
		if tt.want == "" && tt.cands != nil && !cmp.Equal(cands[:min(len(cands), len(tt.cands))], tt.cands) {
			t.Errorf("resolveName(%q) candidates %v, want %v first", tt.name, cands, tt.cands)
		}
		if tt.want == "" && tt.cands == nil && len(cands) != 0 {
			t.Errorf("resolveName(%q) candidates %v, want none", tt.name, cands)
		}
	}
}

// TestResolveNameWithin resolves names for a session kept within a
// profile (alpha's tools only): a loose or bare name resolves among the
// allowed tools, the candidates are allowed ones only, and an exact name
// still resolves (for the caller to refuse, saying which profile).
func TestResolveNameWithin(t *testing.T) {
	g := startGateway(t, namesServers(), &Options{Mode: ModeSearch, Family: policy.General})
	cat := g.catalog()
	alphaOnly := func(n string) bool { return strings.HasPrefix(n, "alpha__") }
	tests := []struct {
		name, want string
	}{
		{"echo", "alpha__echo"}, // ambiguous unfiltered, alpha's within the profile
		{"mcp__capbroker__echo", "alpha__echo"},
		{"beta__echo", "beta__echo"},
		{"mcp__capbroker__beta__echo", "beta__echo"},
		{"BETA.Echo", ""},
		{"create_issue", ""},
		{"create_isue", ""},
	}
	for _, tt := range tests {
		got, cands := cat.resolveName(tt.name, alphaOnly)
		if got != tt.want {
			t.Errorf("resolveName(%q) within alpha = %q (%v), want %q", tt.name, got, cands, tt.want)
		}
		for _, c := range cands {
			if !alphaOnly(c) {
				t.Errorf("resolveName(%q) within alpha suggests %q, outside it", tt.name, c)
			}
		}
	}
}

// TestCallDownServer: a call by the name of a tool whose server is not
// connected (its command does not start) says so, with why, instead of
// "no tool is named"; a slip on a connected server's tool still gets
// "did you mean".
func TestCallDownServer(t *testing.T) {
	broken := ServerConfig{Name: "broken", Command: filepath.Join(t.TempDir(), "no-such-server")}
	g := startGateway(t, []ServerConfig{testServer("alpha"), broken}, &Options{Mode: ModeAuto, Family: policy.General})
	url := serveHTTP(t, g, nil)
	cs := connect(t, url, nil, nil)
	for _, name := range []string{"broken__create_issue", "mcp__capbroker__broken__create_issue"} {
		text, isErr := callText(t, cs, name, nil)
		if !isErr || !strings.Contains(text, `server "broken" is not connected`) || !strings.Contains(text, "no-such-server") {
			t.Errorf("calling %s: %v %q, want: server broken is not connected, and why", name, isErr, text)
		}
	}
	if text, isErr := callText(t, cs, "alpha__ecoh", map[string]any{"text": "x"}); !isErr || !strings.Contains(text, "did you mean") {
		t.Errorf("a slip on alpha: %v %q", isErr, text)
	}
}

// TestRefusedArguments tells a server's refusal of a call's arguments,
// reported in an error result as the TypeScript and Python SDKs do, from
// a tool's own errors.
func TestRefusedArguments(t *testing.T) {
	text := func(s ...string) *mcp.CallToolResult {
		r := &mcp.CallToolResult{IsError: true}
		for _, x := range s {
			r.Content = append(r.Content, &mcp.TextContent{Text: x})
		}
		return r
	}
	tests := []struct {
		name string
		res  *mcp.CallToolResult
		want bool
	}{
		{"typescript", text("MCP error -32602: Input validation error: Invalid arguments for tool read_text_file: Invalid input: expected string, received undefined at path"), true},
		{"python", text("Error executing tool add: 1 validation error for addArguments\nb\n  Field required [type=missing]"), true},
		{"python, several", text("Error executing tool add: 2 validation errors for addArguments\na\n  Field required"), true},
		{"the tool's own error", text("ENOENT: no such file or directory, open '/x'"), false},
		{"another code", text("MCP error -32603: internal error"), false},
		{"a validation tool's finding", text("1 validation error for schema.json"), false},
		{"two parts", text("MCP error -32602: x", "more"), false},
		{"no text", &mcp.CallToolResult{IsError: true}, false},
	}
	for _, tt := range tests {
		if _, got := refusedArguments(tt.res); got != tt.want {
			t.Errorf("%s: refusedArguments = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestCallByName calls tools the session was never shown: directly and
// through call_capability, by the gateway name, a prefixed or bare name,
// and a misspelt one; and with arguments sent as a JSON string and as
// something else. Each call that resolves runs, joins the session's list
// and is traced "called by name".
func TestCallByName(t *testing.T) {
	tr := &events{}
	g := startGateway(t, namesServers(), &Options{Mode: ModeAuto, Family: policy.General, Trace: tr})
	url := serveHTTP(t, g, nil)
	cs := connect(t, url, nil, map[string]string{SessionHeader: "by-name"})
	if got := listNames(t, cs); slices.Contains(got, "beta__echo") {
		t.Fatalf("beta__echo listed from the start: %v", got)
	}

	calls := []struct {
		how, name string
		args      any
		want      string
	}{
		{"direct", "beta__echo", map[string]any{"text": "a"}, "beta: a"},
		{"direct", "mcp__capbroker__alpha__echo", map[string]any{"text": "b"}, "alpha: b"},
		{"direct", "create_issue", nil, "create_issue: ok"},
		{"call_capability", "mcp__capbroker__beta__pid", nil, ""},
		{"call_capability", "Alpha.Echo", `{"text": "as a string"}`, "alpha: as a string"},
	}
	for _, c := range calls {
		var text string
		var isErr bool
		if c.how == "direct" {
			text, isErr = callText(t, cs, c.name, c.args)
		} else {
			text, isErr = callText(t, cs, CallName, map[string]any{"name": c.name, "arguments": c.args})
		}
		if isErr || (c.want != "" && text != c.want) {
			t.Errorf("%s %s: isError=%v %q, want %q", c.how, c.name, isErr, text, c.want)
		}
	}
	for _, n := range []string{"beta__echo", "alpha__echo", "beta__create_issue", "beta__pid"} {
		if got := listNames(t, cs); !slices.Contains(got, n) {
			t.Errorf("%s, called by name, not in the session's list: %v", n, got)
		}
	}
	var byName []string
	tr.mu.Lock()
	all := slices.Clone(tr.all)
	tr.mu.Unlock()
	for _, e := range all {
		if e.Kind == "call" && strings.HasPrefix(e.Reason, "called by name") && e.Outcome == "ok" {
			byName = append(byName, e.Tool)
		}
	}
	if diff := cmp.Diff([]string{"beta__echo", "alpha__echo", "beta__create_issue", "beta__pid"}, byName); diff != "" {
		t.Errorf("calls traced as called by name (-want +got):\n%s", diff)
	}

	refused := []struct {
		how, name string
		args      any
		want      []string
	}{
		{"direct", "echo", nil, []string{`did you mean "alpha__echo" or "beta__echo"`}},
		{"direct", "beta__ecoh", nil, []string{`did you mean "beta__echo"`}},
		{"call_capability", "creat_issue", nil, []string{`did you mean "beta__create_issue"`}},
		{"direct", "qwzx_vbnm", nil, []string{"find_capability"}},
		{"direct", "alpha__delete_all", nil, []string{"--allow-irreversible"}},
		{"call_capability", "alpha__echo", `not json`, []string{"not a JSON object", `"text"`}},
		{"call_capability", "alpha__echo", []any{"x"}, []string{"an array", `"text"`}},
		{"direct", "alpha__echo", map[string]any{"text": 7}, []string{"text"}}, // the server's own validation
	}
	for _, c := range refused {
		var text string
		var isErr bool
		if c.how == "direct" {
			text, isErr = callText(t, cs, c.name, c.args)
		} else {
			text, isErr = callText(t, cs, CallName, map[string]any{"name": c.name, "arguments": c.args})
		}
		if !isErr {
			t.Errorf("%s %s %v: ran (%q), want an error", c.how, c.name, c.args, text)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(text, w) {
				t.Errorf("%s %s %v: %q, want it to say %q", c.how, c.name, c.args, text, w)
			}
		}
	}
}

// TestCallByNameIgnoringListChanged: a client that keeps the list it got
// at the start (as Claude Code does) calls a tool it was never shown by
// its bare name and by its own prefixed name, directly.
func TestCallByNameIgnoringListChanged(t *testing.T) {
	g := startGateway(t, namesServers(), &Options{Mode: ModeSearch, Family: policy.General})
	url := serveHTTP(t, g, nil)
	cs := connect(t, url, nil, nil)
	_ = listNames(t, cs)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "mcp__capbroker__create_issue", Arguments: json.RawMessage(`{}`)})
	if err != nil || res.IsError || resultText(res) != "create_issue: ok" {
		t.Fatalf("mcp__capbroker__create_issue: %v %+v", err, res)
	}
}
