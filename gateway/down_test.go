package gateway

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/capbroker/capbroker/identity"
	"github.com/capbroker/capbroker/policy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// findDown calls find_capability and returns its raw answer and its
// "down" field.
func findDown(t *testing.T, cs *mcp.ClientSession, query string) (string, *downAnswer) {
	t.Helper()
	text, isErr := callText(t, cs, policy.HatchName, map[string]any{"query": query})
	if isErr {
		t.Fatalf("find_capability(%q): %s", query, text)
	}
	var ans findAnswer
	if err := json.Unmarshal([]byte(text), &ans); err != nil {
		t.Fatalf("find_capability's answer %q: %v", text, err)
	}
	return text, ans.Down
}

// TestFindNamesDownServers runs the gateway over the real npm memory and
// filesystem servers and one whose command does not exist: a find names
// the one that failed to start, and, once the memory server dies mid
// session (and cannot start again), that one too, saying their tools may
// be missing; a call to a tool on either says the server is down. A
// session kept within a profile that leaves them out never hears of
// them, and its answer has no "down" field at all.
func TestFindNamesDownServers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Node.js servers")
	}
	d := deps{t}
	dir := t.TempDir()
	pidFile, stop := filepath.Join(dir, "memory.pid"), filepath.Join(dir, "stop")
	// The memory server, started by a shell that records its pid and,
	// once told to stop, fails to start again (a server that crashed for
	// good).
	memory := ServerConfig{Name: "memory", Command: "/bin/sh", Args: []string{"-c",
		`if [ -e "$STOP" ]; then echo "memory server: cannot start" >&2; exit 1; fi; echo $$ > "$PIDFILE"; exec "$SERVER"`},
		Env: map[string]string{"STOP": stop, "PIDFILE": pidFile, "SERVER": d.npmBin("mcp-server-memory"), "MEMORY_FILE_PATH": filepath.Join(dir, "memory.jsonl")}}
	fs := ServerConfig{Name: "filesystem", Command: d.npmBin("mcp-server-filesystem"), Args: []string{dir}}
	broken := ServerConfig{Name: "broken", Command: filepath.Join(dir, "no-such-server")}
	named, err := identity.ParseProfiles([]byte(`{"profiles": {"files": {"servers": ["filesystem"]}}}`), "profiles.json")
	if err != nil {
		t.Fatal(err)
	}
	g, err := New(&Config{Servers: []ServerConfig{fs, memory, broken}}, &Options{Mode: ModeAuto, Family: policy.General,
		StartTimeout: time.Minute, CallTimeout: 2 * time.Second, MaxBackoff: 500 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(newTestWriter(t), &slog.HandlerOptions{Level: slog.LevelError}))})
	if err != nil {
		t.Fatal(err)
	}
	g.SetProfiles(Profiles{Named: named})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { cancel(); g.Close() })
	if err := g.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := g.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	url := serveHTTP(t, g, nil)
	cs := connect(t, url, nil, nil)
	files := connect(t, url+"?profile=files", nil, nil)

	text, down := findDown(t, cs, "create entities in the knowledge graph")
	if down == nil || len(down.Servers) != 1 || down.Servers[0].Name != "broken" || !strings.HasPrefix(down.Servers[0].State, "failed to start (") ||
		!strings.Contains(down.Servers[0].State, "no-such-server") || !strings.Contains(down.Note, "may be missing") {
		t.Errorf("with broken down, find says %s", text)
	}
	if !strings.Contains(text, "memory__create_entities") {
		t.Errorf("memory's tools, up, are not found: %s", text)
	}
	text, down = findDown(t, files, "list a directory")
	if down != nil || strings.Contains(text, `"down"`) || strings.Contains(text, "broken") {
		t.Errorf("a session within profile files hears of servers outside it: %s", text)
	}
	if text, isErr := callText(t, files, "broken__create_issue", nil); !isErr || strings.Contains(text, "not connected") {
		t.Errorf("a call within profile files to broken: %v %q, want no word of broken being down", isErr, text)
	}

	// The memory server dies, and cannot start again.
	if err := os.WriteFile(stop, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for memoryUp(g) {
		if time.Now().After(deadline) {
			t.Fatal("the memory server, killed, is still connected")
		}
		time.Sleep(50 * time.Millisecond)
	}
	text, down = findDown(t, cs, "create entities in the knowledge graph")
	var states []string
	if down != nil {
		for _, s := range down.Servers {
			states = append(states, s.Name+": "+s.State)
		}
	}
	if len(states) != 2 || !strings.HasPrefix(states[0], "memory: restarting after it stopped") || !strings.HasPrefix(states[1], "broken: failed to start") {
		t.Errorf("with memory dead, find names %q: %s", states, text)
	}
	if text, isErr := callText(t, cs, "memory__create_entities", map[string]any{"entities": []any{}}); !isErr || !strings.Contains(text, `server "memory" is not connected`) {
		t.Errorf("a call to the dead memory server: %v %q", isErr, text)
	}
	if text, isErr := callText(t, cs, "broken__create_issue", nil); !isErr || !strings.Contains(text, `server "broken" is not connected`) || !strings.Contains(text, "failed to start") {
		t.Errorf("a call to broken: %v %q", isErr, text)
	}
	if _, down = findDown(t, files, "list a directory"); down != nil {
		t.Errorf("within profile files, find names %+v", down)
	}
}

