package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// runEnv drives the CLI with the environment env.
const replayDir = "../../plan/testdata/replay"

type assembled struct {
	Goal  string
	Tasks []struct {
		ID           string
		Capabilities []struct{ Name, Origin, Reason string }
	}
	Warnings []struct{ Task, Field, Message string }
}

func assembleJSON(t *testing.T, args ...string) assembled {
	t.Helper()
	out, errOut, code := runIO(t, nil, "", append([]string{"assemble", "--json"}, args...)...)
	if code != 0 {
		t.Fatalf("assemble exit %d: %s", code, errOut)
	}
	var a assembled
	if err := json.Unmarshal([]byte(out), &a); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	return a
}

func capsOf(a assembled) map[string][]string {
	got := map[string][]string{}
	for _, tk := range a.Tasks {
		for _, c := range tk.Capabilities {
			got[tk.ID] = append(got[tk.ID], c.Origin+":"+c.Name)
		}
	}
	return got
}

func TestPlanThenAssemble(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "plan.json")
	env := map[string]string{"CAPBROKER_LLM": "replay", "CAPBROKER_LLM_REPLAY": filepath.Join(replayDir, "four-tasks-unknown.json")}
	stdout, stderr, code := runIO(t, env, "", "plan", "Prepare the launch of our budgeting app", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if stdout != "" {
		t.Errorf("stdout with --out: %q", stdout)
	}
	wantWarn := `warning: task "t1": capabilities: dropped unknown capability "sentiment_analysis" (not in the catalog)`
	if !strings.Contains(stderr, wantWarn) || !strings.Contains(stderr, "wrote "+out+": 4 tasks, 1 warnings (model replay)") {
		t.Errorf("stderr = %q", stderr)
	}
	a := assembleJSON(t, out)
	want := map[string][]string{
		"t1": {"plan:summarization"},
		"t2": {"plan:brainstorming"},
		"t3": {"plan:structured_extraction"},
		"t4": {"plan:data_analysis", "plan:code_generation"},
	}
	if diff := cmp.Diff(want, capsOf(a)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// The written plan is canonical: assembling it again reads the same.
	data, _ := os.ReadFile(out)
	if !json.Valid(data) || !bytes.HasSuffix(data, []byte("}\n")) {
		t.Errorf("plan file:\n%s", data)
	}
}

func TestPlanNotConfigured(t *testing.T) {
	_, stderr, code := runIO(t, nil, "", "plan", "anything")
	if code != 1 || !strings.Contains(stderr, "no LLM provider configured: set CAPBROKER_LLM=openai") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	_, stderr, code = runIO(t, nil, "", "plan", "--config", "missing.yaml", "anything")
	if code == 0 || !strings.Contains(stderr, "missing.yaml") {
		t.Errorf("an explicit missing config: exit %d, stderr %q", code, stderr)
	}
}

func TestPlanPrompt(t *testing.T) {
	var pr struct {
		System, User string
		Schema       json.RawMessage
		Listed       int
	}
	out, stderr, code := runIO(t, nil, "", "plan", "--prompt", "Chart sales")
	if code != 0 {
		t.Fatal(stderr)
	}
	json.Unmarshal([]byte(out), &pr)
	if !strings.Contains(pr.User, "Capabilities available") || !strings.Contains(pr.User, "\nsummarization: ") || pr.Listed != 8 ||
		!bytes.Contains(pr.Schema, []byte(`"capabilities"`)) {
		t.Errorf("prompt: %s", out)
	}
	out, _, _ = runIO(t, nil, "", "plan", "--prompt", "--no-catalog", "Chart sales")
	json.Unmarshal([]byte(out), &pr)
	if strings.Contains(pr.User, "Capabilities") || bytes.Contains(pr.Schema, []byte(`capabilities`)) {
		t.Errorf("--no-catalog prompt: %s", out)
	}
}

func TestPlanBadReplyIsKept(t *testing.T) {
	dir := t.TempDir()
	reply := filepath.Join(dir, "reply.txt")
	os.WriteFile(reply, []byte("Sure! Here is a plan:\n1. research\n2. write"), 0o644)
	out := filepath.Join(dir, "plan.json")
	env := map[string]string{"CAPBROKER_LLM": "replay", "CAPBROKER_LLM_REPLAY": reply}
	_, stderr, code := runIO(t, env, "", "plan", "write a report", "--out", out)
	if code != 1 || !strings.Contains(stderr, "the model's reply is not a valid plan: line 1, column 1: invalid JSON") ||
		!strings.Contains(stderr, "(the reply is kept in "+out+".reply.txt)") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	kept, _ := os.ReadFile(out + ".reply.txt")
	if !strings.HasPrefix(string(kept), "Sure! Here is a plan:") {
		t.Errorf("kept %q", kept)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a plan file was written for a bad reply")
	}
}

// TestPlanOpenAICompatible runs the command against a local server that
// speaks the Chat Completions API.
func TestPlanOpenAICompatible(t *testing.T) {
	planJSON, err := os.ReadFile(filepath.Join(replayDir, "four-tasks.json"))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Model          string
		Messages       []struct{ Role, Content string }
		ResponseFormat struct {
			JSONSchema struct {
				Name   string
				Strict bool
			} `json:"json_schema"`
		} `json:"response_format"`
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		json.Unmarshal(body, &got)
		content, _ := json.Marshal(string(planJSON))
		io.WriteString(w, `{"id":"c1","object":"chat.completion","model":"llama3.1:8b","choices":[{"index":0,"message":{"role":"assistant","content":`+
			string(content)+`},"finish_reason":"stop"}],"usage":{"prompt_tokens":900,"completion_tokens":400}}`)
	}))
	defer srv.Close()
	env := map[string]string{"CAPBROKER_LLM": "openai", "CAPBROKER_LLM_BASE_URL": srv.URL + "/v1", "CAPBROKER_LLM_MODEL": "llama3.1:8b"}
	out, stderr, code := runIO(t, env, "", "plan", "Prepare the launch")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if got.Model != "llama3.1:8b" || len(got.Messages) != 2 || !strings.Contains(got.Messages[1].Content, "Capabilities available") ||
		got.ResponseFormat.JSONSchema.Name != "plan" || !got.ResponseFormat.JSONSchema.Strict {
		t.Errorf("request: %+v", got)
	}
	if !strings.Contains(out, `"capabilities": [`) || !strings.Contains(out, `"data_analysis"`) {
		t.Errorf("plan:\n%s", out)
	}
	// The printed plan assembles as is, from stdin.
	stdout, stderr, code := runIO(t, nil, out, "assemble", "-")
	if code != 0 || !strings.Contains(stdout, "code_generation  plan  named by the plan") {
		t.Errorf("assemble -: exit %d\n%s%s", code, stdout, stderr)
	}
}

