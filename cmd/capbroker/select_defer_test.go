package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// fakeMessages speaks the Anthropic Messages API for tool search: it
// checks the tools array as the API documents it (custom tools named
// [A-Za-z0-9_-]{1,64} with an object input_schema, names unique, a
// deferred tool only beside a tool search tool, which is never deferred
// itself, and the beta header) and answers with the search's
// tool_reference to the deferred tool sharing most words with the
// user's message, or an invalid_request_error.
func fakeMessages(t *testing.T) *httptest.Server {
	t.Helper()
	nameRE := regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	searchTools := map[string]string{"tool_search_tool_bm25_20251119": "tool_search_tool_bm25", "tool_search_tool_regex_20251119": "tool_search_tool_regex"}
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fail := func(format string, a ...any) {
			w.WriteHeader(400)
			json.NewEncoder(w).Encode(map[string]any{"type": "error", "error": map[string]string{"type": "invalid_request_error", "message": fmt.Sprintf(format, a...)}})
		}
		if r.URL.Path != "/v1/messages" || r.Header.Get("anthropic-version") != "2023-06-01" || r.Header.Get("x-api-key") == "" {
			fail("bad path or headers")
			return
		}
		var req struct {
			Model    string `json:"model"`
			Messages []struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			} `json:"messages"`
			Tools []map[string]json.RawMessage `json:"tools"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) == 0 {
			fail("bad body: %v", err)
			return
		}
		seen := map[string]bool{}
		search, loaded := "", 0
		type deferred struct{ name, text string }
		var lazy []deferred
		for i, raw := range req.Tools {
			var typ, name, desc string
			var deferLoading bool
			json.Unmarshal(raw["type"], &typ)
			json.Unmarshal(raw["name"], &name)
			json.Unmarshal(raw["description"], &desc)
			json.Unmarshal(raw["defer_loading"], &deferLoading)
			if seen[name] {
				fail("tools.%d.name: %q is used twice", i, name)
				return
			}
			seen[name] = true
			if typ != "" && typ != "custom" {
				if want, ok := searchTools[typ]; !ok || name != want {
					fail("tools.%d: unknown server tool %s %s", i, typ, name)
					return
				}
				if deferLoading {
					fail("tools.%d: the tool search tool cannot be deferred", i)
					return
				}
				search = name
				continue
			}
			var schema struct {
				Type string `json:"type"`
			}
			if !nameRE.MatchString(name) || json.Unmarshal(raw["input_schema"], &schema) != nil || schema.Type != "object" {
				fail("tools.%d: bad custom tool %s", i, raw)
				return
			}
			if deferLoading {
				lazy = append(lazy, deferred{name, strings.ToLower(name + " " + desc)})
			} else {
				loaded++
			}
		}
		if len(lazy) > 0 && search == "" {
			fail("tools: deferred tools need a tool search tool")
			return
		}
		if len(lazy) > 0 && !strings.Contains(r.Header.Get("anthropic-beta"), "advanced-tool-use-2025-11-20") {
			fail("tool search needs the advanced-tool-use-2025-11-20 beta")
			return
		}
		if loaded == 0 && search == "" {
			fail("tools: every tool is deferred")
			return
		}
		content := []map[string]any{{"type": "text", "text": "ok"}}
		if search != "" {
			best, bestN := "", 0
			for _, d := range lazy {
				n := 0
				for _, w := range strings.Fields(strings.ToLower(req.Messages[0].Content)) {
					if len(w) > 3 && strings.Contains(d.text, strings.Trim(w, ".,?")) {
						n++
					}
				}
				if n > bestN {
					best, bestN = d.name, n
				}
			}
			refs := []map[string]string{}
			if best != "" {
				refs = append(refs, map[string]string{"type": "tool_reference", "tool_name": best})
			}
			content = []map[string]any{
				{"type": "server_tool_use", "id": "srvtoolu_1", "name": search, "input": map[string]string{"query": req.Messages[0].Content}},
				{"type": "tool_search_tool_result", "tool_use_id": "srvtoolu_1", "content": map[string]any{"type": "tool_search_tool_search_result", "tool_references": refs}},
			}
		}
		json.NewEncoder(w).Encode(map[string]any{"id": "msg_1", "type": "message", "role": "assistant", "model": req.Model, "content": content, "stop_reason": "end_turn",
			"usage": map[string]int{"input_tokens": 1, "output_tokens": 1}})
	}))
}

// TestSelectDeferRest: select --format anthropic --defer-rest emits the
// task's picks loaded at once, Anthropic's tool search tool and the rest
// of the catalog deferred, which the Messages API accepts, and the
// provider's search finds a tool capbroker did not pick among the
// deferred ones. Without --defer-rest the rest is not sent.
func TestSelectDeferRest(t *testing.T) {
	srv := fakeMessages(t)
	defer srv.Close()
	tools := filepath.Join("testdata", "select-defer", "tools.jsonl")
	task := "send an email to bob about the forecast in Paris"
	// The user's next message needs a tool the task's selection left out.
	followUp := "also convert the price, 10 dollars, to another currency"
	post := func(body []byte) map[string]any {
		t.Helper()
		var tl json.RawMessage
		if err := json.Unmarshal(body, &tl); err != nil {
			t.Fatalf("select printed %s: %v", body, err)
		}
		req, _ := json.Marshal(map[string]any{"model": "claude-sonnet-4-5", "max_tokens": 100, "tools": tl,
			"messages": []map[string]string{{"role": "user", "content": followUp}}})
		hr, _ := http.NewRequest("POST", srv.URL+"/v1/messages", bytes.NewReader(req))
		hr.Header.Set("x-api-key", "sk-ant-test")
		hr.Header.Set("anthropic-version", "2023-06-01")
		hr.Header.Set("anthropic-beta", "advanced-tool-use-2025-11-20")
		resp, err := http.DefaultClient.Do(hr)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		json.NewDecoder(resp.Body).Decode(&out)
		if resp.StatusCode != 200 {
			t.Fatalf("Messages API: HTTP %d %v", resp.StatusCode, out)
		}
		return out
	}
	run := func(args ...string) []byte {
		t.Helper()
		var out, errb bytes.Buffer
		m := &Main{Stdout: &out, Stderr: &errb, Getenv: os.Getenv}
		if err := m.Run(context.Background(), append(args, "--tools", tools, task)); err != nil {
			t.Fatalf("select %v: %v\n%s", args, err, errb.String())
		}
		return out.Bytes()
	}

	body := run("select", "--format", "anthropic", "--defer-rest")
	var entries []map[string]any
	json.Unmarshal(body, &entries)
	var picks, deferred []string
	searchAt := -1
	for i, e := range entries {
		switch {
		case e["type"] == "tool_search_tool_bm25_20251119":
			searchAt = i
		case e["defer_loading"] == true:
			deferred = append(deferred, e["name"].(string))
		default:
			picks = append(picks, e["name"].(string))
		}
	}
	if searchAt != len(picks) || len(picks)+len(deferred) != 4 || len(picks) == 0 || len(deferred) == 0 {
		t.Fatalf("picks %v, search tool at %d, deferred %v: want the picks, the search tool, then the other tools of 4", picks, searchAt, deferred)
	}
	for _, p := range picks {
		if p == "find_capability" {
			t.Errorf("the hatch is sent beside the provider's search")
		}
	}
	out := post(body)
	content := out["content"].([]any)
	if len(content) != 2 {
		t.Fatalf("answer %v: want the search and its result", out)
	}
	refs := content[1].(map[string]any)["content"].(map[string]any)["tool_references"].([]any)
	if len(refs) != 1 {
		t.Fatalf("the search found %v among %v", refs, deferred)
	}
	found := refs[0].(map[string]any)["tool_name"].(string)
	if found != "convert-currency" || !strings.Contains(strings.Join(deferred, " "), found) {
		t.Errorf("the search loaded %s, want convert-currency among the deferred %v", found, deferred)
	}

	// Regex variant.
	body = run("select", "--format", "anthropic", "--defer-rest=regex")
	if !bytes.Contains(body, []byte(`"tool_search_tool_regex_20251119"`)) {
		t.Errorf("--defer-rest=regex: %s", body)
	}
	post(body)

	// Without --defer-rest: the picks and the hatch only.
	body = run("select", "--format", "anthropic")
	if bytes.Contains(body, []byte("defer_loading")) || bytes.Contains(body, []byte("tool_search_tool")) {
		t.Errorf("plain --format anthropic defers: %s", body)
	}

	// --defer-rest is Anthropic's.
	var errb bytes.Buffer
	m := &Main{Stdout: &bytes.Buffer{}, Stderr: &errb, Getenv: os.Getenv}
	if err := m.Run(context.Background(), []string{"select", "--format", "openai", "--defer-rest", "--tools", tools, task}); err == nil || !strings.Contains(err.Error(), "--format anthropic") {
		t.Errorf("--format openai --defer-rest: %v", err)
	}
}
