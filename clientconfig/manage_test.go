package clientconfig

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestManageServers edits a servers file in place: the order and the
// bytes of untouched entries stay, a new file is private, and a file
// with a name twice or a read-only one is refused.
func TestManageServers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "capbroker", "servers.json")
	if err := SetServer(path, "b", json.RawMessage(`{"command": "b-mcp"}`)); err != nil {
		t.Fatal(err)
	}
	if err := SetServer(path, "a", json.RawMessage(`{"url": "https://a/mcp"}`)); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", st.Mode().Perm())
	}
	if err := SetServerField(path, "b", "disabled", true); err != nil {
		t.Fatal(err)
	}
	order, defs, err := Servers(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(order, ",") != "b,a" || !strings.Contains(string(defs["b"]), `"disabled": true`) {
		t.Errorf("order %v, b = %s", order, defs["b"])
	}
	if err := SetServerField(path, "b", "disabled", nil); err != nil {
		t.Fatal(err)
	}
	if err := RemoveServer(path, "b"); err != nil {
		t.Fatal(err)
	}
	if order, _, _ := Servers(path); strings.Join(order, ",") != "a" {
		t.Errorf("after remove: %v", order)
	}
	if err := RemoveServer(path, "b"); err == nil {
		t.Error("removing a server twice: no error")
	}
	if err := SetServer(path, "c", json.RawMessage(`{not json`)); err == nil {
		t.Error("a definition that is not JSON: no error")
	}
	os.Chmod(path, 0o400)
	if err := SetServer(path, "d", json.RawMessage(`{"command": "d"}`)); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Errorf("read-only file: %v", err)
	}
	os.Chmod(path, 0o600)
	os.WriteFile(path, []byte(`{"mcpServers": {"x": {"command": "1"}, "x": {"command": "2"}}}`), 0o600)
	if err := SetServerField(path, "x", "disabled", true); err == nil || !strings.Contains(err.Error(), "more than once") {
		t.Errorf("duplicate names: %v", err)
	}
}

// TestManageProfiles edits a profiles file as the servers files are
// edited: created 0600, written through a symbolic link (it stays a
// link), the order and other keys kept, a read-only file or a name
// defined twice refused with nothing written; the file sits beside the
// clients' servers files.
func TestManageProfiles(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "dotfiles", "profiles.json")
	os.MkdirAll(filepath.Dir(real), 0o700)
	os.WriteFile(real, []byte("{\n  \"note\": \"mine\",\n  \"profiles\": {\"b\": {\"servers\": [\"x\"]}}\n}\n"), 0o600)
	path := filepath.Join(dir, "capbroker", "profiles.json")
	os.MkdirAll(filepath.Dir(path), 0o700)
	if err := os.Symlink(real, path); err != nil {
		t.Fatal(err)
	}
	if err := SetProfile(path, "a", json.RawMessage(`{"deny": ["*delete*"]}`)); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Lstat(path); st.Mode()&os.ModeSymlink == 0 {
		t.Error("the link was replaced by a file")
	}
	order, defs, err := Profiles(path)
	if err != nil || strings.Join(order, ",") != "b,a" || !strings.Contains(string(defs["a"]), "*delete*") {
		t.Fatalf("profiles: %v %v %v", order, defs, err)
	}
	data, _ := os.ReadFile(real)
	if !strings.Contains(string(data), `"note": "mine"`) {
		t.Errorf("another key was lost:\n%s", data)
	}
	if err := RemoveProfile(path, "nope"); err == nil || !strings.Contains(err.Error(), "defines no profile nope") {
		t.Errorf("removing an unknown profile: %v", err)
	}
	if err := RemoveProfile(path, "b"); err != nil {
		t.Fatal(err)
	}
	if order, _, _ := Profiles(path); strings.Join(order, ",") != "a" {
		t.Errorf("after remove: %v", order)
	}

	os.Chmod(real, 0o400)
	before, _ := os.ReadFile(real)
	if err := SetProfile(path, "c", json.RawMessage(`{"servers": ["y"]}`)); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Errorf("a read-only profiles file: %v", err)
	}
	os.Chmod(real, 0o600)
	os.WriteFile(real, []byte(`{"profiles": {"a": {}, "a": {"servers": ["z"]}}}`), 0o600)
	before, _ = os.ReadFile(real)
	if err := SetProfile(path, "c", json.RawMessage(`{"servers": ["y"]}`)); err == nil || !strings.Contains(err.Error(), "defines profile a more than once") {
		t.Errorf("a profile defined twice: %v", err)
	}
	if after, _ := os.ReadFile(real); string(after) != string(before) {
		t.Errorf("a refused edit wrote:\n%s", after)
	}

	fresh := filepath.Join(t.TempDir(), "new", "profiles.json")
	if err := SetProfile(fresh, "r", json.RawMessage(`{"servers": ["github"]}`)); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(fresh); st.Mode().Perm() != 0o600 {
		t.Errorf("a new profiles file: %v, want 0600", st.Mode().Perm())
	}
	env := Env{Home: "/home/u", GOOS: "linux", Getenv: func(string) string { return "" }}
	if got := ProfilesFile(env); got != "/home/u/.config/capbroker/profiles.json" {
		t.Errorf("ProfilesFile: %s", got)
	}
	if got, want := filepath.Dir(ProfilesFile(env)), filepath.Dir(filepath.Dir(ServersFile(ClaudeCode, env))); got != want {
		t.Errorf("the profiles file is in %s, the servers files under %s", got, want)
	}
}
