package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capbroker/capbroker/internal/testenv"
	"github.com/google/go-cmp/cmp"
)

// addrWriter hands the address of the "serving ... on http://ADDR" line to
// a channel.
type addrWriter struct{ c chan string }

func (a addrWriter) Write(p []byte) (int, error) {
	if _, rest, ok := strings.Cut(string(p), "http://"); ok {
		addr, _, _ := strings.Cut(rest, " ")
		a.c <- addr
	}
	return len(p), nil
}

// serve runs `capbroker serve` with args on a free port until the test
// ends and returns its base URL.
func serve(t *testing.T, env map[string]string, args ...string) string {
	t.Helper()
	getenv := func(k string) string {
		if v, ok := env[k]; ok || k != "CAPBROKER_RANKER" {
			return v
		}
		return "lexical" // as runIO: the tests expect lexical answers
	}
	addrc := make(chan string, 1)
	stderr := &testenv.Buffer{}
	m := &Main{Stdin: strings.NewReader(""), Stdout: addrWriter{addrc}, Stderr: stderr, Getenv: getenv}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	select {
	case addr := <-addrc:
		return "http://" + addr
	case err := <-done:
		done <- err
		t.Fatalf("serve exited: %v\n%s", err, stderr)
	}
	return ""
}

func call(t *testing.T, method, url, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, b
}

// sameJSON compares two JSON documents as values.
func sameJSON(t *testing.T, what string, cli string, api []byte) {
	t.Helper()
	var a, b any
	if err := json.Unmarshal([]byte(cli), &a); err != nil {
		t.Fatalf("%s: CLI output: %v in %s", what, err, cli)
	}
	if err := json.Unmarshal(api, &b); err != nil {
		t.Fatalf("%s: API answer: %v in %s", what, err, api)
	}
	if d := cmp.Diff(a, b); d != "" {
		t.Errorf("%s: the API answers other JSON than the CLI prints (-cli +api):\n%s", what, d)
	}
}

// TestServeMatchesCLI starts `capbroker serve` over real plugins, tool
// files and a SQLite database, and checks that routing, the capability
// map and sessions answer exactly the JSON the CLI prints for the same
// flags and database.
func TestServeMatchesCLI(t *testing.T) {
	dir := t.TempDir()
	plugins := routingRoot(t, "plugins")
	env := map[string]string{
		"HOME": dir, "XDG_CACHE_HOME": filepath.Join(dir, "cache"), "CAPBROKER_INDEX": filepath.Join(dir, "index"),
		"CAPBROKER_DB": filepath.Join(dir, "capbroker.db"),
	}
	tools := testTools(t)
	proj := pythonProject(t)
	base := serve(t, env, "--root", plugins, "--tools", tools, "--route-root", proj)

	// Paths outside --route-root are refused, naming the flag.
	if status, api := call(t, "POST", base+"/v1/route", `{"phase":"PLAN","state":"`+filepath.Join(dir, "STATE.md")+`"}`); status != 403 || !strings.Contains(string(api), "--route-root") {
		t.Errorf("a state file outside --route-root: %d %s", status, api)
	}
	if _, err := os.Stat(filepath.Join(dir, "STATE.md")); err == nil {
		t.Error("a state file outside --route-root was written")
	}

	cli, errOut, code := runEnv(t, env, "route", "--root", plugins, "--project", proj, "--state", "none", "--gap-log", "none", "--json", "--phase", "EXECUTE", "add the CSV export")
	if code != 0 {
		t.Fatalf("route: exit %d: %s", code, errOut)
	}
	status, api := call(t, "POST", base+"/v1/route", `{"phase":"EXECUTE","task":"add the CSV export","project":"`+proj+`"}`)
	if status != 200 {
		t.Fatalf("POST /v1/route: %d %s", status, api)
	}
	sameJSON(t, "route", cli, api)

	cli, errOut, code = runEnv(t, env, "capabilities", "--root", plugins, "--json")
	if code != 0 {
		t.Fatalf("capabilities: exit %d: %s", code, errOut)
	}
	status, api = call(t, "GET", base+"/v1/capabilities", "")
	if status != 200 {
		t.Fatalf("GET /v1/capabilities: %d %s", status, api)
	}
	sameJSON(t, "capabilities", cli, api)

	// A session started through the API, found in through the CLI, is the
	// same session on both sides.
	status, api = call(t, "POST", base+"/v1/sessions", `{"task":"`+codingTaskCLI+`","id":"e2e-1"}`)
	if status != 201 {
		t.Fatalf("POST /v1/sessions: %d %s", status, api)
	}
	if _, errOut, code := runEnv(t, env, "session", "find", "--tools", tools, "e2e-1", "who last changed a line of a file"); code != 0 {
		t.Fatalf("session find: exit %d: %s", code, errOut)
	}
	cli, errOut, code = runEnv(t, env, "session", "resume", "--json", "--tools", tools, "e2e-1")
	if code != 0 {
		t.Fatalf("session resume: exit %d: %s", code, errOut)
	}
	status, api = call(t, "POST", base+"/v1/sessions/e2e-1/resume", "")
	if status != 200 {
		t.Fatalf("POST /v1/sessions/e2e-1/resume: %d %s", status, api)
	}
	sameJSON(t, "session resume", cli, api)
	if !strings.Contains(string(api), `"git_blame"`) {
		t.Errorf("the API does not see the tool the CLI's find exposed: %s", api)
	}

	cli, errOut, code = runEnv(t, env, "trace", "--json", "--session", "e2e-1")
	if code != 0 {
		t.Fatalf("trace: exit %d: %s", code, errOut)
	}
	status, api = call(t, "GET", base+"/v1/traces?session=e2e-1", "")
	if status != 200 {
		t.Fatalf("GET /v1/traces: %d %s", status, api)
	}
	sameJSON(t, "trace", cli, api)

	// No model is configured: planning answers 501.
	status, api = call(t, "POST", base+"/v1/plan", `{"goal":"launch"}`)
	if status != 501 || !strings.Contains(string(api), "not_configured") {
		t.Errorf("POST /v1/plan without a model: %d %s", status, api)
	}
}

// TestServePlanner starts serve with a replayed model behind /v1/plan,
// and refuses to start with a model configured but unusable.
func TestServePlanner(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{
		"HOME": dir, "XDG_CACHE_HOME": filepath.Join(dir, "cache"), "CAPBROKER_INDEX": filepath.Join(dir, "index"),
		"CAPBROKER_DB":  filepath.Join(dir, "capbroker.db"),
		"CAPBROKER_LLM": "replay", "CAPBROKER_LLM_REPLAY": filepath.Join(replayDir, "four-tasks.json"),
	}
	base := serve(t, env, "--tools", testTools(t), "--no-defaults")
	status, body := call(t, "POST", base+"/v1/plan", `{"goal":"Launch our budgeting app"}`)
	if status != 200 || !strings.Contains(string(body), `"tasks"`) {
		t.Errorf("POST /v1/plan: %d %.300s", status, body)
	}

	env["CAPBROKER_LLM"] = "anthropic"
	_, errOut, code := runEnv(t, env, "serve", "--addr", "127.0.0.1:0", "--tools", testTools(t))
	if code != 1 || !strings.Contains(errOut, "planner: ") || !strings.Contains(errOut, "ANTHROPIC_API_KEY") {
		t.Errorf("serve with an unusable model: exit %d: %s", code, errOut)
	}
}
