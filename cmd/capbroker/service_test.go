package main

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/capbroker/capbroker/internal/testenv"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// fakeManager stands for systemctl or launchctl: it records the commands
// and answers them.
type fakeManager struct {
	calls  []string
	answer func(cmd string) ([]byte, error)
}

func useFakeManager(t *testing.T, goos string, f *fakeManager) {
	t.Helper()
	oldRunner, oldGOOS := serviceRunner, serviceGOOS
	t.Cleanup(func() { serviceRunner, serviceGOOS = oldRunner, oldGOOS })
	serviceGOOS = goos
	serviceRunner = func(_ context.Context, name string, args ...string) ([]byte, error) {
		cmd := strings.Join(append([]string{name}, args...), " ")
		f.calls = append(f.calls, cmd)
		if f.answer != nil {
			return f.answer(cmd)
		}
		return nil, nil
	}
}

// TestServiceSystemd installs, inspects and removes the shared gateway's
// systemd user unit in a home of its own, systemctl faked: the unit runs
// the absolute capbroker with gateway --addr, and systemctl is asked to
// reload, enable and start it, then to stop and disable it.
func TestServiceSystemd(t *testing.T) {
	f := &fakeManager{answer: func(cmd string) ([]byte, error) {
		if strings.Contains(cmd, "is-active") {
			return []byte("active\n"), nil
		}
		return nil, nil
	}}
	useFakeManager(t, "linux", f)
	home := t.TempDir()
	env := map[string]string{"HOME": home}
	bin := fakeCapbroker(t)
	out, stderr, code := runEnv(t, env, "service", "install", "--command", bin, "--addr", "127.0.0.1:1")
	if code != 0 {
		t.Fatalf("install: exit %d\n%s\n%s", code, out, stderr)
	}
	unit := filepath.Join(home, ".config", "systemd", "user", "capbroker-gateway.service")
	data, err := os.ReadFile(unit)
	if err != nil {
		t.Fatalf("the unit: %v\n%s", err, out)
	}
	// No --client: each client says which it is in its URL (?client=,
	// client add --shared writes it); one that says none keeps the gate.
	for _, want := range []string{"ExecStart=" + bin + " gateway --addr 127.0.0.1:1\n", "WantedBy=default.target", "Restart=on-failure"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("the unit lacks %q:\n%s", want, data)
		}
	}
	want := []string{"systemctl --user daemon-reload", "systemctl --user enable --now capbroker-gateway.service", "systemctl --user restart capbroker-gateway.service"}
	if strings.Join(f.calls, "; ") != strings.Join(want, "; ") {
		t.Errorf("systemctl calls %q, want %q", f.calls, want)
	}

	if out, stderr, code := runEnv(t, env, "service", "install", "--command", bin, "--client", "nope"); code != 2 || !strings.Contains(stderr, `unknown client "nope"`) {
		t.Errorf("install --client nope: exit %d\n%s\n%s", code, out, stderr)
	}
	// --client NAME: the kind of the clients whose URL names none. Once
	// the service runs without it again, install says the clients wired
	// before must say which they are.
	if out, stderr, code := runEnv(t, env, "service", "install", "--command", bin, "--addr", "127.0.0.1:1", "--client", "claude-code"); code != 0 || strings.Contains(stderr, "note:") {
		t.Errorf("install --client claude-code: exit %d\n%s\n%s", code, out, stderr)
	}
	if data, _ := os.ReadFile(unit); !strings.Contains(string(data), " gateway --addr 127.0.0.1:1 --client claude-code\n") {
		t.Errorf("the unit of install --client claude-code:\n%s", data)
	}
	if out, stderr, code := runEnv(t, env, "service", "install", "--command", bin, "--addr", "127.0.0.1:1"); code != 0 || !strings.Contains(stderr, "note: the service ran with --client for every client") {
		t.Errorf("install again without --client: exit %d\n%s\n%s", code, out, stderr)
	}

	f.calls = nil
	out, stderr, code = runEnv(t, env, "service", "status", "--addr", "127.0.0.1:1")
	if code != 1 || !strings.Contains(out, "service: installed ("+unit+")") || !strings.Contains(out, "manager: active") || !strings.Contains(out, "gateway: not answering at http://127.0.0.1:1") ||
		!strings.Contains(stderr, "journalctl --user -u capbroker-gateway.service") {
		t.Errorf("status, gateway down: exit %d, want 1 and how to start it\n%s\n%s", code, out, stderr)
	}
	// A gateway that answers (a real one, fronting no server yet).
	addr := sharedGatewayForTest(t)
	out, stderr, code = runEnv(t, env, "service", "status", "--addr", addr)
	if code != 0 || !strings.Contains(out, "gateway: answering at http://"+addr+"/mcp") {
		t.Errorf("status, gateway up: exit %d\n%s\n%s", code, out, stderr)
	}

	f.calls = nil
	out, _, code = runEnv(t, env, "service", "uninstall")
	if code != 0 || fileExists(unit) || len(f.calls) == 0 || f.calls[0] != "systemctl --user disable --now capbroker-gateway.service" {
		t.Errorf("uninstall: exit %d, unit still there %v, calls %q\n%s", code, fileExists(unit), f.calls, out)
	}

	// No systemctl here: the unit is written all the same, and the output
	// says how to start the gateway.
	useFakeManager(t, "linux", &fakeManager{answer: func(string) ([]byte, error) { return nil, errNoManager }})
	out, stderr, code = runEnv(t, map[string]string{"HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, "xdg")}, "service", "install", "--command", bin)
	if code != 0 || !fileExists(filepath.Join(home, "xdg", "systemd", "user", "capbroker-gateway.service")) || !strings.Contains(out, "systemctl is not installed here") {
		t.Errorf("install without systemctl: exit %d\n%s", code, out)
	}

	// systemctl without a user manager to talk to (ssh, su, a container):
	// the install fails, saying what was written, why it did not start
	// and the ways out.
	useFakeManager(t, "linux", &fakeManager{answer: func(string) ([]byte, error) {
		return []byte("Failed to connect to bus: No medium found\n"), errors.New("exit status 1")
	}})
	_, stderr, code = runEnv(t, env, "service", "install", "--command", bin)
	for _, want := range []string{"wrote " + unit, "Failed to connect to bus", "loginctl enable-linger", "start the gateway yourself: " + bin + " gateway --addr 127.0.0.1:8931"} {
		if code == 0 || !strings.Contains(stderr, want) {
			t.Errorf("install with no user bus: exit %d, stderr lacks %q:\n%s", code, want, stderr)
		}
	}
}

// TestServiceLaunchd writes the macOS launchd agent (a well-formed plist
// running capbroker gateway at load, kept alive) and bootstraps it.
func TestServiceLaunchd(t *testing.T) {
	f := &fakeManager{}
	useFakeManager(t, "darwin", f)
	home := t.TempDir()
	bin := fakeCapbroker(t)
	out, stderr, code := runEnv(t, map[string]string{"HOME": home}, "service", "install", "--command", bin)
	if code != 0 {
		t.Fatalf("install: exit %d\n%s\n%s", code, out, stderr)
	}
	plist := filepath.Join(home, "Library", "LaunchAgents", "dev.capbroker.gateway.plist")
	data, err := os.ReadFile(plist)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Dict struct {
			Strings []string `xml:"string"`
			Array   struct {
				Strings []string `xml:"string"`
			} `xml:"array"`
		} `xml:"dict"`
	}
	if err := xml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("the plist is not XML: %v\n%s", err, data)
	}
	if got := strings.Join(doc.Dict.Array.Strings, " "); got != bin+" gateway --addr 127.0.0.1:8931" {
		t.Errorf("ProgramArguments %q", got)
	}
	if doc.Dict.Strings[0] != "dev.capbroker.gateway" || !strings.Contains(string(data), "<key>KeepAlive</key><true/>") {
		t.Errorf("label or KeepAlive wrong:\n%s", data)
	}
	if len(f.calls) != 2 || !strings.HasPrefix(f.calls[1], "launchctl bootstrap gui/") || !strings.HasSuffix(f.calls[1], plist) {
		t.Errorf("launchctl calls %q", f.calls)
	}
}

