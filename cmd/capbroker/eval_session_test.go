package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

// runAsCapbroker, set in a child's environment, makes the test binary
// run as capbroker: the session eval starts its gateway and upstreams
// from its own binary.
const runAsCapbroker = "CAPBROKER_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runAsCapbroker) == "1" {
		main()
		return
	}
	evalChildEnv = map[string]string{runAsCapbroker: "1"}
	os.Exit(m.Run())
}

// TestEvalSession plays the scripted agent through the real gateway (this
// binary, over HTTP and stdio) in front of three real MCP upstreams
// serving the fixture's tool files, and compares the figures with the
// golden ones (go test -run TestEvalSession -update rewrites them when
// the gateway's answers change on purpose).
func TestEvalSession(t *testing.T) {
	dir := filepath.Join("testdata", "session-eval")
	var out, errb bytes.Buffer
	m := &Main{Stdout: &out, Stderr: &errb, Getenv: os.Getenv}
	args := []string{"eval", "--mode", "session", "--ranker", "lexical", "--json", "--stdio-queries", "0",
		"--tools", filepath.Join(dir, "files.jsonl"), "--tools", filepath.Join(dir, "notes.jsonl"), "--tools", filepath.Join(dir, "web.jsonl"),
		"--queries", filepath.Join(dir, "queries.jsonl"), "--db", filepath.Join(t.TempDir(), "cb.db")}
	if err := m.Run(context.Background(), args); err != nil {
		t.Fatalf("eval --mode session: %v\n%s", err, errb.String())
	}
	var reps []map[string]any
	if err := json.Unmarshal(out.Bytes(), &reps); err != nil {
		t.Fatalf("reading the report: %v\n%s", err, out.String())
	}
	if len(reps) != 2 || reps[0]["transport"] != "http" || reps[1]["transport"] != "stdio" {
		t.Fatalf("want an http and a stdio report, got %s", out.String())
	}
	// The figures are golden; the failed calls' texts (diagnostics,
	// worded by the gateway) are not. A stdio session starts with its
	// gateway, while the upstreams start: its first list may carry the
	// floor of an upstream that came late, so its tokens are not golden.
	for _, r := range reps {
		delete(r, "failures")
	}
	for _, k := range []string{"list_tokens_mean", "carried_first_turn", "carried_last_turn", "saving"} {
		delete(reps[1], k)
	}
	// Both transports reach the same gateway: the same figures.
	http := withoutTransport(reps[0])
	for _, k := range []string{"list_tokens_mean", "carried_first_turn", "carried_last_turn", "saving"} {
		delete(http, k)
	}
	a, _ := json.Marshal(http)
	b, _ := json.Marshal(withoutTransport(reps[1]))
	if !bytes.Equal(a, b) {
		t.Errorf("http and stdio differ:\n%s\n%s", a, b)
	}
	got, _ := json.MarshalIndent(reps, "", "  ")
	golden := filepath.Join(dir, "report.golden.json")
	if *update {
		os.WriteFile(golden, append(got, '\n'), 0o644)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(bytes.TrimSpace(got), bytes.TrimSpace(want)) {
		t.Errorf("report differs from %s (-update rewrites it):\n%s", golden, got)
	}
	// What the fixture is built to show, whatever the gateway's figures:
	// five queries of seven gold slots, over eleven tools, each find
	// answered, and a full list larger than what one turn carries.
	r := reps[0]
	if r["queries"] != 5.0 || r["slots"] != 7.0 || r["tools"] != 11.0 {
		t.Errorf("queries %v, slots %v, tools %v: want 5, 7, 11", r["queries"], r["slots"], r["tools"])
	}
	if r["finds"].(float64) < 5 || r["full_tokens"].(float64) <= r["list_tokens_mean"].(float64) {
		t.Errorf("finds %v, full list %v tokens, first list %v", r["finds"], r["full_tokens"], r["list_tokens_mean"])
	}
}

func withoutTransport(r map[string]any) map[string]any {
	c := map[string]any{}
	for k, v := range r {
		if k != "transport" {
			c[k] = v
		}
	}
	return c
}
