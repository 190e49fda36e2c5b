package llm

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var testSchema = json.RawMessage(`{"type":"object","properties":{"goal":{"type":"string"}},"required":["goal"],"additionalProperties":false}`)

var testReq = Request{System: "You are a planner.", User: "Goal: ship it", Schema: testSchema, SchemaName: "plan"}

// fake is a local server that records each request and answers with the
// next scripted reply.
type fake struct {
	t       *testing.T
	mu      sync.Mutex
	replies []reply
	reqs    []*http.Request
	bodies  [][]byte
	srv     *httptest.Server
}

type reply struct {
	status int
	header map[string]string
	body   string
	block  bool // wait until the client gives up
}

func newFake(t *testing.T, replies ...reply) *fake {
	f := &fake{t: t, replies: replies}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		n := len(f.reqs)
		f.reqs = append(f.reqs, r)
		f.bodies = append(f.bodies, body)
		f.mu.Unlock()
		if n >= len(f.replies) {
			t.Errorf("unexpected request %d", n+1)
			w.WriteHeader(500)
			return
		}
		rp := f.replies[n]
		if rp.block {
			<-r.Context().Done()
			return
		}
		for k, v := range rp.header {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(rp.status)
		io.WriteString(w, rp.body)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fake) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.reqs)
}

// recordSleeps replaces c's sleep with one that records and returns at once.
func recordSleeps(c *client) *[]time.Duration {
	var waits []time.Duration
	c.sleep = func(ctx context.Context, d time.Duration) error {
		waits = append(waits, d)
		return ctx.Err()
	}
	return &waits
}

const oaOK = `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-4o-mini-2024-07-18",
"choices":[{"index":0,"message":{"role":"assistant","content":"{\"goal\":\"ship it\"}","refusal":null},"logprobs":null,"finish_reason":"stop"}],
"usage":{"prompt_tokens":31,"completion_tokens":7,"total_tokens":38}}`

func newOpenAI(t *testing.T, f *fake, key string) (*OpenAI, *[]time.Duration) {
	t.Helper()
	p, err := NewOpenAI(Config{BaseURL: f.srv.URL + "/v1/", Model: "gpt-4o-mini", APIKey: key})
	if err != nil {
		t.Fatal(err)
	}
	return p, recordSleeps(p.c)
}

func TestOpenAIRequestAndReply(t *testing.T) {
	f := newFake(t, reply{status: 200, body: oaOK, header: map[string]string{"x-request-id": "req_1"}})
	p, _ := newOpenAI(t, f, "sk-test")
	resp, err := p.Complete(context.Background(), testReq)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != `{"goal":"ship it"}` || resp.Model != "gpt-4o-mini-2024-07-18" || resp.InputTokens != 31 || resp.OutputTokens != 7 {
		t.Errorf("resp = %+v", resp)
	}
	if string(resp.Raw) != oaOK {
		t.Error("Raw is not the body as received")
	}
	r := f.reqs[0]
	if r.Method != "POST" || r.URL.Path != "/v1/chat/completions" {
		t.Errorf("%s %s", r.Method, r.URL.Path)
	}
	if got := r.Header.Get("Authorization"); got != "Bearer sk-test" {
		t.Errorf("Authorization = %q", got)
	}
	if got := r.Header.Get("Content-Type"); got != "application/json" {
		t.Errorf("Content-Type = %q", got)
	}
	var body struct {
		Model    string `json:"model"`
		Messages []struct {
			Role, Content string
		} `json:"messages"`
		ResponseFormat struct {
			Type       string `json:"type"`
			JSONSchema struct {
				Name   string          `json:"name"`
				Schema json.RawMessage `json:"schema"`
				Strict bool            `json:"strict"`
			} `json:"json_schema"`
		} `json:"response_format"`
	}
	if err := json.Unmarshal(f.bodies[0], &body); err != nil {
		t.Fatal(err)
	}
	if body.Model != "gpt-4o-mini" || len(body.Messages) != 2 ||
		body.Messages[0].Role != "system" || body.Messages[0].Content != testReq.System ||
		body.Messages[1].Role != "user" || body.Messages[1].Content != testReq.User {
		t.Errorf("body = %s", f.bodies[0])
	}
	rf := body.ResponseFormat
	if rf.Type != "json_schema" || rf.JSONSchema.Name != "plan" || !rf.JSONSchema.Strict || string(rf.JSONSchema.Schema) != string(testSchema) {
		t.Errorf("response_format = %+v", rf)
	}
	if strings.Contains(string(f.bodies[0]), "max_completion_tokens") {
		t.Error("max_completion_tokens sent without MaxTokens")
	}
}

