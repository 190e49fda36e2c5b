package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestClientCommand routes Claude Code (its real ~/.claude.json shape)
// through the gateway with the CLI: list, add --dry-run, add, add again,
// list, remove.
func TestClientCommand(t *testing.T) {
	home := t.TempDir()
	orig, err := os.ReadFile(filepath.Join("..", "..", "clientconfig", "testdata", "claude-code.json"))
	if err != nil {
		t.Fatal(err)
	}
	claudeJSON := filepath.Join(home, ".claude.json")
	writeFile(t, claudeJSON, string(orig))
	env := map[string]string{"HOME": home}
	bin := fakeCapbroker(t)

	type status struct {
		Client    string
		Installed bool
		Routes    bool `json:"routes_through_capbroker"`
		Servers   []string
		Behind    []string `json:"behind_gateway"`
	}
	list := func() map[string]status {
		out, stderr, code := runEnv(t, env, "client", "list", "--json")
		if code != 0 {
			t.Fatalf("client list: exit %d: %s", code, stderr)
		}
		var sts []status
		if err := json.Unmarshal([]byte(out), &sts); err != nil {
			t.Fatalf("client list --json: %v in %s", err, out)
		}
		m := map[string]status{}
		for _, s := range sts {
			m[s.Client] = s
		}
		return m
	}
	if st := list()["claude-code"]; !st.Installed || st.Routes || len(st.Servers) != 3 {
		t.Fatalf("before: %+v", st)
	}
	if st := list()["cursor"]; st.Installed || st.Servers == nil {
		t.Errorf("cursor (absent): %+v, want not installed and servers [] (not null)", st)
	}

	out, stderr, code := runEnv(t, env, "client", "add", "claude-code", "--dry-run", "--command", bin)
	if code != 0 || !strings.Contains(out, "+++ "+claudeJSON) || !strings.Contains(out, `-    "memory": {`) || !strings.Contains(stderr, "nothing written") {
		t.Fatalf("add --dry-run: exit %d\n%s\n%s", code, out, stderr)
	}
	if now, _ := os.ReadFile(claudeJSON); string(now) != string(orig) {
		t.Fatal("--dry-run changed ~/.claude.json")
	}

	out, stderr, code = runEnv(t, env, "client", "add", "claude-code", "--command", bin)
	if code != 0 || !strings.Contains(out, "backup: "+claudeJSON+".capbroker-backup-") || !strings.Contains(out, "3 server(s) moved") {
		t.Fatalf("add: exit %d\n%s\n%s", code, out, stderr)
	}
	if !strings.Contains(out, "irreversible tools") || !strings.Contains(out, "gateway --client claude-code") {
		t.Errorf("add does not say how irreversible tools are handled for claude-code:\n%s", out)
	}
	after, _ := os.ReadFile(claudeJSON)
	if !strings.Contains(string(after), `"--client"`) || !strings.Contains(string(after), `"claude-code"`) {
		t.Errorf("add did not tell the gateway which client it serves:\n%s", after)
	}
	out, _, code = runEnv(t, env, "client", "add", "claude-code", "--command", bin)
	if code != 0 || !strings.Contains(out, "already routes through capbroker; nothing changed") {
		t.Errorf("second add: exit %d: %s", code, out)
	}
	if again, _ := os.ReadFile(claudeJSON); string(again) != string(after) {
		t.Error("a second add changed ~/.claude.json")
	}
	if st := list()["claude-code"]; !st.Routes || strings.Join(st.Behind, ",") != "github,memory,sentry" {
		t.Errorf("after add: %+v", st)
	}
	if _, stderr, _ := runEnv(t, env, "client", "list"); strings.Contains(stderr, "cannot start") {
		t.Errorf("list warns with the capbroker in place: %s", stderr)
	}
	// The capbroker the entry runs is gone (a build in a temporary
	// folder, after a reboot): list says the client cannot start it.
	moved := bin + ".moved"
	if err := os.Rename(bin, moved); err != nil {
		t.Fatal(err)
	}
	out, stderr, _ = runEnv(t, env, "client", "list")
	if !strings.Contains(stderr, "warning: claude-code cannot start capbroker: its entry runs "+bin+", which does not exist; capbroker client add claude-code writes this capbroker's path") {
		t.Errorf("list with the entry's capbroker gone: stderr %q", stderr)
	}
	if out, _, _ := runEnv(t, env, "client", "list", "--json"); !strings.Contains(out, `"gateway_problem": "its entry runs `+bin+`, which does not exist"`) {
		t.Errorf("list --json with the entry's capbroker gone:\n%s", out)
	}
	if err := os.Rename(moved, bin); err != nil {
		t.Fatal(err)
	}

	out, stderr, code = runEnv(t, env, "client", "remove", "claude-code")
	if code != 0 || !strings.Contains(out, "3 server(s) restored") {
		t.Fatalf("remove: exit %d\n%s\n%s", code, out, stderr)
	}
	if st := list()["claude-code"]; st.Routes || len(st.Servers) != 3 {
		t.Errorf("after remove: %+v", st)
	}

	_, stderr, code = runEnv(t, env, "client", "add", "zed")
	if code != 2 || !strings.Contains(stderr, `unknown client "zed"`) {
		t.Errorf("add zed: exit %d, %s", code, stderr)
	}
	_, stderr, code = runEnv(t, env, "client", "add", "cursor")
	if code != 1 || !strings.Contains(stderr, "does not seem installed") || !strings.Contains(stderr, "--force") {
		t.Errorf("add cursor (not installed): exit %d, %s", code, stderr)
	}
}

