package dense

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func texts(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("tool number %d reads file %d", i, i)
	}
	return out
}

func TestClientBatchesAndOrder(t *testing.T) {
	f := newFakeServer(t, "m1", "sk-test")
	f.reverse = true // the client must order by "index", not by position
	c := mustClient(t, &ClientOptions{BaseURL: f.baseURL(), Model: "m1", APIKey: "sk-test", BatchSize: 128, Parallel: 2})
	in := texts(300)
	got, err := c.Embed(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(in) {
		t.Fatalf("got %d vectors for %d texts", len(got), len(in))
	}
	for i, v := range got {
		if diff := cmp.Diff(wordEmbed(in[i]), v); diff != "" {
			t.Fatalf("vector %d is not the embedding of text %d (-want +got):\n%s", i, i, diff)
		}
	}
	f.mu.Lock()
	batches := append([]int(nil), f.batches...)
	f.mu.Unlock()
	total, biggest := 0, 0
	for _, b := range batches {
		total += b
		biggest = max(biggest, b)
	}
	if len(batches) != 3 || total != 300 || biggest != 128 {
		t.Errorf("batches %v, want 3 batches of at most 128 summing to 300", batches)
	}
	if c.Requests() != 3 {
		t.Errorf("Requests() = %d, want 3", c.Requests())
	}
}

func TestClientSendsDimensionsAndKeysModel(t *testing.T) {
	f := newFakeServer(t, "m1", "")
	c := mustClient(t, &ClientOptions{BaseURL: f.baseURL() + "/embeddings", Model: "m1", Dimensions: 64})
	got, err := c.Embed(context.Background(), []string{"fetch a page"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got[0]) != 64 {
		t.Errorf("vector has %d dimensions, want the 64 asked for", len(got[0]))
	}
	if c.Model() != "m1@64" {
		t.Errorf("Model() = %q, want m1@64 so the cache keeps lengths apart", c.Model())
	}
}

func TestClientErrors(t *testing.T) {
	tests := []struct {
		name     string
		model    string
		key      string
		fail     func(n int) (int, http.Header, string)
		wantReqs int64
		want     []string // substrings of the error
		wantAPI  *APIError
	}{
		{
			name: "openai error body", model: "m1",
			fail: func(int) (int, http.Header, string) {
				return 400, nil, `{"error":{"message":"input too long","type":"invalid_request_error","code":"context_length_exceeded"}}`
			},
			wantReqs: 1,
			want:     []string{"HTTP 400", "input too long", "invalid_request_error", "context_length_exceeded"},
			wantAPI:  &APIError{StatusCode: 400, Message: "input too long", Type: "invalid_request_error", Code: "context_length_exceeded"},
		},
		{
			name: "bad key says how to configure", model: "m1", key: "wrong",
			wantReqs: 1,
			want:     []string{"HTTP 401", "Incorrect API key", EnvAPIKey, EnvOpenAI},
		},
		{
			name: "unknown model says how to configure", model: "nope",
			wantReqs: 1,
			want:     []string{"HTTP 404", "does not exist", "model_not_found", EnvBaseURL, EnvModel},
		},
		{
			name: "ollama string error", model: "m1",
			fail:     func(int) (int, http.Header, string) { return 400, nil, `{"error":"model is not an embedding model"}` },
			wantReqs: 1,
			want:     []string{"model is not an embedding model"},
		},
		{
			name: "html body quoted", model: "m1",
			fail:     func(int) (int, http.Header, string) { return 502, nil, `<html>bad gateway</html>` },
			wantReqs: 3, // retried twice
			want:     []string{"HTTP 502", "bad gateway", "after 3 attempts"},
		},
		{
			name: "wrong count", model: "m1",
			fail: func(int) (int, http.Header, string) {
				return 200, nil, `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[1,2]}],"model":"m1"}`
			},
			wantReqs: 1,
			want:     []string{"sent 2 inputs, got 1 embeddings"},
		},
		{
			name: "not json", model: "m1",
			fail:     func(int) (int, http.Header, string) { return 200, nil, `hello` },
			wantReqs: 1,
			want:     []string{"not an embeddings list", `"hello"`},
		},
		{
			name: "index out of range", model: "m1",
			fail: func(int) (int, http.Header, string) {
				return 200, nil, `{"object":"list","data":[{"index":0,"embedding":[1]},{"index":5,"embedding":[1]}]}`
			},
			wantReqs: 1,
			want:     []string{"index 5 out of range"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeServer(t, "m1", "sk-right")
			f.fail = tt.fail
			key := tt.key
			if key == "" {
				key = "sk-right"
			}
			c := mustClient(t, &ClientOptions{BaseURL: f.baseURL(), Model: tt.model, APIKey: key, MaxRetries: 2})
			qs := &quickSleep{}
			c.sleep = qs.sleep
			_, err := c.Embed(context.Background(), []string{"a b", "c d"})
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			if c.Requests() != tt.wantReqs {
				t.Errorf("%d requests, want %d", c.Requests(), tt.wantReqs)
			}
			if tt.wantAPI != nil {
				var ae *APIError
				if !errors.As(err, &ae) {
					t.Fatalf("error %v is not an *APIError", err)
				}
				tt.wantAPI.URL = c.URL()
				if diff := cmp.Diff(tt.wantAPI, ae); diff != "" {
					t.Errorf("APIError (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestClientRetries(t *testing.T) {
	tests := []struct {
		name      string
		headers   http.Header
		status    int
		failures  int
		wantWaits func(ws []time.Duration) error
	}{
		{
			name: "429 retry-after seconds", status: 429, failures: 2,
			headers: http.Header{"Retry-After": {"3"}},
			wantWaits: func(ws []time.Duration) error {
				if !cmp.Equal(ws, []time.Duration{3 * time.Second, 3 * time.Second}) {
					return fmt.Errorf("waits %v, want [3s 3s]", ws)
				}
				return nil
			},
		},
		{
			name: "429 retry-after-ms wins", status: 429, failures: 1,
			headers: http.Header{"Retry-After": {"3"}, "Retry-After-Ms": {"250"}},
			wantWaits: func(ws []time.Duration) error {
				if !cmp.Equal(ws, []time.Duration{250 * time.Millisecond}) {
					return fmt.Errorf("waits %v, want [250ms]", ws)
				}
				return nil
			},
		},
		{
			name: "retry-after capped by MaxBackoff", status: 429, failures: 1,
			headers: http.Header{"Retry-After": {"3600"}},
			wantWaits: func(ws []time.Duration) error {
				if !cmp.Equal(ws, []time.Duration{5 * time.Second}) {
					return fmt.Errorf("waits %v, want [5s]", ws)
				}
				return nil
			},
		},
		{
			name: "503 exponential backoff", status: 503, failures: 3,
			wantWaits: func(ws []time.Duration) error {
				if len(ws) != 3 {
					return fmt.Errorf("waits %v, want 3", ws)
				}
				for i, w := range ws {
					lo := 500 * time.Millisecond << i
					if w < lo || w > lo+lo/4 {
						return fmt.Errorf("wait %d is %v, want in [%v, %v]", i, w, lo, lo+lo/4)
					}
				}
				return nil
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeServer(t, "m1", "")
			f.fail = func(n int) (int, http.Header, string) {
				if n <= tt.failures {
					return tt.status, tt.headers, `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`
				}
				return 0, nil, ""
			}
			c := mustClient(t, &ClientOptions{BaseURL: f.baseURL(), Model: "m1", MaxBackoff: 5 * time.Second})
			qs := &quickSleep{}
			c.sleep = qs.sleep
			got, err := c.Embed(context.Background(), []string{"fetch the page"})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 || len(got[0]) != wordDim {
				t.Fatalf("got %d vectors", len(got))
			}
			if err := tt.wantWaits(qs.waits); err != nil {
				t.Error(err)
			}
			if c.Requests() != int64(tt.failures+1) {
				t.Errorf("%d requests, want %d", c.Requests(), tt.failures+1)
			}
		})
	}
}

func TestClientRealRetryAfterWait(t *testing.T) {
	// One real (short) wait, to check the sleeping path itself.
	f := newFakeServer(t, "m1", "")
	f.fail = func(n int) (int, http.Header, string) {
		if n == 1 {
			return 429, http.Header{"Retry-After-Ms": {"20"}}, `{"error":{"message":"slow down","type":"requests","code":"rate_limit_exceeded"}}`
		}
		return 0, nil, ""
	}
	c := mustClient(t, &ClientOptions{BaseURL: f.baseURL(), Model: "m1"})
	start := time.Now()
	if _, err := c.Embed(context.Background(), []string{"x y"}); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 20*time.Millisecond {
		t.Errorf("retried after %v, before the 20ms the server asked for", d)
	}
}

func TestClientGivesUpBeforeDeadline(t *testing.T) {
	f := newFakeServer(t, "m1", "")
	f.fail = func(int) (int, http.Header, string) {
		return 429, http.Header{"Retry-After": {"10"}}, `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`
	}
	c := mustClient(t, &ClientOptions{BaseURL: f.baseURL(), Model: "m1", MaxBackoff: time.Minute})
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, err := c.Embed(ctx, []string{"x"})
	if err == nil || !strings.Contains(err.Error(), "deadline comes before the next retry") || !strings.Contains(err.Error(), "Rate limit reached") {
		t.Fatalf("error %v, want an early give-up naming the rate limit", err)
	}
	if c.Requests() != 1 {
		t.Errorf("%d requests, want 1", c.Requests())
	}
}

func TestClientServerDown(t *testing.T) {
	f := newFakeServer(t, "m1", "")
	url := f.baseURL()
	f.srv.Close()
	c := mustClient(t, &ClientOptions{BaseURL: url, Model: "m1", MaxRetries: 1})
	qs := &quickSleep{}
	c.sleep = qs.sleep
	_, err := c.Embed(context.Background(), []string{"x"})
	if err == nil || !strings.Contains(err.Error(), "is the server running") || !strings.Contains(err.Error(), EnvBaseURL) {
		t.Fatalf("error %v, want one saying how to configure the endpoint", err)
	}
	if c.Requests() != 2 {
		t.Errorf("%d requests, want 2 (network errors are retried)", c.Requests())
	}
}

func TestClientRejectsEmptyText(t *testing.T) {
	c := mustClient(t, &ClientOptions{BaseURL: "http://127.0.0.1:1/v1", Model: "m"})
	_, err := c.Embed(context.Background(), []string{"ok", "  "})
	if err == nil || !strings.Contains(err.Error(), "text 1 is empty") {
		t.Fatalf("error %v, want text 1 is empty", err)
	}
	if c.Requests() != 0 {
		t.Errorf("sent %d requests for invalid input", c.Requests())
	}
}

func TestClientFromEnv(t *testing.T) {
	f := newFakeServer(t, "m1", "sk-env")
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

	if _, err := ClientFromEnv(env(nil), nil); !errors.Is(err, ErrNotConfigured) {
		t.Errorf("no env: error %v, want ErrNotConfigured", err)
	}
	if !strings.Contains(ErrNotConfigured.Error(), EnvModel) || !strings.Contains(ErrNotConfigured.Error(), EnvBaseURL) {
		t.Errorf("ErrNotConfigured %q does not say what to set", ErrNotConfigured)
	}
	if _, err := ClientFromEnv(env(map[string]string{EnvBaseURL: f.baseURL()}), nil); err == nil || !strings.Contains(err.Error(), EnvModel) {
		t.Errorf("base URL without model: error %v, want one naming %s", err, EnvModel)
	}
	if _, err := ClientFromEnv(env(map[string]string{EnvModel: "m1", EnvBaseURL: "localhost:11434"}), nil); err == nil || !strings.Contains(err.Error(), "not an http(s) URL") {
		t.Errorf("bad base URL: error %v", err)
	}
	for _, keyVar := range []string{EnvAPIKey, EnvOpenAI} {
		c, err := ClientFromEnv(env(map[string]string{EnvModel: "m1", EnvBaseURL: f.baseURL(), keyVar: "sk-env"}), nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Embed(context.Background(), []string{"x"}); err != nil {
			t.Errorf("key from %s: %v", keyVar, err)
		}
	}
	c, err := ClientFromEnv(env(map[string]string{EnvModel: "text-embedding-3-small"}), nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.URL() != DefaultBaseURL+"/embeddings" {
		t.Errorf("default URL %q", c.URL())
	}
}