func TestOpenAILocalServerNeedsNoKey(t *testing.T) {
	f := newFake(t, reply{status: 200, body: oaOK})
	p, _ := newOpenAI(t, f, "")
	if _, err := p.Complete(context.Background(), Request{User: "hi", MaxTokens: 100}); err != nil {
		t.Fatal(err)
	}
	if h := f.reqs[0].Header.Get("Authorization"); h != "" {
		t.Errorf("Authorization = %q, want none", h)
	}
	body := string(f.bodies[0])
	if strings.Contains(body, "response_format") || strings.Contains(body, `"system"`) || !strings.Contains(body, `"max_completion_tokens":100`) {
		t.Errorf("body = %s", body)
	}
}

func TestOpenAIErrors(t *testing.T) {
	tests := []struct {
		name    string
		reply   reply
		want    string
		status  int
		errType string
	}{
		{
			name:   "bad key",
			reply:  reply{status: 401, header: map[string]string{"x-request-id": "req_9"}, body: `{"error":{"message":"Incorrect API key provided: sk-***.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`},
			want:   "openai: HTTP 401 invalid_request_error (invalid_api_key): Incorrect API key provided: sk-***. [request req_9]; check the API key",
			status: 401, errType: "invalid_request_error",
		},
		{
			name:   "ollama unknown model",
			reply:  reply{status: 404, body: `{"error":{"message":"model \"llama9\" not found, try pulling it first","type":"api_error","param":null,"code":null}}`},
			want:   `openai: HTTP 404 api_error: model "llama9" not found, try pulling it first; check the base URL`,
			status: 404, errType: "api_error",
		},
		{
			name:   "string error",
			reply:  reply{status: 400, body: `{"error":"invalid format"}`},
			want:   "openai: HTTP 400: invalid format",
			status: 400,
		},
		{
			name:   "not json",
			reply:  reply{status: 400, body: `<html>Bad Request</html>`},
			want:   "openai: HTTP 400: <html>Bad Request</html>",
			status: 400,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, tt.reply)
			p, waits := newOpenAI(t, f, "k")
			_, err := p.Complete(context.Background(), testReq)
			var ae *APIError
			if !errors.As(err, &ae) {
				t.Fatalf("err = %v, want *APIError", err)
			}
			if !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("err = %q\nwant prefix %q", err, tt.want)
			}
			if ae.StatusCode != tt.status || ae.Type != tt.errType || string(ae.Body) != tt.reply.body || ae.Attempts != 1 {
				t.Errorf("APIError = %+v", ae)
			}
			if f.count() != 1 || len(*waits) != 0 {
				t.Errorf("a %d was retried", tt.status)
			}
		})
	}
}

func TestOpenAIBadReplies(t *testing.T) {
	tests := []struct{ name, body, want string }{
		{"refusal", `{"model":"m","choices":[{"message":{"content":null,"refusal":"I can't help with that."},"finish_reason":"stop"}]}`, "openai: the model refused: I can't help with that."},
		{"cut off", `{"model":"m","choices":[{"message":{"content":"{\"goal\":"},"finish_reason":"length"}],"usage":{"completion_tokens":4096}}`, "openai: the reply was cut off at the token limit (4096 tokens)"},
		{"no choices", `{"model":"m","choices":[]}`, "openai: the response has no choices"},
		{"empty", `{"model":"m","choices":[{"message":{"content":""},"finish_reason":"stop"}]}`, `openai: the reply is empty (finish_reason "stop")`},
		{"not json", `Service Unavailable`, "openai: reading the response of"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, reply{status: 200, body: tt.body})
			p, _ := newOpenAI(t, f, "k")
			resp, err := p.Complete(context.Background(), testReq)
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("err = %v, want prefix %q", err, tt.want)
			}
			if string(resp.Raw) != tt.body {
				t.Errorf("Raw = %q, want the body kept", resp.Raw)
			}
		})
	}
}

