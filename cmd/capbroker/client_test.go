package main

import (
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

	out, stderr, code := runEnv(t, env, "client", "add", "claude-code", "--dry-run", "--command", "/opt/capbroker")
	if code != 0 || !strings.Contains(out, "+++ "+claudeJSON) || !strings.Contains(out, `-    "memory": {`) || !strings.Contains(stderr, "nothing written") {
		t.Fatalf("add --dry-run: exit %d\n%s\n%s", code, out, stderr)
	}
	if now, _ := os.ReadFile(claudeJSON); string(now) != string(orig) {
		t.Fatal("--dry-run changed ~/.claude.json")
	}

	out, stderr, code = runEnv(t, env, "client", "add", "claude-code", "--command", "/opt/capbroker")
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
	out, _, code = runEnv(t, env, "client", "add", "claude-code", "--command", "/opt/capbroker")
	if code != 0 || !strings.Contains(out, "already routes through capbroker; nothing changed") {
		t.Errorf("second add: exit %d: %s", code, out)
	}
	if again, _ := os.ReadFile(claudeJSON); string(again) != string(after) {
		t.Error("a second add changed ~/.claude.json")
	}
	if st := list()["claude-code"]; !st.Routes || strings.Join(st.Behind, ",") != "github,memory,sentry" {
		t.Errorf("after add: %+v", st)
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
