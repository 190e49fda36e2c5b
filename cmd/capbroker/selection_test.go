package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const selectionTools = `{"name":"get_weather","description":"Get the weather forecast for a city.","parameters":null}
{"name":"send_email","description":"Send an email message.","parameters":null}
{"name":"translate_text","description":"Translate text into another language.","parameters":null}
{"name":"read_file","description":"Read the contents of a file.","parameters":null}
`

// TestConfigFloors: capbroker.yaml (named with --config) gives a family a floor, which select
// exposes (with --tools too); a family that does not exist is an error
// naming the file.
func TestConfigFloors(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	tools := filepath.Join(dir, "tools.jsonl")
	os.WriteFile(tools, []byte(selectionTools), 0o644)
	cfg := filepath.Join(dir, "capbroker.yaml")
	os.WriteFile(cfg, []byte("floors:\n  general: [translate_text, no_such_tool]\n"), 0o644)
	// Named with --config: the user's own (a project's own is not
	// trusted with floors: TestProjectConfigCannotWeakenTrust).
	out, errOut, code := run(t, "select", "--config", cfg, "--json", "--tools", tools, "--family", "general", "what is the weather in Paris")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var sel struct {
		Reason       string
		FloorMissing []string `json:"floor_missing"`
		Tools        []struct {
			Name  string
			Floor bool
		}
	}
	if err := json.Unmarshal([]byte(out), &sel); err != nil {
		t.Fatal(err)
	}
	floor := false
	for _, p := range sel.Tools {
		floor = floor || (p.Name == "translate_text" && p.Floor)
	}
	if !floor || len(sel.FloorMissing) != 1 || !strings.Contains(sel.Reason, "lacks no_such_tool") {
		t.Errorf("selection %s: want translate_text as the general floor and no_such_tool named missing", out)
	}
	os.WriteFile(filepath.Join(dir, "capbroker.yaml"), []byte("floors:\n  cooking: [translate_text]\n"), 0o644)
	_, errOut, code = run(t, "select", "--config", cfg, "--tools", tools, "what is the weather in Paris")
	if code == 0 || !strings.Contains(errOut, "capbroker.yaml") || !strings.Contains(errOut, `"cooking"`) {
		t.Errorf("unknown family: exit %d, %q; want an error naming the file and the family", code, errOut)
	}
}

// TestFindNeverSilentCLI: find answers a weak query with a low-confidence
// match instead of nothing.
func TestFindNeverSilentCLI(t *testing.T) {
	dir := t.TempDir()
	tools := filepath.Join(dir, "tools.jsonl")
	os.WriteFile(tools, []byte(selectionTools), 0o644)
	out, _, code := run(t, "find", "--json", "--tools", tools, "could the quarterly marketing budget spreadsheet reach paris somehow")
	var res struct {
		Matches []struct{ Name, Confidence string }
	}
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || len(res.Matches) == 0 || res.Matches[0].Confidence != "low" {
		t.Errorf("exit %d: %s; want a low-confidence match", code, out)
	}
}

// TestEvalModes: --mode select and --mode find report what the agent is
// given, in the same JSON report.
func TestEvalModes(t *testing.T) {
	dir := t.TempDir()
	tools := filepath.Join(dir, "tools.jsonl")
	queries := filepath.Join(dir, "queries.jsonl")
	os.WriteFile(tools, []byte(selectionTools), 0o644)
	os.WriteFile(queries, []byte(`{"id":"1","query":"what is the weather forecast in Paris, then translate it to German","gold":["get_weather","translate_text"]}
{"id":"2","query":"translate this text to German","gold":["translate_text"]}
{"id":"3","query":"xyzzy my plugh","gold":["send_email"]}
`), 0o644)
	for _, mode := range []string{"select", "find"} {
		out, errOut, code := run(t, "eval", "--mode", mode, "--tools", tools, "--queries", queries, "--json")
		if code != 0 {
			t.Fatalf("--mode %s: exit %d: %s", mode, code, errOut)
		}
		var rep struct {
			Mode     string
			Queries  int
			Exposure map[string]float64
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatal(err)
		}
		e := rep.Exposure
		if rep.Mode != mode || rep.Queries != 3 || e["all_covered_n"] != 2 || e["empty"] != 1 || e["empty_with_hit"] != 0 {
			t.Errorf("--mode %s: %s", mode, out)
		}
		if got := e["slot_recall"]; got < 0.74 || got > 0.76 { // 3 of 4 slots
			t.Errorf("--mode %s: slot recall %v, want 3/4", mode, got)
		}
		for _, k := range []string{"mean_exposed", "max_exposed", "mean_tokens", "full_tokens", "token_share"} {
			if _, ok := e[k]; !ok {
				t.Errorf("--mode %s: exposure lacks %q", mode, k)
			}
		}
	}
	if _, _, code := run(t, "eval", "--mode", "guess", "--tools", tools, "--queries", queries); code != 2 {
		t.Errorf("--mode guess: exit %d, want 2", code)
	}
	// Multi-slot queries only: one.
	out, _, _ := run(t, "eval", "--mode", "select", "--min-slots", "2", "--tools", tools, "--queries", queries, "--json")
	if !strings.Contains(out, `"queries": 1`) && !strings.Contains(out, `"queries":1`) {
		t.Errorf("--min-slots 2: %s", out)
	}
}