func TestRetryAfter429(t *testing.T) {
	rate := `{"error":{"message":"Rate limit reached for gpt-4o-mini","type":"requests","param":null,"code":"rate_limit_exceeded"}}`
	f := newFake(t,
		reply{status: 429, header: map[string]string{"retry-after": "2"}, body: rate},
		reply{status: 429, header: map[string]string{"retry-after-ms": "1500", "retry-after": "9"}, body: rate},
		reply{status: 200, body: oaOK})
	p, waits := newOpenAI(t, f, "k")
	if _, err := p.Complete(context.Background(), testReq); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]time.Duration{2 * time.Second, 1500 * time.Millisecond}, *waits); diff != "" {
		t.Errorf("waits (-want +got):\n%s", diff)
	}
	if f.count() != 3 {
		t.Errorf("%d requests", f.count())
	}
}

func TestRetry5xxThenSuccess(t *testing.T) {
	f := newFake(t,
		reply{status: 500, body: `{"error":{"message":"The server had an error while processing your request.","type":"server_error","param":null,"code":null}}`},
		reply{status: 503, body: `upstream connect error`},
		reply{status: 200, body: oaOK})
	p, waits := newOpenAI(t, f, "k")
	if _, err := p.Complete(context.Background(), testReq); err != nil {
		t.Fatal(err)
	}
	// Exponential backoff with up to 25% jitter: 0.5s, then 1s.
	if len(*waits) != 2 {
		t.Fatalf("waits = %v", *waits)
	}
	for i, base := range []time.Duration{500 * time.Millisecond, time.Second} {
		if w := (*waits)[i]; w < base || w > base+base/4 {
			t.Errorf("wait %d = %v, want %v..%v", i, w, base, base+base/4)
		}
	}
}

func TestRetriesExhausted(t *testing.T) {
	body := `{"error":{"message":"overloaded","type":"server_error","param":null,"code":null}}`
	f := newFake(t, reply{status: 502, body: body}, reply{status: 502, body: body}, reply{status: 502, body: body}, reply{status: 502, body: body})
	p, waits := newOpenAI(t, f, "k")
	_, err := p.Complete(context.Background(), testReq)
	var ae *APIError
	if !errors.As(err, &ae) || ae.Attempts != 4 || !strings.HasSuffix(err.Error(), "after 4 attempts") {
		t.Errorf("err = %v", err)
	}
	if f.count() != 4 || len(*waits) != 3 {
		t.Errorf("%d requests, %d waits", f.count(), len(*waits))
	}
}

func TestNoRetryWhenTold(t *testing.T) {
	f := newFake(t, reply{status: 500, header: map[string]string{"x-should-retry": "false"}, body: `{"error":{"message":"no","type":"server_error"}}`})
	p, _ := newOpenAI(t, f, "k")
	if _, err := p.Complete(context.Background(), testReq); err == nil || f.count() != 1 {
		t.Errorf("err = %v, %d requests", err, f.count())
	}
}

func TestRetryAfterTooLong(t *testing.T) {
	f := newFake(t, reply{status: 429, header: map[string]string{"retry-after": "3600"}, body: `{"error":{"message":"quota","type":"insufficient_quota"}}`})
	p, waits := newOpenAI(t, f, "k")
	_, err := p.Complete(context.Background(), testReq)
	if err == nil || !strings.Contains(err.Error(), "the server asks to wait 1h0m0s before retrying") || len(*waits) != 0 {
		t.Errorf("err = %v, waits %v", err, *waits)
	}
	var ae *APIError
	if !errors.As(err, &ae) || ae.StatusCode != 429 {
		t.Errorf("err = %v, want the APIError wrapped", err)
	}
}

