package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/capbroker/capbroker/store"
	"github.com/capbroker/capbroker/trace"
)

// Learning from use in select: a past session that asked for "ship the
// build" and called run_pipeline teaches it those words, and the pick
// says so; --no-learn and `learn: false` in capbroker.yaml turn it off; a
// data directory without a database learns nothing and creates none.
func TestSelectLearns(t *testing.T) {
	dir := t.TempDir()
	tools := filepath.Join(dir, "tools.json")
	if err := os.WriteFile(tools, []byte(`[
		{"name": "run_pipeline", "description": "Start a CI pipeline for a branch."},
		{"name": "send_mail", "description": "Send an e-mail message."}
	]`), 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "capbroker.db")
	env := map[string]string{"CAPBROKER_DB": db}
	task := "ship the build"
	out, _, code := runEnv(t, env, "select", "--tools", tools, task)
	if code != 0 || strings.Contains(out, "run_pipeline") {
		t.Fatalf("before any session: exit %d, picks:\n%s", code, out)
	}
	if _, err := os.Stat(db); err == nil {
		t.Fatalf("select created the database %s", db)
	}
	ctx := context.Background()
	st, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Now()
	for _, id := range []string{"a", "b", "c"} {
		err := st.AppendTraces(ctx,
			trace.Record{SessionID: id, Kind: trace.KindSelect, At: at, Task: "Ship the build"},
			trace.Record{SessionID: id, Kind: trace.KindCall, At: at, Tool: "run_pipeline", Detail: []byte(`{"gateway":true,"outcome":"ok"}`)})
		if err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	out, _, code = runEnv(t, env, "select", "--json", "--tools", tools, task)
	if code != 0 || !strings.Contains(out, "run_pipeline") || !strings.Contains(out, `asked for as \"Ship the build\" in 3 past sessions`) {
		t.Errorf("after three sessions: exit %d, picks:\n%s", code, out)
	}
	out, _, _ = runEnv(t, env, "select", "--no-learn", "--tools", tools, task)
	if strings.Contains(out, "run_pipeline") {
		t.Errorf("--no-learn still learnt:\n%s", out)
	}
	cfg := filepath.Join(dir, "capbroker.yaml")
	if err := os.WriteFile(cfg, []byte("learn: false\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, _ = runEnv(t, env, "select", "--config", cfg, "--tools", tools, task)
	if strings.Contains(out, "run_pipeline") {
		t.Errorf("learn: false still learnt:\n%s", out)
	}
}

// TestLearningHonoursDB: learning reads the database --db names, not
// the default one. Before, a session started with --db learnt from the
// default database (or nothing).
func TestLearningHonoursDB(t *testing.T) {
	dir := t.TempDir()
	tools := filepath.Join(dir, "tools.json")
	if err := os.WriteFile(tools, []byte(`[
		{"name": "run_pipeline", "description": "Start a CI pipeline for a branch."},
		{"name": "send_mail", "description": "Send an e-mail message."}
	]`), 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "elsewhere.db")
	ctx := context.Background()
	st, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Now()
	for _, id := range []string{"a", "b", "c"} {
		if err := st.AppendTraces(ctx,
			trace.Record{SessionID: id, Kind: trace.KindSelect, At: at, Task: "Ship the build"},
			trace.Record{SessionID: id, Kind: trace.KindCall, At: at, Tool: "run_pipeline", Detail: []byte(`{"gateway":true,"outcome":"ok"}`)}); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	env := map[string]string{"CAPBROKER_DB": filepath.Join(dir, "default.db")}
	out, stderr, code := runEnv(t, env, "session", "start", "--db", filepath.Join(dir, "empty.db"), "--json", "--tools", tools, "ship the build")
	if code != 0 || strings.Contains(out, "best: run_pipeline") {
		t.Fatalf("session start on a database without sessions: exit %d\n%s%s", code, out, stderr)
	}
	out, stderr, code = runEnv(t, env, "session", "start", "--db", db, "--json", "--tools", tools, "ship the build")
	if code != 0 || !strings.Contains(out, "best: run_pipeline") {
		t.Errorf("session start --db: exit %d, did not learn from that database:\n%s%s", code, out, stderr)
	}
}