// TestClientAddCommand: the gateway entry's command is an absolute path
// the client can start; a command that would not start is refused with
// nothing written, one under the temporary folder is a warning. Run with
// no --command, client add writes the capbroker that runs it when that
// one lasts, even built into the temporary folder, and refuses a "go run"
// build, which Go removes on exit, unless a capbroker is on $PATH.
func TestClientAddCommand(t *testing.T) {
	bin := fakeCapbroker(t)
	pathDir := filepath.Dir(bin)
	notExec := filepath.Join(t.TempDir(), "capbroker")
	writeFile(t, notExec, "#!/bin/sh\n")
	os.Chmod(notExec, 0o644)
	built := fakeCapbroker(t) // under the temporary folder, as `go build -o $TMPDIR/...` makes
	goRun := filepath.Join(t.TempDir(), "go-build2854", "b001", "exe", "capbroker")
	os.MkdirAll(filepath.Dir(goRun), 0o755)
	writeFile(t, goRun, "#!/bin/sh\n")
	os.Chmod(goRun, 0o755)
	emptyPath := t.TempDir()
	for _, tc := range []struct {
		name    string
		args    []string
		exe     string // this executable ("": the test binary, a temporary build as "go run" makes)
		path    string // $PATH
		code    int
		want    string // in stderr
		command string // written, when it succeeds
	}{
		{"absolute", []string{"--command", bin}, "", emptyPath, 0, "under the temporary folder", bin},
		{"name on PATH", []string{"--command", "capbroker"}, "", pathDir, 0, "", bin},
		{"name not on PATH", []string{"--command", "capbroker"}, "", emptyPath, 1, "not found on $PATH", ""},
		{"missing", []string{"--command", "/nonexistent/capbroker"}, "", emptyPath, 1, "/nonexistent/capbroker: no such file or directory", ""},
		{"not executable", []string{"--command", notExec}, "", emptyPath, 1, "is not executable", ""},
		{"folder", []string{"--command", pathDir}, "", emptyPath, 1, "is a folder", ""},
		{"temporary build, capbroker on PATH", nil, "", pathDir, 0, "temporary build", bin},
		{"temporary build, none on PATH", nil, "", emptyPath, 1, "temporary build", ""},
		{"built under the temporary folder", nil, built, emptyPath, 0, "under the temporary folder", built},
		{"go run, none on PATH", nil, goRun, emptyPath, 1, "temporary build", ""},
		{"go run, capbroker on PATH", nil, goRun, pathDir, 0, "temporary build", bin},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			claudeJSON := filepath.Join(home, ".claude.json")
			orig := `{"mcpServers": {"web": {"type": "http", "url": "https://example.com/mcp"}}}`
			writeFile(t, claudeJSON, orig)
			env := map[string]string{"HOME": home, "PATH": tc.path}
			var outb, errb bytes.Buffer
			m := &Main{Stdin: strings.NewReader(""), Stdout: &outb, Stderr: &errb, Getenv: func(k string) string { return env[k] }}
			if tc.exe != "" {
				m.executable = func() (string, error) { return tc.exe, nil }
			}
			code := m.ExitCode(m.Run(context.Background(), append([]string{"client", "add", "claude-code"}, tc.args...)))
			out, stderr := outb.String(), errb.String()
			if code != tc.code || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d, want %d and %q in stderr\n%s\n%s", code, tc.code, tc.want, out, stderr)
			}
			now, _ := os.ReadFile(claudeJSON)
			if tc.code != 0 {
				if string(now) != orig || strings.Contains(stderr, "nothing written") == false {
					t.Errorf("refused, but ~/.claude.json changed or the error does not say nothing was written:\n%s\n%s", now, stderr)
				}
				return
			}
			var doc struct {
				MCPServers map[string]struct{ Command string } `json:"mcpServers"`
			}
			if err := json.Unmarshal(now, &doc); err != nil {
				t.Fatal(err)
			}
			if got := doc.MCPServers["capbroker"].Command; got != tc.command {
				t.Errorf("command written %q, want %q", got, tc.command)
			}
		})
	}
}