// TestServiceWindows says what to do instead.
func TestServiceWindows(t *testing.T) {
	useFakeManager(t, "windows", &fakeManager{})
	_, stderr, code := runEnv(t, map[string]string{"HOME": t.TempDir()}, "service", "install")
	if code == 0 || !strings.Contains(stderr, "Task Scheduler") {
		t.Errorf("exit %d: %s", code, stderr)
	}
}

// TestClientAddShared wires Claude Code to the shared gateway: one HTTP
// entry, the servers in the servers file (which every command still
// reads; the entry is not fronted as a server), and remove undoes it.
func TestClientAddShared(t *testing.T) {
	useFakeManager(t, "linux", &fakeManager{})
	home := t.TempDir()
	t.Chdir(t.TempDir())
	claudeJSON := filepath.Join(home, ".claude.json")
	writeFile(t, claudeJSON, `{"mcpServers": {"web": {"type": "http", "url": "https://example.com/mcp"}}}`)
	env := map[string]string{"HOME": home}
	out, stderr, code := runEnv(t, env, "client", "add", "claude-code", "--shared")
	if code != 0 || !strings.Contains(stderr, "no shared gateway service is installed") || !strings.Contains(out, "irreversible tools (write, delete, send...) pass through") {
		t.Fatalf("add --shared: exit %d\n%s\n%s", code, out, stderr)
	}
	var doc struct {
		MCPServers map[string]json.RawMessage `json:"mcpServers"`
	}
	data, _ := os.ReadFile(claudeJSON)
	json.Unmarshal(data, &doc)
	if len(doc.MCPServers) != 1 || string(doc.MCPServers["capbroker"]) == "" ||
		!strings.Contains(string(data), `"url": "http://127.0.0.1:8931/mcp?client=claude-code"`) || strings.Contains(string(data), `"command"`) {
		t.Errorf("~/.claude.json after add --shared:\n%s", data)
	}
	m := m0(env)
	set, err := m.sources(context.Background(), &discoveryFlags{})
	if err != nil {
		t.Fatal(err)
	}
	if len(set.servers) != 1 || set.servers[0].Name != "web" {
		t.Errorf("servers read after add --shared: %+v (want web only, not the shared entry)", set.servers)
	}
	out, _, code = runEnv(t, env, "client", "remove", "claude-code")
	if now, _ := os.ReadFile(claudeJSON); code != 0 || strings.Contains(string(now), "8931") || !strings.Contains(string(now), `"web"`) {
		t.Errorf("remove: exit %d\n%s\n%s", code, out, now)
	}
	// With a profile: both the client and the profile in the URL.
	if out, stderr, code := runEnv(t, env, "profile", "add", "web-only", "--server", "web"); code != 0 {
		t.Fatalf("profile add: exit %d\n%s\n%s", code, out, stderr)
	}
	out, stderr, code = runEnv(t, env, "client", "add", "claude-code", "--shared", "--profile", "web-only")
	if data, _ := os.ReadFile(claudeJSON); code != 0 || !strings.Contains(string(data), `"url": "http://127.0.0.1:8931/mcp?client=claude-code&profile=web-only"`) ||
		!strings.Contains(out, "the URL says ?client=claude-code") {
		t.Errorf("add --shared --profile: exit %d\n%s\n%s\n%s", code, out, stderr, data)
	}
	runEnv(t, env, "client", "remove", "claude-code")
	_, stderr, code = runEnv(t, map[string]string{"HOME": home}, "client", "add", "claude-desktop", "--shared", "--force")
	if code != 2 || !strings.Contains(stderr, "stdio servers only") {
		t.Errorf("claude-desktop --shared: exit %d: %s", code, stderr)
	}
	_, stderr, code = runEnv(t, env, "client", "add", "claude-code", "--shared", "--addr", "0.0.0.0:8931")
	if code != 2 || !strings.Contains(stderr, "loopback") {
		t.Errorf("--addr 0.0.0.0: exit %d: %s", code, stderr)
	}
}