func TestTimeout(t *testing.T) {
	f := newFake(t, reply{block: true})
	p, err := NewOpenAI(Config{BaseURL: f.srv.URL + "/v1", Model: "m", Timeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Complete(context.Background(), testReq)
	if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "no answer from "+f.srv.URL+"/v1/chat/completions within 50ms") {
		t.Errorf("err = %v", err)
	}
	if f.count() != 1 {
		t.Errorf("a timeout was retried: %d requests", f.count())
	}
}

func TestCancelWhileWaiting(t *testing.T) {
	f := newFake(t, reply{status: 429, header: map[string]string{"retry-after": "30"}, body: `{}`})
	p, err := NewOpenAI(Config{BaseURL: f.srv.URL, Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	p.c.sleep = func(ctx context.Context, d time.Duration) error { cancel(); return sleepCtx(ctx, d) }
	_, err = p.Complete(ctx, testReq)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v", err)
	}
}

func TestUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	p, err := NewOpenAI(Config{BaseURL: url + "/v1", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Complete(context.Background(), testReq)
	if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), "cannot reach "+url+"/v1/chat/completions") ||
		!strings.Contains(err.Error(), "CAPBROKER_LLM_BASE_URL") {
		t.Errorf("err = %v", err)
	}
}

const anOK = `{"id":"msg_01","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929",
"content":[{"type":"text","text":"Here is the plan."},{"type":"tool_use","id":"toolu_01","name":"plan","input":{"goal":"ship it"}}],
"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":120,"output_tokens":30}}`

func newAnthropic(t *testing.T, f *fake, base string) (*Anthropic, *[]time.Duration) {
	t.Helper()
	p, err := NewAnthropic(Config{BaseURL: f.srv.URL + base, APIKey: "sk-ant-test"})
	if err != nil {
		t.Fatal(err)
	}
	return p, recordSleeps(p.c)
}

func TestAnthropicRequestAndReply(t *testing.T) {
	f := newFake(t, reply{status: 200, body: anOK})
	p, _ := newAnthropic(t, f, "")
	resp, err := p.Complete(context.Background(), testReq)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != `{"goal":"ship it"}` || resp.Model != "claude-sonnet-4-5-20250929" || resp.InputTokens != 120 || resp.OutputTokens != 30 {
		t.Errorf("resp = %+v", resp)
	}
	r := f.reqs[0]
	if r.URL.Path != "/v1/messages" {
		t.Errorf("path %s", r.URL.Path)
	}
	for k, want := range map[string]string{"x-api-key": "sk-ant-test", "anthropic-version": "2023-06-01", "Content-Type": "application/json", "Authorization": ""} {
		if got := r.Header.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	var body struct {
		Model     string `json:"model"`
		MaxTokens int    `json:"max_tokens"`
		System    string `json:"system"`
		Messages  []struct {
			Role, Content string
		} `json:"messages"`
		Tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"input_schema"`
		} `json:"tools"`
		ToolChoice map[string]string `json:"tool_choice"`
	}
	if err := json.Unmarshal(f.bodies[0], &body); err != nil {
		t.Fatal(err)
	}
	if body.Model != DefaultAnthropicModel || body.MaxTokens != DefaultMaxTokens || body.System != testReq.System ||
		len(body.Messages) != 1 || body.Messages[0].Role != "user" || body.Messages[0].Content != testReq.User {
		t.Errorf("body = %s", f.bodies[0])
	}
	if len(body.Tools) != 1 || body.Tools[0].Name != "plan" || string(body.Tools[0].InputSchema) != string(testSchema) {
		t.Errorf("tools = %+v", body.Tools)
	}
	if diff := cmp.Diff(map[string]string{"type": "tool", "name": "plan"}, body.ToolChoice); diff != "" {
		t.Errorf("tool_choice (-want +got):\n%s", diff)
	}
}

func TestAnthropicBaseWithV1AndText(t *testing.T) {
	f := newFake(t, reply{status: 200, body: `{"type":"message","model":"m","content":[{"type":"text","text":"Hello"},{"type":"text","text":" world"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":2}}`})
	p, _ := newAnthropic(t, f, "/v1")
	resp, err := p.Complete(context.Background(), Request{User: "hi"})
	if err != nil || resp.Text != "Hello world" {
		t.Fatalf("resp %+v, err %v", resp, err)
	}
	if f.reqs[0].URL.Path != "/v1/messages" || strings.Contains(string(f.bodies[0]), "tools") {
		t.Errorf("%s %s", f.reqs[0].URL.Path, f.bodies[0])
	}
}

func TestAnthropicErrors(t *testing.T) {
	overloaded := `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_011"}`
	t.Run("529 then success", func(t *testing.T) {
		f := newFake(t, reply{status: 529, body: overloaded}, reply{status: 429, header: map[string]string{"retry-after": "1"},
			body: `{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}`},
			reply{status: 200, body: anOK})
		p, waits := newAnthropic(t, f, "")
		if _, err := p.Complete(context.Background(), testReq); err != nil {
			t.Fatal(err)
		}
		if len(*waits) != 2 || (*waits)[1] != time.Second {
			t.Errorf("waits %v", *waits)
		}
	})
	t.Run("invalid request", func(t *testing.T) {
		f := newFake(t, reply{status: 400, header: map[string]string{"request-id": "req_abc"},
			body: `{"type":"error","error":{"type":"invalid_request_error","message":"tools.0.input_schema: JSON schema is invalid"}}`})
		p, waits := newAnthropic(t, f, "")
		_, err := p.Complete(context.Background(), testReq)
		var ae *APIError
		if !errors.As(err, &ae) || ae.Type != "invalid_request_error" || ae.RequestID != "req_abc" || len(*waits) != 0 {
			t.Fatalf("err = %v", err)
		}
		if want := "anthropic: HTTP 400 invalid_request_error: tools.0.input_schema: JSON schema is invalid [request req_abc]"; err.Error() != want {
			t.Errorf("err = %q\nwant %q", err, want)
		}
	})
	t.Run("auth", func(t *testing.T) {
		f := newFake(t, reply{status: 401, body: `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"},"request_id":"req_x"}`})
		p, _ := newAnthropic(t, f, "")
		_, err := p.Complete(context.Background(), testReq)
		if err == nil || err.Error() != "anthropic: HTTP 401 authentication_error: invalid x-api-key [request req_x]; check the API key (OPENAI_API_KEY or ANTHROPIC_API_KEY)" {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("no tool call", func(t *testing.T) {
		f := newFake(t, reply{status: 200, body: `{"type":"message","model":"m","content":[{"type":"text","text":"I cannot plan that."}],"stop_reason":"end_turn"}`})
		p, _ := newAnthropic(t, f, "")
		_, err := p.Complete(context.Background(), testReq)
		if err == nil || !strings.Contains(err.Error(), `the model did not call the "plan" tool (stop_reason "end_turn", text "I cannot plan that.")`) {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("cut off", func(t *testing.T) {
		f := newFake(t, reply{status: 200, body: `{"type":"message","model":"m","content":[{"type":"tool_use","name":"plan","input":{}}],"stop_reason":"max_tokens"}`})
		p, _ := newAnthropic(t, f, "")
		_, err := p.Complete(context.Background(), testReq)
		if err == nil || !strings.Contains(err.Error(), "cut off at max_tokens (8192)") {
			t.Errorf("err = %v", err)
		}
	})
}

func TestNewNotConfigured(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"nothing", Config{}, "no LLM provider configured: set CAPBROKER_LLM=openai"},
		{"unknown", Config{Provider: "gemini"}, `unknown provider "gemini" (want openai, anthropic or replay)`},
		{"openai without key", Config{Provider: "openai"}, "OPENAI_API_KEY is not set"},
		{"local without model", Config{Provider: "openai", BaseURL: "http://localhost:11434/v1"}, "no model for http://localhost:11434/v1; set CAPBROKER_LLM_MODEL"},
		{"anthropic without key", Config{Provider: "anthropic"}, "ANTHROPIC_API_KEY is not set"},
		{"replay without path", Config{Provider: "replay"}, "set CAPBROKER_LLM_REPLAY"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.cfg)
			if !errors.Is(err, ErrNotConfigured) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v\nwant ErrNotConfigured containing %q", err, tt.want)
			}
		})
	}
}

func TestLoadConfig(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "capbroker.yaml")
	os.WriteFile(path, []byte("sources:\n  - tools.json\nllm:\n  provider: openai\n  base_url: http://localhost:11434/v1\n  model: llama3.1\n  timeout: 90s\n  max_retries: 0\n  replay: replies\n"), 0o644)
	env := map[string]string{"CAPBROKER_LLM_MODEL": "qwen2.5", "OPENAI_API_KEY": "sk-1", "ANTHROPIC_API_KEY": "nope"}
	cfg, err := LoadConfig(path, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	want := Config{Provider: "openai", BaseURL: "http://localhost:11434/v1", Model: "qwen2.5", APIKey: "sk-1",
		Timeout: 90 * time.Second, MaxRetries: -1, Replay: filepath.Join(dir, "replies")}
	if diff := cmp.Diff(want, cfg); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// The environment alone.
	env = map[string]string{"CAPBROKER_LLM": "Anthropic", "ANTHROPIC_API_KEY": "sk-ant", "CAPBROKER_LLM_TIMEOUT": "2m", "CAPBROKER_LLM_RETRIES": "5"}
	cfg, err = LoadConfig("", func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	want = Config{Provider: "anthropic", APIKey: "sk-ant", Timeout: 2 * time.Minute, MaxRetries: 5}
	if diff := cmp.Diff(want, cfg); diff != "" {
		t.Errorf("env only (-want +got):\n%s", diff)
	}
}

func TestLoadConfigErrors(t *testing.T) {
	tests := []struct{ name, file, want string }{
		{"unknown key", "llm:\n  provider: openai\n  modle: x\n", "capbroker.yaml:3: llm.modle: unknown setting (want provider, base_url, model, timeout, max_retries, replay, record)"},
		{"key in file", "llm:\n  api_key: sk-123\n", "capbroker.yaml:2: llm.api_key: keys are not read from files"},
		{"bad timeout", "llm:\n  timeout: soon\n", `capbroker.yaml:2: llm.timeout: "soon" is not a positive duration`},
		{"not a mapping", "llm: openai\n", "capbroker.yaml:1: llm: want a mapping"},
		{"list value", "llm:\n  model: [a, b]\n", "capbroker.yaml:2: llm.model: want a single value"},
		{"bad yaml", "llm:\n  model: a\n bad", "capbroker.yaml: yaml: line 2: did not find expected key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "capbroker.yaml")
			os.WriteFile(path, []byte(tt.file), 0o644)
			_, err := LoadConfig(path, func(string) string { return "" })
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v\nwant it to contain %q", err, tt.want)
			}
		})
	}
	if _, err := LoadConfig(filepath.Join(t.TempDir(), "missing.yaml"), nil); err == nil {
		t.Error("a missing file given explicitly is not an error")
	}
}

func TestReplayAndRecord(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	f := newFake(t, reply{status: 200, body: oaOK})
	real, _ := newOpenAI(t, f, "k")
	p, err := New(Config{Provider: "replay", Replay: dir})
	if err != nil {
		t.Fatal(err)
	}
	// Nothing recorded yet: the error names the file to write.
	_, err = p.Complete(ctx, testReq)
	want := filepath.Join(dir, Key(testReq)+".json")
	if !errors.Is(err, ErrNoReply) || !strings.Contains(err.Error(), "write the reply to "+want) {
		t.Fatalf("err = %v", err)
	}
	rec := &Recorder{Provider: real, Dir: dir}
	if _, err := rec.Complete(ctx, testReq); err != nil {
		t.Fatal(err)
	}
	resp, err := p.Complete(ctx, testReq)
	if err != nil || resp.Text != `{"goal":"ship it"}` {
		t.Fatalf("replay: %+v, %v", resp, err)
	}
	// A different request has a different key.
	other := testReq
	other.User = "Goal: ship it today"
	if Key(other) == Key(testReq) {
		t.Error("keys collide")
	}
	if _, err := p.Complete(ctx, other); !errors.Is(err, ErrNoReply) {
		t.Errorf("err = %v", err)
	}
	// A file answers every request.
	file := filepath.Join(t.TempDir(), "reply.json")
	os.WriteFile(file, []byte(`{"goal":"g"}`), 0o644)
	resp, err = (&Replay{Path: file}).Complete(ctx, other)
	if err != nil || resp.Text != `{"goal":"g"}` || string(resp.Raw) != `{"goal":"g"}` {
		t.Errorf("%+v, %v", resp, err)
	}
}
