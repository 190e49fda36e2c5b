package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/httpapi"
	"github.com/capbroker/capbroker/internal/testenv"
	"github.com/capbroker/capbroker/llm"
)

// recordingModel is a local server speaking the Chat Completions API: it
// keeps each request's messages and answers with a one-task plan.
type recordingModel struct {
	mu   sync.Mutex
	msgs [][]struct{ Role, Content string }
	url  string
}

func newRecordingModel(t *testing.T) *recordingModel {
	rm := &recordingModel{}
	reply, _ := json.Marshal(`{"goal":"g","tasks":[{"id":"t1","description":"d","agent_spec":{"name":"a","description":"","instructions":""},"instructions":"","depends_on":[],"needs":[],"capabilities":[]}]}`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct{ Role, Content string }
		}
		body, _ := io.ReadAll(r.Body)
		json.Unmarshal(body, &req)
		rm.mu.Lock()
		rm.msgs = append(rm.msgs, req.Messages)
		rm.mu.Unlock()
		io.WriteString(w, `{"id":"c1","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":`+
			string(reply)+`},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1}}`)
	}))
	t.Cleanup(srv.Close)
	rm.url = srv.URL + "/v1"
	return rm
}

// TestPlanPromptCorpus: plan on a folder of real plugins (shared/corpus)
// lists the discovered agents, commands and skills in the "Capabilities
// available" block, ranked by the goal and bounded; the CLI and the HTTP
// API (a server built as "capbroker serve" builds it) send the model
// byte-identical prompts for the same catalog and goal.
func TestPlanPromptCorpus(t *testing.T) {
	corpus := testenv.NeedShared(t, "corpus")
	model := newRecordingModel(t)
	dir := t.TempDir()
	env := map[string]string{"CAPBROKER_LLM": "openai", "CAPBROKER_LLM_BASE_URL": model.url, "CAPBROKER_LLM_MODEL": "m",
		"CAPBROKER_INDEX": filepath.Join(dir, "index"), "CAPBROKER_DB": filepath.Join(dir, "db"), "HOME": dir,
		// Lexical: the hybrid default ranks by meaning only the cards whose
		// vectors are cached, which a one-shot command fills within about a
		// second; the faces then agree once the shared cache is warm.
		"CAPBROKER_RANKER": "lexical"}
	const goal = "Review the pull request for security problems, then write the release notes and a changelog entry"
	t.Chdir(dir) // no ./capbroker.yaml, ./.claude or ./.mcp.json of the repository's

	_, stderr, code := runIO(t, env, "", "plan", "--root", corpus, "--no-defaults", goal)
	if code != 0 {
		t.Fatalf("plan: exit %d: %s", code, stderr)
	}

	// The HTTP face over the same catalog.
	m := &Main{Stdout: io.Discard, Stderr: io.Discard, Getenv: func(k string) string { return env[k] }}
	ctx := context.Background()
	cf := catalogFlags{discoveryFlags: discoveryFlags{roots: []string{corpus}, noDefaults: true}}
	b, err := m.broker(ctx, &cf, brokerOptions(&selectFlags{encoding: "o200k"}))
	if err != nil {
		t.Fatal(err)
	}
	planner, err := llm.New(llm.Config{Provider: "openai", BaseURL: model.url, Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := httpapi.New(b, &httpapi.Options{Planner: planner, Logger: m.quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	body, _ := json.Marshal(map[string]string{"goal": goal})
	resp, err := http.Post(hs.URL+"/v1/plan", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("/v1/plan: %d %s", resp.StatusCode, out)
	}

	if len(model.msgs) != 2 {
		t.Fatalf("the model got %d requests, want 2", len(model.msgs))
	}
	cli, api := model.msgs[0], model.msgs[1]
	for i := range cli {
		if cli[i] != api[i] {
			os.WriteFile(filepath.Join(dir, "cli.txt"), []byte(cli[i].Content), 0o644)
			t.Errorf("message %d (%s) differs between the CLI and HTTP (cli %d bytes, http %d bytes)", i, cli[i].Role, len(cli[i].Content), len(api[i].Content))
		}
	}
	user := cli[len(cli)-1].Content
	_, block, ok := strings.Cut(user, "Capabilities available")
	if !ok {
		t.Fatalf("no capabilities block:\n%s", user)
	}
	kinds := map[card.Kind]int{}
	listed := 0
	for _, line := range strings.Split(block, "\n")[1:] {
		name, _, ok := strings.Cut(line, ": ")
		if !ok {
			continue
		}
		if c, ok := b.Catalog().Lookup(name); ok {
			kinds[c.Kind]++
			listed++
		}
	}
	if kinds[card.KindAgent] == 0 || kinds[card.KindCommand] == 0 || kinds[card.KindSkill] == 0 {
		t.Errorf("the block lists %v; want agents, commands and skills of the corpus", kinds)
	}
	if listed >= b.Catalog().Len() || !strings.Contains(block, "more capabilities are not listed") {
		t.Errorf("the block lists %d of %d capabilities; want it bounded", listed, b.Catalog().Len())
	}
	// Ranked by the goal: the first lines are about reviews, security or release notes.
	first := strings.ToLower(strings.Join(strings.Split(block, "\n")[1:6], "\n"))
	if !strings.Contains(first, "review") && !strings.Contains(first, "security") && !strings.Contains(first, "release") && !strings.Contains(first, "changelog") {
		t.Errorf("the block does not open with capabilities for the goal:\n%s", first)
	}
	t.Logf("corpus: %d capabilities, %d listed (%v)", b.Catalog().Len(), listed, kinds)
}