// sharedGatewayForTest runs "capbroker gateway --addr" on a free loopback
// port, over a servers file with no server yet, until the test ends, and
// returns its address once it answers /status.
func sharedGatewayForTest(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	servers := filepath.Join(home, "servers.json")
	writeFile(t, servers, `{"mcpServers": {}}`)
	return runSharedGateway(t, home, freeAddr(t), "gateway", "--addr", "ADDR", "--mcp-config", servers)
}

// freeAddr is a free loopback address.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// runSharedGateway runs capbroker with args (ADDR standing for addr) in
// home until the test ends, and returns addr once it answers /status.
func runSharedGateway(t *testing.T, home, addr string, args ...string) string {
	t.Helper()
	args = slices.Clone(args)
	for i := range args {
		args[i] = strings.ReplaceAll(args[i], "ADDR", addr)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var errb testenv.Buffer
	m := &Main{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &errb, Getenv: func(k string) string {
		if k == "HOME" {
			return home
		}
		return ""
	}}
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx, args) }()
	t.Cleanup(func() { cancel(); <-done })
	for range 200 {
		if _, err := sharedGatewayStatus(context.Background(), addr); err == nil {
			return addr
		}
		select {
		case err := <-done:
			t.Fatalf("the gateway stopped: %v\n%s", err, errb.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Fatalf("the gateway did not answer at %s within 10 s\n%s", addr, errb.String())
	return ""
}

// TestServiceStatusJSON: service status --json says what service status
// prints, as one object with the documented field names, and exits as it
// does: 1 when the gateway does not answer, installed or not.
func TestServiceStatusJSON(t *testing.T) {
	useFakeManager(t, "linux", &fakeManager{answer: func(cmd string) ([]byte, error) {
		if strings.Contains(cmd, "is-active") {
			return []byte("active\n"), nil
		}
		return nil, nil
	}})
	home := t.TempDir()
	env := map[string]string{"HOME": home}
	unit := filepath.Join(home, ".config", "systemd", "user", "capbroker-gateway.service")
	up := sharedGatewayForTest(t)
	status := func(addr string) (serviceStatus, map[string]any, string, int) {
		t.Helper()
		out, stderr, code := runEnv(t, env, "service", "status", "--json", "--addr", addr)
		var st serviceStatus
		var raw map[string]any
		if err := json.Unmarshal([]byte(out), &st); err != nil {
			t.Fatalf("service status --json: %v\n%s\n%s", err, out, stderr)
		}
		json.Unmarshal([]byte(out), &raw)
		return st, raw, stderr, code
	}
	cases := []struct {
		name      string
		install   bool
		addr      string
		code      int
		answering bool
		manager   string
		start     string
	}{
		{"not installed", false, "127.0.0.1:1", 1, false, "", "capbroker service install starts it"},
		{"installed, answering", true, up, 0, true, "active", ""},
		{"installed, not answering", true, "127.0.0.1:1", 1, false, "active", "systemctl --user restart capbroker-gateway.service"},
	}
	for _, c := range cases {
		if c.install {
			writeFile(t, unit, "[Service]\n")
		}
		st, raw, stderr, code := status(c.addr)
		if code != c.code || st.ExitCode != c.code || st.Installed != c.install || st.File != unit || st.Answering != c.answering ||
			st.Manager != c.manager || st.URL != "http://"+c.addr+"/mcp" || st.Log != "journalctl --user -u capbroker-gateway.service" ||
			!strings.HasPrefix(st.Start, c.start) {
			t.Errorf("%s: exit %d, %+v\n%s", c.name, code, st, stderr)
		}
		if c.answering != (st.Status != "") || c.answering == (st.Error != "") {
			t.Errorf("%s: status %q, error %q", c.name, st.Status, st.Error)
		}
		for _, k := range []string{"installed", "file", "answering", "addr", "url", "log", "exit_code"} {
			if _, ok := raw[k]; !ok {
				t.Errorf("%s: no field %q in %v", c.name, k, raw)
			}
		}
	}
}

// TestSharedGatewayClientKinds runs the shared gateway as service install
// writes it (its unit's ExecStart, systemctl faked) in front of the real
// npm filesystem server, which client add --shared moved out of
// ~/.claude.json, and connects two MCP clients at once: one at the URL
// client add wrote for Claude Code (?client=claude-code), one at the bare
// URL. Claude Code's session gets no MCP coding floor, and write_file
// passes through and writes; the bare one gets the floor, and write_file
// is held.
func TestSharedGatewayClientKinds(t *testing.T) {
	fsServer := testenv.NodeBin(t, "mcp-server-filesystem")
	useFakeManager(t, "linux", &fakeManager{})
	home, dir := t.TempDir(), t.TempDir()
	t.Chdir(t.TempDir())
	env := map[string]string{"HOME": home}
	addr := freeAddr(t)
	claudeJSON := filepath.Join(home, ".claude.json")
	writeFile(t, claudeJSON, `{"mcpServers": {"files": {"command": "`+fsServer+`", "args": ["`+dir+`"]}}}`)
	if out, stderr, code := runEnv(t, env, "service", "install", "--command", fakeCapbroker(t), "--addr", addr); code != 0 {
		t.Fatalf("service install: exit %d\n%s\n%s", code, out, stderr)
	}
	if out, stderr, code := runEnv(t, env, "client", "add", "claude-code", "--shared", "--addr", addr); code != 0 {
		t.Fatalf("client add --shared: exit %d\n%s\n%s", code, out, stderr)
	}
	unit, _ := os.ReadFile(filepath.Join(home, ".config", "systemd", "user", "capbroker-gateway.service"))
	_, execStart, _ := strings.Cut(string(unit), "ExecStart=")
	execStart, _, _ = strings.Cut(execStart, "\n")
	args := strings.Fields(execStart)[1:]
	if slices.Contains(args, "--client") {
		t.Errorf("the unit forces a client kind on every client: %s", execStart)
	}
	runSharedGateway(t, home, addr, append(args, "--start-wait", "1m")...)
	var doc struct {
		MCPServers map[string]struct{ URL string } `json:"mcpServers"`
	}
	data, _ := os.ReadFile(claudeJSON)
	if err := json.Unmarshal(data, &doc); err != nil || doc.MCPServers["capbroker"].URL != "http://"+addr+"/mcp?client=claude-code" {
		t.Fatalf("~/.claude.json: %v\n%s", err, data)
	}
	connect := func(url string) *mcp.ClientSession {
		t.Helper()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).
			Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url}, nil)
		if err != nil {
			t.Fatalf("connecting to %s: %v", url, err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	code, bare := connect(doc.MCPServers["capbroker"].URL), connect("http://"+addr+"/mcp")
	names := func(cs *mcp.ClientSession) []string {
		t.Helper()
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, tl := range res.Tools {
			out = append(out, tl.Name)
		}
		return out
	}
	if got := names(code); slices.Contains(got, "files__list_directory") {
		t.Errorf("Claude Code's first list %v has the MCP coding floor", got)
	}
	if got := names(bare); !slices.Contains(got, "files__list_directory") {
		t.Errorf("the bare client's first list %v lacks the coding floor", got)
	}
	call := func(cs *mcp.ClientSession, path string) (string, bool) {
		t.Helper()
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "files__write_file", Arguments: map[string]any{"path": path, "content": "hi"}})
		if err != nil {
			t.Fatal(err)
		}
		text := ""
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				text += tc.Text
			}
		}
		return text, res.IsError
	}
	if text, isErr := call(code, filepath.Join(dir, "code.txt")); isErr || !fileExists(filepath.Join(dir, "code.txt")) {
		t.Errorf("Claude Code's write_file: %v %s", isErr, text)
	}
	if text, isErr := call(bare, filepath.Join(dir, "bare.txt")); !isErr || !strings.Contains(text, "held back") || fileExists(filepath.Join(dir, "bare.txt")) {
		t.Errorf("the bare client's write_file: %v %s, want held", isErr, text)
	}
}

