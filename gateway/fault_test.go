package gateway

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestUpstreamKilledMidCall kills an upstream process while a call is in
// flight: that call gets a clear error, and the next call succeeds once
// the gateway has restarted the server.
func TestUpstreamKilledMidCall(t *testing.T) {
	g := startGateway(t, []ServerConfig{testServer("victim")}, &Options{Mode: ModeAll, MinBackoff: 50 * time.Millisecond})
	cs := connect(t, serveHTTP(t, g, nil), nil, nil)

	pidText, pid := serverPID(t, cs, "victim__pid")

	type outcome struct {
		text  string
		isErr bool
	}
	done := make(chan outcome, 1)
	go func() {
		text, isErr := callText(t, cs, "victim__sleep", map[string]any{"ms": 60000})
		done <- outcome{text, isErr}
	}()
	// Kill it once the call is in flight upstream.
	u := g.upstream("victim")
	for c, _ := u.route(nil); c == nil; c, _ = u.route(nil) {
		time.Sleep(5 * time.Millisecond)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	got := <-done
	if !got.isErr || !strings.Contains(got.text, `server "victim"`) {
		t.Fatalf("the interrupted call should fail with an error naming the server; got isError=%v %q", got.isErr, got.text)
	}
	t.Logf("interrupted call: %s", got.text)

	text, isErr := callText(t, cs, "victim__echo", map[string]any{"text": "again"})
	if isErr || text != "victim: again" {
		t.Fatalf("after the restart: isError=%v %q, want victim: again", isErr, text)
	}
	newPid, _ := callText(t, cs, "victim__pid", nil)
	if newPid == pidText {
		t.Errorf("the server was not restarted (same pid %s)", newPid)
	}
	if st := g.Status()[0]; !st.Connected || st.Restarts < 1 {
		t.Errorf("status after restart: %+v", st)
	}
}

// TestHangingUpstream checks that an upstream that never answers times out
// while another upstream keeps answering.
func TestHangingUpstream(t *testing.T) {
	slow := testServer("slow")
	slow.Timeout = 700 * time.Millisecond
	g := startGateway(t, []ServerConfig{slow, testServer("fast")}, &Options{Mode: ModeAll})
	cs := connect(t, serveHTTP(t, g, nil), nil, nil)

	var wg sync.WaitGroup
	var hangText string
	var hangErr bool
	var hangTook time.Duration
	wg.Add(1)
	go func() {
		defer wg.Done()
		start := time.Now()
		hangText, hangErr = callText(t, cs, "slow__hang", nil)
		hangTook = time.Since(start)
	}()
	for c, _ := g.upstream("slow").route(nil); c == nil; c, _ = g.upstream("slow").route(nil) {
		time.Sleep(5 * time.Millisecond)
	}
	// While slow hangs, fast answers, repeatedly.
	for i := range 5 {
		want := "fast: " + strconv.Itoa(i)
		if text, isErr := callText(t, cs, "fast__echo", map[string]any{"text": strconv.Itoa(i)}); isErr || text != want {
			t.Fatalf("fast upstream while slow hangs: isError=%v %q, want %q", isErr, text, want)
		}
	}
	if c, _ := g.upstream("slow").route(nil); c == nil {
		t.Fatal("the hanging call ended before fast answered: the test proves nothing")
	}
	wg.Wait()
	if !hangErr || !strings.Contains(hangText, "did not answer") || !strings.Contains(hangText, "700ms") {
		t.Fatalf("hanging call: isError=%v %q, want a timeout naming 700ms", hangErr, hangText)
	}
	if hangTook > 30*time.Second {
		t.Errorf("the hanging call took %s", hangTook)
	}
	// The hung upstream still serves other calls.
	if text, isErr := callText(t, cs, "slow__echo", map[string]any{"text": "ok"}); isErr || text != "slow: ok" {
		t.Errorf("slow after the timeout: isError=%v %q", isErr, text)
	}
}

// TestUnreachableUpstream checks that a server that cannot start does not
// stop the gateway: the others serve, and its status says why.
func TestUnreachableUpstream(t *testing.T) {
	bad := ServerConfig{Name: "missing", Command: "/nonexistent/mcp-server"}
	g := startGateway(t, []ServerConfig{bad, testServer("ok")}, &Options{Mode: ModeAll, MinBackoff: time.Second})
	cs := connect(t, serveHTTP(t, g, nil), nil, nil)
	if text, isErr := callText(t, cs, "ok__echo", map[string]any{"text": "hi"}); isErr || text != "ok: hi" {
		t.Fatalf("isError=%v %q", isErr, text)
	}
	var st Status
	for _, s := range g.Status() {
		if s.Name == "missing" {
			st = s
		}
	}
	if st.Connected || !strings.Contains(st.Error, "/nonexistent/mcp-server") {
		t.Errorf("status of the missing server: %+v", st)
	}
	_ = context.Background
}

// TestUpstreamThatCannotRestart kills an upstream that then cannot start
// again: a call to it fails once two attempts to restart it have failed,
// naming the server, why and when it is tried next, instead of holding
// the call for its timeout (an hour here: the test would hang on the old
// behaviour).
func TestUpstreamThatCannotRestart(t *testing.T) {
	dir := t.TempDir()
	stop := filepath.Join(dir, "stop")
	victim := testServer("victim")
	exe := victim.Command
	victim.Command = "/bin/sh"
	victim.Args = []string{"-c", `if [ -e "$STOP" ]; then echo "$WHY" >&2; exit 1; fi; exec "$SERVER"`}
	victim.Env["STOP"], victim.Env["SERVER"], victim.Env["WHY"] = stop, exe, "victim: cannot start, its install is broken"
	victim.Timeout = time.Hour
	g := startGateway(t, []ServerConfig{victim}, &Options{Mode: ModeAll, MinBackoff: 20 * time.Millisecond, MaxBackoff: time.Minute})
	cs := connect(t, serveHTTP(t, g, nil), nil, nil)

	_, pid := serverPID(t, cs, "victim__pid")
	if err := os.WriteFile(stop, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); g.Status()[0].Connected; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the killed server still reads as connected after a minute")
		}
	}
	// Called while the gateway restarts it: the call waits for the
	// restart, which fails twice.
	text, isErr := callText(t, cs, "victim__echo", map[string]any{"text": "again"})
	for _, want := range []string{`server "victim" is not connected`, "attempts to start it failed", "cannot start, its install is broken", "next attempt in"} {
		if !isErr || !strings.Contains(text, want) {
			t.Fatalf("a call to the dead server: isError=%v %q, want %q in it", isErr, text, want)
		}
	}
	t.Logf("the call: %s", text)
	// And the next call is refused at once, the same way.
	if text, isErr := callText(t, cs, "victim__echo", map[string]any{"text": "again"}); !isErr || !strings.Contains(text, "attempts to start it failed") {
		t.Fatalf("a second call: isError=%v %q", isErr, text)
	}
	// Once the server can start again, the gateway brings it back.
	if err := os.Remove(stop); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		text, isErr := callText(t, cs, "victim__echo", map[string]any{"text": "back"})
		if !isErr && text == "victim: back" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server never came back: %q", text)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// serverPID asks a test server for its process ID (the tool named).
func serverPID(t *testing.T, cs *mcp.ClientSession, tool string) (string, int) {
	t.Helper()
	text, isErr := callText(t, cs, tool, nil)
	if isErr {
		t.Fatalf("%s: %s", tool, text)
	}
	pid, err := strconv.Atoi(text)
	if err != nil {
		t.Fatalf("%s: %q: %v", tool, text, err)
	}
	return text, pid
}
