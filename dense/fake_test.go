package dense

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/capbroker/capbroker/rank"
)

// fakeServer is a local server speaking the OpenAI embeddings API, with
// counters and failure hooks. It checks every request the way the real
// API does and answers errors in the OpenAI error shape.
type fakeServer struct {
	t     testing.TB
	srv   *httptest.Server
	model string
	key   string // expected bearer token; "" accepts none
	embed func(string) []float32

	mu       sync.Mutex
	requests int
	inputs   int
	batches  []int
	perText  map[string]int
	// fail, if set, may answer request n (1-based) itself: it returns a
	// status (0 to answer normally), headers and body.
	fail func(n int) (int, http.Header, string)
	// reverse answers data in reverse index order, as a server may.
	reverse bool
	// slow makes every request wait until the client gives up.
	slow atomic.Bool
}

func newFakeServer(t testing.TB, model, key string) *fakeServer {
	t.Helper()
	f := &fakeServer{t: t, model: model, key: key, embed: wordEmbed, perText: map[string]int{}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.handle))
	t.Cleanup(f.srv.Close)
	return f
}

// baseURL is the API root a client is configured with.
func (f *fakeServer) baseURL() string { return f.srv.URL + "/v1" }

func (f *fakeServer) stats() (requests, inputs int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests, f.inputs
}

func writeError(w http.ResponseWriter, status int, msg, typ, code string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": typ, "code": code}})
}

func (f *fakeServer) handle(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.requests++
	n := f.requests
	fail := f.fail
	f.mu.Unlock()
	if f.slow.Load() {
		// Read the body first: only then does the server notice the
		// client hanging up and cancel r.Context().
		io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
		case <-time.After(30 * time.Second):
		}
		return
	}
	if fail != nil {
		if status, hdr, body := fail(n); status != 0 {
			for k, v := range hdr {
				w.Header()[k] = v
			}
			w.WriteHeader(status)
			fmt.Fprint(w, body)
			return
		}
	}
	if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" {
		writeError(w, http.StatusNotFound, fmt.Sprintf("no route %s %s", r.Method, r.URL.Path), "invalid_request_error", "not_found")
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		writeError(w, http.StatusBadRequest, "content type "+ct, "invalid_request_error", "")
		return
	}
	if f.key != "" && r.Header.Get("Authorization") != "Bearer "+f.key {
		writeError(w, http.StatusUnauthorized, "Incorrect API key provided", "invalid_request_error", "invalid_api_key")
		return
	}
	var req struct {
		Model          string   `json:"model"`
		Input          []string `json:"input"`
		EncodingFormat string   `json:"encoding_format"`
		Dimensions     int      `json:"dimensions"`
	}
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "bad body: "+err.Error(), "invalid_request_error", "")
		return
	}
	if req.Model != f.model {
		writeError(w, http.StatusNotFound, fmt.Sprintf("The model `%s` does not exist", req.Model), "invalid_request_error", "model_not_found")
		return
	}
	if req.EncodingFormat != "" && req.EncodingFormat != "float" {
		writeError(w, http.StatusBadRequest, "unsupported encoding_format", "invalid_request_error", "")
		return
	}
	if len(req.Input) == 0 || len(req.Input) > MaxBatchSize {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("input must have 1 to %d items, got %d", MaxBatchSize, len(req.Input)), "invalid_request_error", "")
		return
	}
	type datum struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	data := make([]datum, len(req.Input))
	for i, in := range req.Input {
		if in == "" {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("input[%d] is empty", i), "invalid_request_error", "")
			return
		}
		v := f.embed(in)
		if req.Dimensions > 0 && req.Dimensions < len(v) {
			v = v[:req.Dimensions]
		}
		data[i] = datum{Object: "embedding", Index: i, Embedding: v}
	}
	if f.reverse {
		for i, j := 0, len(data)-1; i < j; i, j = i+1, j-1 {
			data[i], data[j] = data[j], data[i]
		}
	}
	f.mu.Lock()
	f.inputs += len(req.Input)
	f.batches = append(f.batches, len(req.Input))
	for _, in := range req.Input {
		f.perText[in]++
	}
	f.mu.Unlock()
	var buf bytes.Buffer
	json.NewEncoder(&buf).Encode(map[string]any{
		"object": "list",
		"data":   data,
		"model":  req.Model,
		"usage":  map[string]int{"prompt_tokens": len(req.Input) * 8, "total_tokens": len(req.Input) * 8},
	})
	w.Header().Set("Content-Type", "application/json")
	w.Write(buf.Bytes())
}

// wordDim is the length of wordEmbed's vectors.
const wordDim = 256

// concepts is a tiny hand-made synonym table: words that mean the same
// share a concept and so a direction. It stands in for what a real
// embedding model learns; tests only.
var concepts = map[string]string{
	"url": "web", "link": "web", "web": "web", "webpage": "web", "page": "web",
	"site": "web", "website": "web", "internet": "web", "online": "web",
	"look": "get", "fetch": "get", "retrieve": "get", "download": "get", "get": "get", "open": "get",
	"mail": "email", "email": "email", "message": "email", "inbox": "email",
	"weather": "weather", "forecast": "weather", "temperature": "weather", "rain": "weather",
	"splorch": "weather", // a word no lexicon or word vector knows
	"bug":     "issue", "issue": "issue", "ticket": "issue",
	"file": "file", "files": "file", "document": "file",
}

// wordEmbed is a deterministic embedder for tests: each word (or its
// concept) adds a fixed pseudo-random direction.
func wordEmbed(text string) []float32 {
	v := make([]float32, wordDim)
	for _, t := range rank.Tokens(text) {
		w := t.Word
		if c, ok := concepts[w]; ok {
			w = "concept:" + c
		} else {
			w = t.Stem
		}
		h := fnv.New64a()
		h.Write([]byte(w))
		seed := h.Sum64()
		for range 8 {
			seed = seed*6364136223846793005 + 1442695040888963407
			d := int(seed>>33) % wordDim
			if seed&1 == 0 {
				v[d]++
			} else {
				v[d]--
			}
		}
	}
	var ss float64
	for _, x := range v {
		ss += float64(x * x)
	}
	if ss == 0 {
		v[0] = 1 // a text of stop words only: some direction, never zero
		return v
	}
	inv := float32(1 / math.Sqrt(ss))
	for i := range v {
		v[i] *= inv
	}
	return v
}

// wordEmbedder is wordEmbed as an in-process Embedder.
type wordEmbedder struct{ calls atomic.Int64 }

func (e *wordEmbedder) Model() string { return "test-words" }
func (e *wordEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	e.calls.Add(1)
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = wordEmbed(t)
	}
	return out, nil
}

// quickSleep records requested waits instead of sleeping.
type quickSleep struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (q *quickSleep) sleep(ctx context.Context, d time.Duration) error {
	q.mu.Lock()
	q.waits = append(q.waits, d)
	q.mu.Unlock()
	return ctx.Err()
}

func mustClient(t testing.TB, o *ClientOptions) *Client {
	t.Helper()
	c, err := NewClient(o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