// TestClientListOldSharedURL: an entry whose shared gateway URL names
// no client (client add --shared wrote none before ?client=) is served
// as an unknown client; client list notes it with the command that
// names the client, keeping the URL's address and profile, and after
// that command has rewritten the URL it notes nothing.
func TestClientListOldSharedURL(t *testing.T) {
	useFakeManager(t, "linux", &fakeManager{})
	home := t.TempDir()
	t.Chdir(t.TempDir())
	claudeJSON := filepath.Join(home, ".claude.json")
	writeFile(t, filepath.Join(home, ".config", "capbroker", "profiles.json"), `{"profiles": {"review": {"servers": ["web"]}}}`)
	writeFile(t, claudeJSON, `{"mcpServers": {"capbroker": {"type": "http", "url": "http://127.0.0.1:9000/mcp?profile=review"}}}`)
	env := map[string]string{"HOME": home}
	_, stderr, code := runEnv(t, env, "client", "list")
	if code != 0 || !strings.Contains(stderr, "note: claude-code: its shared gateway URL http://127.0.0.1:9000/mcp?profile=review names no client") ||
		!strings.Contains(stderr, "capbroker client add claude-code --shared --addr 127.0.0.1:9000 --profile review names it") {
		t.Fatalf("client list over a URL without ?client=: exit %d\n%s", code, stderr)
	}
	out, _, _ := runEnv(t, env, "client", "list", "--json")
	if !strings.Contains(out, `"url_note": "its shared gateway URL http://127.0.0.1:9000/mcp?profile=review names no client`) {
		t.Errorf("client list --json: %s", out)
	}
	if out, stderr, code := runEnv(t, env, "client", "add", "claude-code", "--shared", "--addr", "127.0.0.1:9000", "--profile", "review"); code != 0 {
		t.Fatalf("add --shared: exit %d\n%s\n%s", code, out, stderr)
	}
	if data, _ := os.ReadFile(claudeJSON); !strings.Contains(string(data), "127.0.0.1:9000/mcp?client=claude-code&profile=review") {
		t.Fatalf("~/.claude.json after add --shared:\n%s", data)
	}
	if _, stderr, _ := runEnv(t, env, "client", "list"); strings.Contains(stderr, "names no client") {
		t.Errorf("client list after the rewrite still notes:\n%s", stderr)
	}
	if out, _, _ := runEnv(t, env, "client", "list", "--json"); strings.Contains(out, "url_note") {
		t.Errorf("client list --json after the rewrite: %s", out)
	}
}
