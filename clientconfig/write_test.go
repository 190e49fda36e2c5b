package clientconfig

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// claudeCode sets up a home with Claude Code's testdata ~/.claude.json
// (mode 0600) and returns its File, the servers file and the original.
func claudeCode(t *testing.T) (File, string, []byte) {
	t.Helper()
	home := t.TempDir()
	env := Env{Home: home, WorkDir: filepath.Join(home, "src"), GOOS: "linux", Getenv: func(string) string { return "" }}
	f, err := UserFile(ClaudeCode, env)
	if err != nil {
		t.Fatal(err)
	}
	orig, err := os.ReadFile(filepath.Join("testdata", "claude-code.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f.Path, orig, 0o600); err != nil {
		t.Fatal(err)
	}
	return f, ServersFile(ClaudeCode, env), orig
}

var gw = Gateway{Command: "/usr/local/bin/capbroker", Args: []string{"gateway"}}
var now = time.Date(2026, 12, 1, 7, 0, 0, 0, time.UTC)

func addThenApply(t *testing.T, f File, servers string) []string {
	t.Helper()
	p, err := PlanAdd(f, servers, gw)
	if err != nil {
		t.Fatal(err)
	}
	b, err := p.Apply(now)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRemoveKeepsOrder: add then remove gives the servers back in the
// order the client had them (memory, github, sentry; not sorted), and
// the servers file keeps that order too.
func TestRemoveKeepsOrder(t *testing.T) {
	f, servers, _ := claudeCode(t)
	want := []string{"memory", "github", "sentry"}
	addThenApply(t, f, servers)
	sd, err := readDoc(servers, "mcpServers")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(sd.order, want) {
		t.Errorf("servers file order %v, want %v", sd.order, want)
	}
	rm, err := PlanRemove(f, servers)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rm.Apply(now); err != nil {
		t.Fatal(err)
	}
	d, err := readDoc(f.Path, f.Key)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(d.order, want) {
		t.Errorf("after remove: order %v, want %v", d.order, want)
	}
}

// TestServersFilePrivate: the servers file holds what ~/.claude.json
// held (tokens in env and headers): 0600 in a 0700 folder, even where
// an older capbroker made them 0644 and 0755; the backups are no more
// readable than their file.
func TestServersFilePrivate(t *testing.T) {
	f, servers, _ := claudeCode(t)
	if err := os.MkdirAll(filepath.Dir(servers), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(servers, []byte(`{"mcpServers": {"notes": {"command": "notes-mcp"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	backups := addThenApply(t, f, servers)
	for path, want := range map[string]os.FileMode{servers: 0o600, filepath.Dir(servers): 0o700} {
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != want {
			t.Errorf("%s is %v, want %v", path, st.Mode().Perm(), want)
		}
	}
	if len(backups) != 2 {
		t.Fatalf("backups %v, want the servers file's and the client's", backups)
	}
	for _, b := range backups {
		if st, _ := os.Stat(b); st.Mode().Perm()&0o077 != 0 {
			t.Errorf("backup %s is %v, readable by others", b, st.Mode().Perm())
		}
	}
}

// TestApplyWritesThroughSymlink: a ~/.claude.json that links to a
// dotfiles checkout stays a link; the file it points to changes.
func TestApplyWritesThroughSymlink(t *testing.T) {
	f, servers, orig := claudeCode(t)
	real := filepath.Join(t.TempDir(), "dotfiles", "claude.json")
	os.MkdirAll(filepath.Dir(real), 0o700)
	if err := os.WriteFile(real, orig, 0o600); err != nil {
		t.Fatal(err)
	}
	os.Remove(f.Path)
	if err := os.Symlink(real, f.Path); err != nil {
		t.Fatal(err)
	}
	addThenApply(t, f, servers)
	st, err := os.Lstat(f.Path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("%s is no longer a symbolic link (%v)", f.Path, st.Mode())
	}
	got, _ := os.ReadFile(real)
	if !strings.Contains(string(got), `"capbroker"`) || strings.Contains(string(got), `"sentry"`) {
		t.Errorf("the linked file was not routed through the gateway:\n%s", got)
	}

	// A link to nowhere is an error, and nothing is written.
	dangling := filepath.Join(t.TempDir(), ".claude.json")
	os.Symlink(filepath.Join(t.TempDir(), "gone.json"), dangling)
	p := &Plan{Changes: []Change{{Path: dangling, After: []byte("{}\n")}}}
	if _, err := p.Apply(now); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("a dangling link: %v, want an error naming the link", err)
	}
}

// TestApplyRefusesReadOnly: a read-only client file is not replaced, and
// nothing else is written either (the servers file is not created).
func TestApplyRefusesReadOnly(t *testing.T) {
	f, servers, orig := claudeCode(t)
	if err := os.Chmod(f.Path, 0o400); err != nil {
		t.Fatal(err)
	}
	p, err := PlanAdd(f, servers, gw)
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Apply(now)
	if err == nil || !strings.Contains(err.Error(), "read-only") || !strings.Contains(err.Error(), "nothing written") {
		t.Fatalf("Apply on a read-only file: %v, want a read-only error", err)
	}
	if _, err := os.Stat(servers); err == nil {
		t.Error("the servers file was written although the client's file is read-only")
	}
	if got, _ := os.ReadFile(f.Path); string(got) != string(orig) {
		t.Error("the read-only file changed")
	}
	matches, _ := filepath.Glob(f.Path + ".capbroker-backup-*")
	if len(matches) > 0 {
		t.Errorf("backups written: %v", matches)
	}
}

// TestDuplicateServers: a file that defines one server name twice (the
// client reads the last) is refused by add and by remove, naming the
// server, before anything is planned.
func TestDuplicateServers(t *testing.T) {
	f, servers, _ := claudeCode(t)
	dup := `{"mcpServers": {"memory": {"command": "a"}, "web": {"url": "https://x/mcp"}, "memory": {"command": "b"}}}`
	if err := os.WriteFile(f.Path, []byte(dup), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := PlanAdd(f, servers, gw); err == nil || !strings.Contains(err.Error(), "defines server memory more than once") {
		t.Errorf("add: %v, want a duplicate error", err)
	}
	if _, err := PlanRemove(f, servers); err == nil || !strings.Contains(err.Error(), "more than once") {
		t.Errorf("remove: %v, want a duplicate error", err)
	}
	// In capbroker's servers file too.
	f2, servers2, _ := claudeCode(t)
	os.MkdirAll(filepath.Dir(servers2), 0o700)
	os.WriteFile(servers2, []byte(dup), 0o600)
	if _, err := PlanAdd(f2, servers2, gw); err == nil || !strings.Contains(err.Error(), servers2) {
		t.Errorf("add with a duplicate in the servers file: %v", err)
	}
}

// TestRemoveNotesGatewayOnly: servers disabled or given tool patterns
// behind the gateway ("capbroker server disable", "server tools") go back
// to the client with those keys, which only the gateway applies; remove
// says so, per client, and adds nothing for a plain server.
func TestRemoveNotesGatewayOnly(t *testing.T) {
	f, servers, _ := claudeCode(t)
	addThenApply(t, f, servers)
	if err := SetServer(servers, "memory", json.RawMessage(`{"command": "memory-mcp", "disabled": true}`)); err != nil {
		t.Fatal(err)
	}
	if err := SetServer(servers, "github", json.RawMessage(`{"command": "github-mcp", "excludeTools": ["delete_*"]}`)); err != nil {
		t.Fatal(err)
	}
	rm, err := PlanRemove(f, servers)
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(rm.Notes, "\n")
	for _, want := range []string{
		`server memory was disabled behind the gateway; claude-code ignores "disabled" and starts it again: remove its entry from ` + f.Path,
		"server github's tool patterns (includeTools, excludeTools) applied behind the gateway only; claude-code exposes all its tools",
	} {
		if !strings.Contains(notes, want) {
			t.Errorf("remove notes lack %q:\n%s", want, notes)
		}
	}
	if strings.Contains(notes, "sentry") {
		t.Errorf("a plain server noted:\n%s", notes)
	}

	for _, tc := range []struct {
		client string
		raw    string
		want   int
	}{
		{ClaudeCode, `{"command": "x", "disabled": true}`, 1},
		{Cursor, `{"command": "x", "disabled": true}`, 0}, // Cursor skips it too
		{VSCode, `{"command": "x", "includeTools": ["read_*"]}`, 1},
		{ClaudeDesktop, `{"command": "x", "disabled": true, "excludeTools": ["rm"]}`, 2},
		{ClaudeCode, `{"command": "x", "disabled": false}`, 0},
	} {
		if got := gatewayOnly(File{Client: tc.client, Path: "cfg.json"}, "s", json.RawMessage(tc.raw)); len(got) != tc.want {
			t.Errorf("%s %s: notes %q, want %d", tc.client, tc.raw, got, tc.want)
		}
	}
}
