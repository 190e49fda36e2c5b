package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// doctor --accept writes overrides that select then applies and names in
// its reasons; a tool changed since is warned about and left alone.
func TestDoctorAccept(t *testing.T) {
	tools := filepath.Join("..", "..", "doctor", "testdata", "tools.json")
	orig, err := os.ReadFile(filepath.Join("..", "..", "doctor", "testdata", "capbroker.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "capbroker.yaml")
	if err := os.WriteFile(cfg, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := run(t, "doctor", "--tools", tools, "--config", cfg, "--no-learn")
	if code != 0 || !regexp.MustCompile(`sync_ledger +empty`).MatchString(out) || !strings.Contains(out, "doctor --accept writes them into "+cfg) {
		t.Fatalf("doctor: exit %d\n%s\n%s", code, out, errOut)
	}
	if data, _ := os.ReadFile(cfg); string(data) != string(orig) {
		t.Fatalf("doctor without --accept changed the config:\n%s", data)
	}
	out, errOut, code = run(t, "doctor", "--tools", tools, "--config", cfg, "--no-learn", "--accept", "--json")
	if code != 0 {
		t.Fatalf("doctor --accept: exit %d\n%s", code, errOut)
	}
	var rep struct {
		Overrides []struct{ Tool, Digest string }
		Accepted  string
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.Accepted != cfg || len(rep.Overrides) == 0 {
		t.Fatalf("doctor --accept --json: %v %+v", err, rep)
	}
	out, errOut, code = run(t, "select", "--tools", tools, "--config", cfg, "--no-learn", "--json", "sync the ledger")
	if code != 0 || !strings.Contains(out, "description overridden locally") {
		t.Errorf("select after --accept: exit %d, no override in the reasons\n%s\n%s", code, out, errOut)
	}

	// The tool changes upstream: its override no longer applies.
	data, _ := os.ReadFile(tools)
	var v map[string][]map[string]any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	for _, tool := range v["tools"] {
		if tool["name"] == "sync_ledger" {
			tool["description"] = "Sync the ledger."
		}
	}
	b, _ := json.Marshal(v)
	changed := filepath.Join(t.TempDir(), "tools.json")
	if err := os.WriteFile(changed, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = run(t, "select", "--tools", changed, "--config", cfg, "--no-learn", "--json", "sync the ledger")
	if code != 0 || !strings.Contains(errOut, "override for sync_ledger: pinned to digest") {
		t.Errorf("select with sync_ledger changed: exit %d, stderr %s", code, errOut)
	}
	for _, o := range rep.Overrides {
		if o.Tool == "sync_ledger" && strings.Contains(out, "overridden locally (digest "+o.Digest[:8]) {
			t.Errorf("the stale override applied:\n%s", out)
		}
	}
}
