package main

import (
	"encoding/json"
	"hash/fnv"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capbroker/capbroker/rank"
)

// meaningEmbeddings speaks the OpenAI embeddings API with bag-of-stems
// vectors: texts sharing stems are similar, and "zorp", a word no
// lexicon or word vector knows, is made to mean "web page", so a dense
// ranker can find what lexical ranking misses.
func meaningEmbeddings(t *testing.T) *httptest.Server {
	t.Helper()
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		if r.URL.Path != "/v1/embeddings" || json.NewDecoder(r.Body).Decode(&req) != nil || req.Model == "" {
			http.Error(w, `{"error":{"message":"bad request","type":"invalid_request_error"}}`, 400)
			return
		}
		type datum struct {
			Object    string    `json:"object"`
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		var data []datum
		for i, text := range req.Input {
			v := make([]float32, 64)
			for _, tok := range rank.Tokens(strings.ReplaceAll(strings.ToLower(text), "zorp", "web page")) {
				h := fnv.New32a()
				h.Write([]byte(tok.Stem))
				v[h.Sum32()%64] += 1
			}
			data = append(data, datum{Object: "embedding", Index: i, Embedding: v})
		}
		json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": req.Model})
	}))
}

func TestEvalRankers(t *testing.T) {
	srv := meaningEmbeddings(t)
	defer srv.Close()
	dir := t.TempDir()
	tools := filepath.Join(dir, "tools.jsonl")
	queries := filepath.Join(dir, "queries.jsonl")
	os.WriteFile(tools, []byte(`{"name":"fetch_webpage","description":"Fetch a web page and return its text.","parameters":null}
{"name":"get_weather","description":"Get the weather forecast for a city.","parameters":null}
{"name":"send_email","description":"Send an email message.","parameters":null}
`), 0o644)
	os.WriteFile(queries, []byte(`{"id":"1","query":"open this zorp","gold":["fetch_webpage"]}
{"id":"2","query":"weather forecast for Paris","gold":["get_weather"]}
`), 0o644)
	env := map[string]string{"CAPBROKER_EMBED_MODEL": "fake-embed", "CAPBROKER_EMBED_BASE_URL": srv.URL + "/v1"}
	top1 := map[string]float64{}
	for _, ranker := range []string{"lexical", "dense", "hybrid"} {
		out, errOut, code := runEnv(t, env, "eval", "--tools", tools, "--queries", queries, "--json", "--ranker", ranker, "--db", filepath.Join(dir, "cache.db"))
		if code != 0 {
			t.Fatalf("--ranker %s: exit %d: %s", ranker, code, errOut)
		}
		var rep struct{ Top1 float64 }
		json.Unmarshal([]byte(out), &rep)
		top1[ranker] = rep.Top1
	}
	// "open this zorp" shares no word with fetch_webpage: only meaning finds it.
	if top1["lexical"] != 0.5 || top1["dense"] != 1 || top1["hybrid"] != 1 {
		t.Errorf("top1 by ranker = %v, want lexical 0.5, dense and hybrid 1", top1)
	}
	// Without an endpoint configured, dense uses the built-in encoder,
	// which puts the weather tool first for the weather query.
	out, errOut, code := runEnv(t, nil, "eval", "--tools", tools, "--queries", queries, "--ranker", "dense", "--json", "--db", filepath.Join(dir, "c2.db"))
	var rep struct{ Top1 float64 }
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || rep.Top1 < 0.5 {
		t.Errorf("dense with the built-in encoder: exit %d, top1 %v, stderr %s", code, rep.Top1, errOut)
	}
	if _, _, code := runEnv(t, nil, "eval", "--tools", tools, "--queries", queries, "--ranker", "psychic"); code != 2 {
		t.Errorf("--ranker psychic: exit %d, want 2", code)
	}
}

// TestSelectHybrid shows select using hybrid ranking when an embeddings
// endpoint is configured, and lexical ranking when it is not.
func TestSelectHybrid(t *testing.T) {
	srv := meaningEmbeddings(t)
	defer srv.Close()
	dir := t.TempDir()
	tools := filepath.Join(dir, "tools.json")
	os.WriteFile(tools, []byte(`[{"name":"fetch_webpage","description":"Fetch a web page and return its text.","inputSchema":{"type":"object"}},
{"name":"send_email","description":"Send an email message.","inputSchema":{"type":"object"}}]`), 0o644)
	env := map[string]string{"CAPBROKER_EMBED_MODEL": "fake-embed", "CAPBROKER_EMBED_BASE_URL": srv.URL + "/v1", "HOME": dir}
	out, errOut, code := runEnv(t, env, "find", "--json", "--tools", tools, "open this zorp")
	if code != 0 || !strings.Contains(out, `"fetch_webpage"`) {
		t.Errorf("hybrid find: exit %d, stderr %s:\n%s", code, errOut, out)
	}
	if _, err := os.Stat(filepath.Join(dir, ".local", "share", "capbroker", "capbroker.db")); err != nil {
		t.Errorf("embedding cache not in the data directory: %v", err)
	}
	out, _, _ = runEnv(t, map[string]string{"HOME": dir}, "find", "--json", "--tools", tools, "open this zorp")
	if strings.Contains(out, `"fetch_webpage"`) {
		t.Errorf("lexical find matched fetch_webpage on meaning alone:\n%s", out)
	}
	if _, errOut, code := runEnv(t, map[string]string{"HOME": dir, "CAPBROKER_RANKER": "psychic"}, "find", "--tools", tools, "x"); code != 2 || !strings.Contains(errOut, "CAPBROKER_RANKER") {
		t.Errorf("bad CAPBROKER_RANKER: exit %d %s", code, errOut)
	}
}

// TestEvalNamespaced: a name two tool files share is scored as the
// catalog names it (source__name), as find returns it.
func TestEvalNamespaced(t *testing.T) {
	dir := t.TempDir()
	gh, sentry := filepath.Join(dir, "github.json"), filepath.Join(dir, "sentry.json")
	os.WriteFile(gh, []byte(`[{"name":"list_issues","description":"List the issues of a GitHub repository.","inputSchema":{"type":"object"}}]`), 0o644)
	os.WriteFile(sentry, []byte(`[{"name":"list_issues","description":"List the errors Sentry grouped into issues for a project.","inputSchema":{"type":"object"}}]`), 0o644)
	queries := filepath.Join(dir, "queries.jsonl")
	os.WriteFile(queries, []byte(`{"id":"1","query":"which errors did sentry group for the checkout project","gold":["sentry__list_issues"]}
{"id":"2","query":"list the issues of our github repository","gold":["github__list_issues"]}
`), 0o644)
	out, errOut, code := runEnv(t, nil, "eval", "--tools", gh, "--tools", sentry, "--queries", queries, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep struct {
		Queries int
		Top1    float64
	}
	json.Unmarshal([]byte(out), &rep)
	if rep.Queries != 2 || rep.Top1 != 1 {
		t.Errorf("queries %d, top1 %v, want both scored and first: %s", rep.Queries, rep.Top1, out)
	}
	if !strings.Contains(errOut, "github__list_issues, sentry__list_issues") {
		t.Errorf("stderr does not report the renames: %q", errOut)
	}
}
