package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capbroker/capbroker/policy"
)

// run drives the CLI in-process with an empty environment and returns
// stdout, stderr and the exit code.
func run(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	return runIO(t, nil, "", args...)
}

// runEnv is run with environment variables.
func runEnv(t *testing.T, env map[string]string, args ...string) (string, string, int) {
	t.Helper()
	return runIO(t, env, "", args...)
}

// runIO is run with environment variables and standard input.
func runIO(t *testing.T, env map[string]string, stdin string, args ...string) (string, string, int) {
	t.Helper()
	// A home and an index of the test's own: never the user's ~/.claude.
	// A test that names HOME gets the index under it.
	home, index := t.TempDir(), t.TempDir()
	getenv := func(k string) string {
		if v, ok := env[k]; ok {
			return v
		}
		switch k {
		case "HOME":
			return home
		case "CAPBROKER_RANKER":
			// Lexical unless a test asks (or configures an endpoint): the
			// outputs the tests expect are lexical, and embedding the
			// example catalog for every command would cost each one a
			// second of CPU.
			if _, ok := env["CAPBROKER_EMBED_MODEL"]; !ok {
				return "lexical"
			}
		case "CAPBROKER_INDEX":
			if _, ok := env["HOME"]; !ok {
				return index
			}
		}
		return ""
	}
	var out, errb bytes.Buffer
	m := &Main{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb, Getenv: getenv}
	code := m.ExitCode(m.Run(context.Background(), args))
	return out.String(), errb.String(), code
}

func TestSelectJSON(t *testing.T) {
	out, _, code := run(t, "select", "--json", "review the diff of the last git commit and fix the bug")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	var sel struct {
		Task   string
		Family string
		Reason string
		Tools  []struct {
			Name, Confidence, Reason, Risk string
			Score                          float64
			Floor                          bool
		}
		Tokens struct{ Exposed, Full int }
	}
	if err := json.Unmarshal([]byte(out), &sel); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	if sel.Family != "coding" || len(sel.Tools) == 0 || sel.Tokens.Exposed <= 0 || sel.Tokens.Full <= sel.Tokens.Exposed {
		t.Errorf("selection = %+v", sel)
	}
	// The documented keys are all present.
	var raw map[string]any
	json.Unmarshal([]byte(out), &raw)
	for _, k := range []string{"task", "family", "reason", "tools", "tokens"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("select --json lacks %q", k)
		}
	}
	tool := raw["tools"].([]any)[0].(map[string]any)
	for _, k := range []string{"name", "score", "confidence", "reason", "floor", "risk"} {
		if _, ok := tool[k]; !ok {
			t.Errorf("select --json tool lacks %q", k)
		}
	}
}

func TestSelectFormats(t *testing.T) {
	for format, key := range map[string]string{"openai": `"type": "function"`, "anthropic": `"input_schema"`, "mcp": `"inputSchema"`, "json": `"kind"`} {
		out, _, code := run(t, "select", "--format", format, "search the web for news")
		if code != 0 || !strings.Contains(out, key) || !strings.Contains(out, "find_capability") {
			t.Errorf("--format %s: exit %d, output lacks %s or the hatch:\n%s", format, code, key, out)
		}
	}
}

func TestSelectText(t *testing.T) {
	out, _, code := run(t, "select", "post the release notes to the team slack channel")
	if code != 0 || !strings.Contains(out, "slack_post_message") || !strings.Contains(out, "find_capability") || !strings.Contains(out, "tokens:") {
		t.Errorf("exit %d:\n%s", code, out)
	}
}

func TestFindJSON(t *testing.T) {
	out, _, code := run(t, "find", "--json", "-k", "2", "roll back the deployment")
	var res struct {
		Matches []struct {
			Name        string
			InputSchema json.RawMessage `json:"input_schema"`
		}
	}
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || len(res.Matches) == 0 || len(res.Matches) > 2 || len(res.Matches[0].InputSchema) == 0 {
		t.Errorf("exit %d:\n%s", code, out)
	}
}

func TestCardsWithToolFiles(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(good, []byte(`[{"name":"a_tool","description":"Does a.","inputSchema":{"type":"object"}}]`), 0o644)
	os.WriteFile(bad, []byte(`[{"name":"b_tool",`), 0o644)
	out, errOut, code := run(t, "cards", "--tools", good, "--tools", bad)
	if code != 0 || !strings.Contains(out, "a_tool") || !strings.Contains(out, "1 cards") {
		t.Errorf("exit %d:\n%s", code, out)
	}
	if !strings.Contains(errOut, "bad.json") {
		t.Errorf("stderr does not name the bad file:\n%s", errOut)
	}
	// Nothing loadable is an error.
	_, errOut, code = run(t, "cards", "--tools", bad)
	if code != 1 || !strings.Contains(errOut, "no tools loaded") {
		t.Errorf("exit %d, stderr:\n%s", code, errOut)
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"select"},
		{"select", "a", "b"},
		{"select", "--max", "0", "x"},
		{"select", "--format", "gemini", "x"},
		{"select", "--family", "codng", "x"},
		{"select", ""},
		{"find", "  "},
		{"select", "--nope", "x"},
		{"find", "-k", "0", "x"},
		{"cards", "--kind", "widget"},
		{"session", "strat", "x"},
	} {
		_, errOut, code := run(t, args...)
		if code != 2 || errOut == "" {
			t.Errorf("%v: exit %d, stderr %q; want 2 and a message", args, code, errOut)
		}
	}
}

