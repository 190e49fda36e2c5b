package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// fixtureTraces are recorded sessions over the example catalog.
var fixtureTraces = filepath.Join("..", "..", "replay", "testdata", "sessions.jsonl")

func TestReplayCommand(t *testing.T) {
	catalog := filepath.Join("..", "..", "examples", "catalog")
	out, errOut, code := run(t, "replay", "--traces", fixtureTraces, "--tools", catalog, "--no-learn", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep struct {
		Sessions []struct {
			ID    string `json:"id"`
			Calls []struct{ Tool, Now string }
		}
		Totals struct {
			Sessions int            `json:"sessions"`
			Calls    map[string]int `json:"calls"`
		}
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	if rep.Totals.Sessions != 3 || rep.Totals.Calls["gone"] != 1 || rep.Totals.Calls["up front"] < 1 {
		t.Errorf("totals %+v: want 3 sessions, a call gone, one up front", rep.Totals)
	}
	out, errOut, code = run(t, "replay", "--traces", fixtureTraces, "--tools", catalog, "--no-learn", "--session", "s1")
	if code != 0 || !strings.Contains(out, "call container_logs") || strings.Contains(out, "session s2") {
		t.Errorf("--session s1: exit %d, %s\n%s", code, out, errOut)
	}
	_, errOut, code = run(t, "replay", "--traces", filepath.Join(t.TempDir(), "none.jsonl"), "--tools", catalog)
	if code == 0 || !strings.Contains(errOut, "reading traces") {
		t.Errorf("a missing trace file: exit %d, %s", code, errOut)
	}
}

func TestEvalTraces(t *testing.T) {
	catalog := filepath.Join("..", "..", "examples", "catalog")
	out, errOut, code := run(t, "eval", "--tools", catalog, "--traces", fixtureTraces, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep struct {
		Queries int `json:"queries"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.Queries != 2 {
		t.Errorf("eval --traces: %d queries (%v), want the 2 sessions with a task and a call", rep.Queries, err)
	}
	_, errOut, code = run(t, "eval", "--tools", catalog, "--traces", fixtureTraces, "--queries", "q.jsonl")
	if code == 0 || !strings.Contains(errOut, "either --queries or --traces") {
		t.Errorf("both --queries and --traces: exit %d, %s", code, errOut)
	}
}