// TestClientAddNothingToFront: a ~/.claude.json whose servers are all a
// project's (Claude Code's local scope) has nothing for client add to
// move: it wires the gateway all the same, and warns that it fronts no
// server yet, naming the project servers that stay and how to add one.
// With user servers, or servers already behind the gateway, no warning.
func TestClientAddNothingToFront(t *testing.T) {
	bin := fakeCapbroker(t)
	for _, tc := range []struct {
		name, claudeJSON, servers, want string
	}{
		{"project servers only", `{"projects": {"/src/app": {"mcpServers": {"memory": {"command": "memory-mcp"}, "db": {"command": "db-mcp"}}}}}`, "",
			"has no user servers to move, so its gateway fronts none yet; the servers of projects in "},
		{"no servers at all", `{"numStartups": 1}`, "", "has no user servers to move, so its gateway fronts none yet; add one behind the gateway with: capbroker server add NAME -- COMMAND"},
		{"user servers", `{"mcpServers": {"memory": {"command": "memory-mcp"}}}`, "", ""},
		{"already behind the gateway", `{"numStartups": 1}`, `{"mcpServers": {"memory": {"command": "memory-mcp"}}}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			writeFile(t, filepath.Join(home, ".claude.json"), tc.claudeJSON)
			if tc.servers != "" {
				writeFile(t, filepath.Join(home, ".config", "capbroker", "clients", "claude-code.json"), tc.servers)
			}
			out, stderr, code := runEnv(t, map[string]string{"HOME": home}, "client", "add", "claude-code", "--command", bin)
			if code != 0 {
				t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
			}
			if tc.want == "" {
				if strings.Contains(stderr, "fronts none") {
					t.Errorf("warned:\n%s", stderr)
				}
				return
			}
			if !strings.Contains(stderr, tc.want) {
				t.Errorf("stderr lacks %q:\n%s", tc.want, stderr)
			}
			if strings.Contains(tc.claudeJSON, "projects") && !strings.Contains(stderr, "/src/app (db, memory)") {
				t.Errorf("stderr does not name the project's servers:\n%s", stderr)
			}
		})
	}
}

// TestClientAddLostVariables: a server the client started with its whole
// environment loses, behind the gateway, the variables it was configured
// by (MEMORY_FILE_PATH exported for the memory server): client add names
// them and says how to keep them; a server whose entry names its
// variables gets no warning, nor does one that keeps them with
// "inheritEnv".
func TestClientAddLostVariables(t *testing.T) {
	t.Setenv("MEMORY_FILE_PATH", "/home/me/memory.jsonl")
	t.Setenv("GITHUB_PERSONAL_ACCESS_TOKEN", "ghp_x")
	t.Setenv("UNRELATED_SETTING", "1")
	home := t.TempDir()
	writeFile(t, filepath.Join(home, ".claude.json"), `{"mcpServers": {
		"memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]},
		"github": {"command": "github-mcp-server", "args": ["stdio"], "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "${GITHUB_PERSONAL_ACCESS_TOKEN}"}},
		"memory2": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"], "inheritEnv": ["MEMORY_FILE_PATH"]}
	}}`)
	_, stderr, code := runEnv(t, map[string]string{"HOME": home}, "client", "add", "claude-code", "--dry-run", "--command", fakeCapbroker(t))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	servers := filepath.Join(home, ".config", "capbroker", "clients", "claude-code.json")
	want := `warning: server memory ran with the client's whole environment`
	if !strings.Contains(stderr, want) || !strings.Contains(stderr, `"inheritEnv": ["MEMORY_FILE_PATH"] to its entry in `+servers) {
		t.Errorf("stderr lacks the warning for memory with how to keep MEMORY_FILE_PATH:\n%s", stderr)
	}
	for _, no := range []string{"server github ", "server memory2 ", "UNRELATED_SETTING"} {
		if strings.Contains(stderr, no) {
			t.Errorf("stderr mentions %q:\n%s", no, stderr)
		}
	}
}

// TestClientAddReadOnly: a read-only ~/.claude.json is refused, not
// replaced.
func TestClientAddReadOnly(t *testing.T) {
	home := t.TempDir()
	claudeJSON := filepath.Join(home, ".claude.json")
	writeFile(t, claudeJSON, `{"mcpServers": {"web": {"type": "http", "url": "https://example.com/mcp"}}}`)
	os.Chmod(claudeJSON, 0o444)
	_, stderr, code := runEnv(t, map[string]string{"HOME": home}, "client", "add", "claude-code", "--command", fakeCapbroker(t))
	if code != 1 || !strings.Contains(stderr, "is read-only") {
		t.Errorf("exit %d, want 1 and a read-only error: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(home, ".config", "capbroker", "clients", "claude-code.json")); err == nil {
		t.Error("the servers file was written")
	}
}