func TestAssembleHandWritten(t *testing.T) {
	dir := t.TempDir()
	planFile := filepath.Join(dir, "plan.json")
	os.WriteFile(planFile, []byte(`{"goal": "Triage the bug report",
  "tasks": [
    {"id": "read", "description": "Read the open issues in the GitHub repository that mention the crash."},
    {"id": "fix", "description": "Open a pull request with the fix.", "depends_on": ["read", "nope"], "capabilities": ["create_pull_request", "fly"]}
  ]}`), 0o644)
	tools := filepath.Join(dir, "github.json")
	os.WriteFile(tools, []byte(`[
  {"type": "function", "function": {"name": "list_issues", "description": "List open issues in a GitHub repository, filtered by label or text.", "parameters": {"type": "object", "properties": {"repo": {"type": "string"}}}}},
  {"type": "function", "function": {"name": "create_pull_request", "description": "Open a pull request from a branch.", "parameters": {"type": "object", "properties": {"title": {"type": "string"}}}}},
  {"type": "function", "function": {"name": "send_message", "description": "Send a chat message to a channel.", "parameters": {"type": "object", "properties": {"text": {"type": "string"}}}}}
]`), 0o644)
	out, stderr, code := runIO(t, nil, "", "assemble", "--json", planFile, "--catalog", tools)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var a assembled
	json.Unmarshal([]byte(out), &a)
	want := map[string][]string{"read": {"inferred:list_issues"}, "fix": {"plan:create_pull_request"}}
	if diff := cmp.Diff(want, capsOf(a)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	for _, w := range []string{`task "fix": capabilities: dropped unknown capability "fly"`, `task "fix": depends_on: dropped "nope": no task has this id`} {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, stderr)
		}
	}
	if len(a.Warnings) != 2 {
		t.Errorf("warnings in JSON: %+v", a.Warnings)
	}
}

func TestAssembleErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "plan.json")
	os.WriteFile(bad, []byte("{\n  \"goal\": \"g\",\n  \"tasks\": [{\"id\": \"t1\", \"descripton\": \"x\"}]\n}\n"), 0o644)
	_, stderr, code := runIO(t, nil, "", "assemble", bad)
	want := bad + `:3:26: tasks[0].descripton: unknown field "descripton"`
	if code != 1 || !strings.Contains(stderr, want) {
		t.Errorf("exit %d, stderr %q\nwant %q", code, stderr, want)
	}
	_, stderr, code = runIO(t, nil, "", "assemble", filepath.Join(dir, "none.json"))
	if code != 1 || !strings.Contains(stderr, "reading the plan") {
		t.Errorf("missing file: exit %d, %q", code, stderr)
	}
	_, _, code = runIO(t, nil, "", "assemble")
	if code != 2 {
		t.Errorf("no argument: exit %d, want 2", code)
	}
}
