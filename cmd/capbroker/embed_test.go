package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// fakeEmbeddings answers POST /v1/embeddings in the OpenAI shape with
// 3-dimensional vectors and counts the inputs it embedded.
func fakeEmbeddings(t *testing.T) (*httptest.Server, *int) {
	var (
		mu     sync.Mutex
		inputs int
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		if r.URL.Path != "/v1/embeddings" || json.NewDecoder(r.Body).Decode(&req) != nil || req.Model != "m1" {
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"error":{"message":"bad request","type":"invalid_request_error","code":null}}`))
			return
		}
		data := make([]map[string]any, len(req.Input))
		for i, in := range req.Input {
			data[i] = map[string]any{"object": "embedding", "index": i, "embedding": []float32{float32(len(in)), 1, float32(i)}}
		}
		mu.Lock()
		inputs += len(req.Input)
		mu.Unlock()
		json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": req.Model})
	}))
	t.Cleanup(srv.Close)
	return srv, &inputs
}

func TestEmbedWarmsCache(t *testing.T) {
	srv, inputs := fakeEmbeddings(t)
	env := map[string]string{"CAPBROKER_EMBED_BASE_URL": srv.URL + "/v1", "CAPBROKER_EMBED_MODEL": "m1"}
	db := filepath.Join(t.TempDir(), "capbroker.db")
	type result struct{ Cards, Cached, Embedded, Dim int }
	var first, second result
	for i, r := range []*result{&first, &second} {
		out, errOut, code := runEnv(t, env, "embed", "--db", db, "--json")
		if code != 0 {
			t.Fatalf("run %d: exit %d: %s", i, code, errOut)
		}
		if err := json.Unmarshal([]byte(out), r); err != nil {
			t.Fatalf("%v in %s", err, out)
		}
	}
	if first.Cards == 0 || first.Embedded != first.Cards || first.Cached != 0 || first.Dim != 3 {
		t.Errorf("first run %+v, want every card embedded", first)
	}
	if second.Cached != first.Cards || second.Embedded != 0 {
		t.Errorf("second run %+v, want every card cached", second)
	}
	if *inputs != first.Embedded {
		t.Errorf("endpoint embedded %d texts, want %d", *inputs, first.Embedded)
	}
	out, _, code := runEnv(t, env, "embed", "--db", db, "--prune")
	if code != 0 || !strings.Contains(out, "embedded in") || !strings.Contains(out, "pruned 0") {
		t.Errorf("text output (exit %d):\n%s", code, out)
	}
}

// TestEmbedBuiltin: with no endpoint, embed uses the built-in encoder,
// and a second run finds every card cached.
func TestEmbedBuiltin(t *testing.T) {
	dir := t.TempDir()
	tools := filepath.Join(dir, "tools.json")
	os.WriteFile(tools, []byte(`[{"name":"get_weather","description":"Current weather and forecast for a city.","inputSchema":{"type":"object"}}]`), 0o644)
	db := filepath.Join(dir, "x.db")
	for i, want := range []string{"0 cached, 1 embedded", "1 cached, 0 embedded"} {
		out, errOut, code := runEnv(t, nil, "embed", "--tools", tools, "--db", db)
		if code != 0 || !strings.Contains(out, want) || !strings.Contains(out, "builtin:minilm") {
			t.Errorf("run %d: exit %d, stderr %q, out %q: want %q", i, code, errOut, out, want)
		}
	}
}