func memoryUp(g *Gateway) bool {
	for _, st := range g.Status() {
		if st.Name == "memory" {
			return st.Connected
		}
	}
	return false
}

// TestFindDownBudget: over the find budget, the down servers' errors go
// before anything else does, and the servers stay named.
func TestFindDownBudget(t *testing.T) {
	g := &Gateway{opts: (&Options{}).resolved()}
	down := func() *downAnswer {
		return &downAnswer{Note: downNote, Servers: []downServer{{Name: "github", State: "unreachable (" + strings.Repeat("connecting to https://api.example.com/mcp: dial tcp: refused; ", 3) + ")"}}}
	}
	cat := &catalog{tools: map[string]*toolEntry{}}
	roomy := g.findAnswer(cat, "open an issue", "nothing matches", nil, nil, down(), ModeAuto, 800)
	if !strings.HasPrefix(roomy.Down.Servers[0].State, "unreachable (connecting") {
		t.Errorf("within budget, the state lost its error: %+v", roomy.Down)
	}
	tight := g.findAnswer(cat, "open an issue", "nothing matches", nil, nil, down(), ModeAuto, 60)
	if tight.Down == nil || tight.Down.Servers[0] != (downServer{Name: "github", State: "unreachable"}) {
		t.Errorf("over budget: %+v", tight.Down)
	}
	if none := g.findAnswer(cat, "open an issue", "nothing matches", nil, nil, nil, ModeAuto, 800); none.Down != nil {
		t.Errorf("all up: %+v", none.Down)
	} else if b, _ := json.Marshal(none); strings.Contains(string(b), "down") {
		t.Errorf("all up, the answer says %s", b)
	}
}

// TestFindNamesUnreachable: a remote server nothing answers at is named
// unreachable, with why; the test-binary server that is up is not named.
func TestFindNamesUnreachable(t *testing.T) {
	web := ServerConfig{Name: "web", URL: "http://127.0.0.1:1/mcp"}
	g := startGateway(t, []ServerConfig{testServer("alpha"), web}, &Options{Mode: ModeAuto, Family: policy.General, StartTimeout: 5 * time.Second})
	cs := connect(t, serveHTTP(t, g, nil), nil, nil)
	text, down := findDown(t, cs, "echo the text back")
	if down == nil || len(down.Servers) != 1 || down.Servers[0].Name != "web" || !strings.HasPrefix(down.Servers[0].State, "unreachable (") {
		t.Errorf("find with web unreachable: %s", text)
	}
	if text, isErr := callText(t, cs, "web__fetch", nil); !isErr || !strings.Contains(text, `server "web" is not connected`) || !strings.Contains(text, "unreachable: ") {
		t.Errorf("a call to web: %v %q", isErr, text)
	}
}
