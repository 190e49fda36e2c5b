package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCorruptDatabase: a session database that is not a database does not
// stop serve: select answers, the session and trace endpoints answer 503
// naming the file and `capbroker prune --reset`, the session commands say
// the same, and prune --reset moves the file aside and starts a new one.
// Before, serve refused to start, with no hint.
func TestCorruptDatabase(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "capbroker.db")
	junk := []byte(strings.Repeat("not a database, ", 1000))
	if err := os.WriteFile(db, junk, 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"CAPBROKER_DB": db}
	base := serve(t, env, "--tools", testTools(t))
	if code, body := call(t, "POST", base+"/v1/select", `{"task":"read a file"}`); code != http.StatusOK {
		t.Errorf("select with a corrupt database: %d %s", code, body)
	}
	for _, ep := range []struct{ method, path, body string }{
		{"POST", "/v1/sessions", `{"task":"read a file"}`},
		{"GET", "/v1/sessions", ""},
		{"GET", "/v1/traces", ""},
		{"GET", "/v1/activity", ""},
	} {
		code, body := call(t, ep.method, base+ep.path, ep.body)
		if code != http.StatusServiceUnavailable || !strings.Contains(string(body), db) || !strings.Contains(string(body), "capbroker prune --reset") {
			t.Errorf("%s %s with a corrupt database: %d %s; want 503 naming the file and the fix", ep.method, ep.path, code, body)
		}
	}
	_, errOut, code := runEnv(t, env, "session", "list")
	if code == 0 || !strings.Contains(errOut, db) || !strings.Contains(errOut, "capbroker prune --reset") {
		t.Errorf("session list with a corrupt database: exit %d, %q", code, errOut)
	}

	out, errOut, code := runEnv(t, env, "prune", "--reset")
	if code != 0 || !strings.Contains(out, "moved "+db+" aside") {
		t.Fatalf("prune --reset: exit %d, %q %q", code, out, errOut)
	}
	moved, _ := filepath.Glob(db + ".corrupt-*")
	if len(moved) != 1 {
		t.Fatalf("files moved aside: %v", moved)
	}
	if b, _ := os.ReadFile(moved[0]); string(b) != string(junk) {
		t.Errorf("the file moved aside is not the old one")
	}
	if out, errOut, code := runEnv(t, env, "session", "list"); code != 0 {
		t.Errorf("session list after the reset: exit %d, %q %q", code, out, errOut)
	}
}

// TestPrune deletes sessions by age: none at 30 days, all of them (and
// their traces) when they are older than the bound.
func TestPrune(t *testing.T) {
	env := map[string]string{"CAPBROKER_DB": filepath.Join(t.TempDir(), "s.db")}
	for range 3 {
		if _, errOut, code := runEnv(t, env, "session", "start", "--tools", testTools(t), codingTaskCLI); code != 0 {
			t.Fatalf("session start: %s", errOut)
		}
	}
	out, errOut, code := runEnv(t, env, "prune")
	if code != 0 || !strings.Contains(out, "pruned 0 sessions and 0 trace records") {
		t.Errorf("prune at 30 days: exit %d, %q %q", code, out, errOut)
	}
	out, errOut, code = runEnv(t, env, "prune", "--older-than", "1ns")
	if code != 0 || !strings.Contains(out, "pruned 3 sessions and 3 trace records") {
		t.Errorf("prune of everything: exit %d, %q %q", code, out, errOut)
	}
	if out, _, _ := runEnv(t, env, "session", "list"); strings.Count(strings.TrimSpace(out), "\n") != 0 {
		t.Errorf("sessions left: %q", out)
	}
	if _, errOut, code := runEnv(t, env, "prune", "--older-than", "-1h"); code == 0 || !strings.Contains(errOut, "positive duration") {
		t.Errorf("prune --older-than -1h: exit %d, %q", code, errOut)
	}
}

// TestServePrunes: serve deletes what is older than --retention on its
// own, at start.
func TestServePrunes(t *testing.T) {
	env := map[string]string{"CAPBROKER_DB": filepath.Join(t.TempDir(), "s.db")}
	if _, errOut, code := runEnv(t, env, "session", "start", "--tools", testTools(t), codingTaskCLI); code != 0 {
		t.Fatalf("session start: %s", errOut)
	}
	base := serve(t, env, "--tools", testTools(t), "--retention", "1ns")
	var body []byte
	for range 200 { // the prune runs beside serving; give it its turn
		_, body = call(t, "GET", base+"/v1/sessions", "")
		if strings.Contains(string(body), `"count":0`) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Errorf("sessions after serve --retention 1ns: %s", body)
}

// TestGatewayPrunes: the gateway, like serve, deletes sessions older than
// --retention from the session database it writes to (it kept them forever).
func TestGatewayPrunes(t *testing.T) {
	dict := newDictServer(t, "dict")
	dir := t.TempDir()
	cfg := filepath.Join(dir, "servers.json")
	writeFile(t, cfg, fmt.Sprintf(`{"mcpServers": {"dict": {"url": %q}}}`, dict.url))
	db := filepath.Join(dir, "sessions.db")
	env := map[string]string{"HOME": dir, "CAPBROKER_DB": db}
	out, errOut, code := runEnv(t, env, "session", "start", "--json", "--tools", testTools(t), codingTaskCLI)
	if code != 0 {
		t.Fatalf("session start: %s", errOut)
	}
	var started struct{ ID string }
	if err := json.Unmarshal([]byte(out), &started); err != nil || started.ID == "" {
		t.Fatalf("session start --json: %v: %s", err, out)
	}
	listed := func() string {
		out, errOut, code := runEnv(t, env, "session", "list", "--json")
		if code != 0 {
			t.Fatalf("session list: %s", errOut)
		}
		return out
	}
	if !strings.Contains(listed(), started.ID) {
		t.Fatalf("session %s not listed before the gateway ran", started.ID)
	}
	g := runGateway(t, env, nil, "--config", cfg, "--index", filepath.Join(dir, "index"), "--db", db, "--retention", "1ns")
	waitFor(t, "the gateway prunes the old session", func() bool { return !strings.Contains(listed(), started.ID) })
	g.stop()
}
