package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Request is one completion: a system message, a user message and,
// optionally, the JSON Schema the reply must match.
type Request struct {
	// System is the system message (may be empty).
	System string
	// User is the user message.
	User string
	// Schema, if set, is the JSON Schema of the reply: OpenAI-compatible
	// servers get it as a strict json_schema response format, Anthropic as
	// the input schema of a tool the model must call.
	Schema json.RawMessage
	// SchemaName names the schema (OpenAI's json_schema.name, the Anthropic
	// tool's name): letters, digits, '_' and '-'. If empty, "reply".
	SchemaName string
	// MaxTokens bounds the reply. If zero, the provider's default
	// (Anthropic requires one: DefaultMaxTokens; OpenAI-compatible servers
	// get none).
	MaxTokens int
}

// Response is a model's reply.
type Response struct {
	// Text is the reply. With a Schema it is the JSON document.
	Text string
	// Raw is the provider's response body as received (for a replay, the
	// recorded file).
	Raw []byte
	// Model is the model that answered, as the provider reported it.
	Model string
	// InputTokens and OutputTokens are the provider's usage counts, when
	// it reports them.
	InputTokens, OutputTokens int
}

// Provider completes requests. Implementations are safe for concurrent
// use. Complete returns an [*APIError] when the provider answered with an
// error, an error wrapping [ErrUnreachable] or [ErrTimeout] when it did
// not answer, and ctx.Err() when ctx ends first.
type Provider interface {
	Complete(ctx context.Context, req Request) (Response, error)
}

// Errors callers can branch on with errors.Is.
var (
	// ErrNotConfigured means no provider is configured, or one is
	// configured without what it needs (a key, a model). Its message
	// says how to configure one.
	ErrNotConfigured = errors.New("no LLM provider configured")
	// ErrUnreachable means the provider's server could not be reached.
	ErrUnreachable = errors.New("LLM provider unreachable")
	// ErrTimeout means the provider did not answer within the timeout.
	ErrTimeout = errors.New("LLM provider timed out")
	// ErrNoReply means a replay provider has no recorded reply for a request.
	ErrNoReply = errors.New("no recorded reply")
)

// configureHelp says how to configure a provider; it ends errors that a
// configuration change fixes.
const configureHelp = `set CAPBROKER_LLM=openai (OpenAI, or any OpenAI-compatible server such as Ollama or vLLM: ` +
	`CAPBROKER_LLM_BASE_URL=http://localhost:11434/v1 CAPBROKER_LLM_MODEL=llama3.1; key in OPENAI_API_KEY), ` +
	`CAPBROKER_LLM=anthropic (key in ANTHROPIC_API_KEY) or CAPBROKER_LLM=replay (CAPBROKER_LLM_REPLAY=a file or folder of recorded replies); ` +
	`the same settings may sit under "llm:" in capbroker.yaml (provider, base_url, model, timeout, max_retries, replay, record)`

// APIError is an error answer from a provider's API.
type APIError struct {
	// Provider is "openai" or "anthropic".
	Provider string
	// StatusCode is the HTTP status.
	StatusCode int
	// Type and Code classify the error as the provider does
	// ("invalid_request_error", "rate_limit_exceeded"...).
	Type, Code string
	// Message is the provider's explanation.
	Message string
	// RequestID is the provider's id of the request, for support.
	RequestID string
	// Body is the response body as received.
	Body []byte
	// Attempts is how many times the request was sent.
	Attempts int
}

func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: HTTP %d", e.Provider, e.StatusCode)
	if e.Type != "" {
		b.WriteString(" " + e.Type)
	}
	if e.Code != "" && e.Code != e.Type {
		b.WriteString(" (" + e.Code + ")")
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	if e.RequestID != "" {
		b.WriteString(" [request " + e.RequestID + "]")
	}
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " after %d attempts", e.Attempts)
	}
	switch e.StatusCode {
	case 401, 403:
		b.WriteString("; check the API key (OPENAI_API_KEY or ANTHROPIC_API_KEY)")
	case 404:
		b.WriteString("; check the base URL (CAPBROKER_LLM_BASE_URL) and the model name (CAPBROKER_LLM_MODEL)")
	}
	return b.String()
}

// Retryable reports whether the request may succeed if sent again: a rate
// limit (429) or a server error (5xx, including Anthropic's 529
// overloaded).
func (e *APIError) Retryable() bool {
	return e.StatusCode == 429 || e.StatusCode == 408 || e.StatusCode >= 500
}
