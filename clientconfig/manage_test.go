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