func TestEvalJSON(t *testing.T) {
	dir := t.TempDir()
	tools := filepath.Join(dir, "tools.jsonl")
	queries := filepath.Join(dir, "queries.jsonl")
	os.WriteFile(tools, []byte(`{"name":"get_weather","description":"Get the weather forecast for a city.","parameters":null,"source":"t"}
{"name":"send_email","description":"Send an email message.","parameters":null,"source":"t"}
{"name":"translate_text","description":"Translate text into another language.","parameters":null,"source":"t"}
`), 0o644)
	os.WriteFile(queries, []byte(`{"id":"1","query":"what is the weather forecast in Paris","gold":["get_weather"]}
{"id":"2","query":"translate this text to German","gold":["translate_text"]}
{"id":"3","query":"xyzzy my plugh","gold":["send_email"],"gold_groups":[["send_email","draft_email"]]}
`), 0o644)
	out, errOut, code := run(t, "eval", "--tools", tools, "--queries", queries, "--k", "1,5", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep map[string]any
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"queries", "tools", "top1", "mrr", "recall", "ndcg", "comp", "index_ms", "p50_us", "p99_us"} {
		if _, ok := rep[k]; !ok {
			t.Errorf("eval --json lacks %q: %s", k, out)
		}
	}
	// Two of three queries are answerable by words; "xyzzy my plugh" shares
	// none, not even through related words.
	if rep["queries"] != 3.0 || rep["top1"].(float64) < 0.66 || rep["top1"].(float64) > 0.67 {
		t.Errorf("queries %v top1 %v, want 3 and 2/3", rep["queries"], rep["top1"])
	}
	if _, _, code := run(t, "eval", "--tools", tools); code != 2 {
		t.Errorf("eval without --queries: exit %d, want 2", code)
	}
}

// TestSelectEmptyIsArray: a selection with no picks prints "tools": [], as
// the OpenAPI document promises, on the CLI and over HTTP (it printed null,
// and the explorer then failed on it).
func TestSelectEmptyIsArray(t *testing.T) {
	const task = "blorp the zingle"
	out, errOut, code := run(t, "select", "--json", task)
	if code != 0 {
		t.Fatalf("select: exit %d: %s", code, errOut)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	if got := string(raw["tools"]); got != "[]" {
		t.Errorf(`select --json %q: "tools": %s, want []`, task, got)
	}
	base := serve(t, map[string]string{"HOME": t.TempDir()})
	_, body := call(t, "POST", base+"/v1/select", `{"task": "`+task+`"}`)
	raw = nil
	if err := json.Unmarshal(body, &raw); err != nil {
		t.Fatalf("%v in %s", err, body)
	}
	if got := string(raw["tools"]); got != "[]" {
		t.Errorf(`POST /v1/select %q: "tools": %s, want []`, task, got)
	}
}

// TestTokensLineHonest: on a catalog smaller than the floor and the hatch,
// select says it exposes more than the whole catalog rather than "0% saved".
func TestTokensLineHonest(t *testing.T) {
	for _, tc := range []struct {
		tok   policy.Tokens
		tools int
		want  string
	}{
		{policy.Tokens{Exposed: 236, Full: 114, Format: "openai", Encoding: "o200k"}, 8,
			"tokens:  236 exposed: more than the whole catalog's 114 (8 tools and the hatch; nothing saved on a catalog this small; openai, o200k)"},
		{policy.Tokens{Exposed: 120, Full: 100, Format: "openai", Encoding: "o200k"}, 1,
			"tokens:  120 exposed: more than the whole catalog's 100 (1 tool and the hatch; nothing saved on a catalog this small; openai, o200k)"},
		{policy.Tokens{Exposed: 359, Full: 7786, Saved: 1 - 359.0/7786, Format: "openai", Encoding: "o200k"}, 4,
			"tokens:  359 exposed of 7786 for the full catalog (95% saved; openai, o200k)"},
	} {
		if got := tokensLine(tc.tok, tc.tools); got != tc.want {
			t.Errorf("tokensLine(%+v, %d)\n got %q\nwant %q", tc.tok, tc.tools, got, tc.want)
		}
	}
	if got := count(1, "problem") + ", " + count(3, "problem") + ", " + count(0, "tool"); got != "1 problem, 3 problems, 0 tools" {
		t.Errorf("count: %q", got)
	}
}
