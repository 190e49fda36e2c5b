package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// DefaultOpenAIBaseURL is OpenAI's API; Ollama serves the same API at
// http://localhost:11434/v1 and vLLM at http://localhost:8000/v1.
const DefaultOpenAIBaseURL = "https://api.openai.com/v1"

// OpenAI is a client of an OpenAI-compatible Chat Completions endpoint
// (OpenAI, Ollama, vLLM, LM Studio...). Structured output uses
// response_format {"type":"json_schema","json_schema":{"strict":true}}.
type OpenAI struct {
	c      *client
	url    string
	model  string
	apiKey string
}

var _ Provider = (*OpenAI)(nil)

// NewOpenAI returns a client for cfg's BaseURL (default
// DefaultOpenAIBaseURL), Model and APIKey (sent as a bearer token when
// set; local servers need none). It fails with ErrNotConfigured when
// the model is missing or OpenAI's own API is used without a key.
func NewOpenAI(cfg Config) (*OpenAI, error) {
	base := strings.TrimRight(cfg.BaseURL, "/")
	if base == "" {
		base = DefaultOpenAIBaseURL
	}
	model := cfg.Model
	if model == "" && base == DefaultOpenAIBaseURL {
		model = DefaultOpenAIModel
	}
	if model == "" {
		return nil, fmt.Errorf("%w: openai: no model for %s; set CAPBROKER_LLM_MODEL (or llm.model) to a model the server serves", ErrNotConfigured, base)
	}
	if cfg.APIKey == "" && base == DefaultOpenAIBaseURL {
		return nil, fmt.Errorf("%w: openai: OPENAI_API_KEY is not set (for a local OpenAI-compatible server, set CAPBROKER_LLM_BASE_URL instead)", ErrNotConfigured)
	}
	return &OpenAI{
		c:      newClient("openai", cfg.HTTPClient, cfg.Timeout, cfg.MaxRetries, parseOpenAIError),
		url:    base + "/chat/completions",
		model:  model,
		apiKey: cfg.APIKey,
	}, nil
}

// DefaultOpenAIModel is the model used with OpenAI's own API when none is set.
const DefaultOpenAIModel = "gpt-4o-mini"

type oaMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type oaRequest struct {
	Model               string      `json:"model"`
	Messages            []oaMessage `json:"messages"`
	ResponseFormat      *oaFormat   `json:"response_format,omitempty"`
	MaxCompletionTokens int         `json:"max_completion_tokens,omitempty"`
}

type oaFormat struct {
	Type       string        `json:"type"`
	JSONSchema *oaJSONSchema `json:"json_schema,omitempty"`
}

type oaJSONSchema struct {
	Name   string          `json:"name"`
	Schema json.RawMessage `json:"schema"`
	Strict bool            `json:"strict"`
}

type oaResponse struct {
	Model   string `json:"model"`
	Choices []struct {
		Message struct {
			Content *string `json:"content"`
			Refusal *string `json:"refusal"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
}

// Complete sends req as a chat completion.
func (p *OpenAI) Complete(ctx context.Context, req Request) (Response, error) {
	body := oaRequest{Model: p.model, MaxCompletionTokens: req.MaxTokens}
	if req.System != "" {
		body.Messages = append(body.Messages, oaMessage{Role: "system", Content: req.System})
	}
	body.Messages = append(body.Messages, oaMessage{Role: "user", Content: req.User})
	if len(req.Schema) > 0 {
		body.ResponseFormat = &oaFormat{Type: "json_schema", JSONSchema: &oaJSONSchema{
			Name: schemaName(req), Schema: req.Schema, Strict: true}}
	}
	data, err := json.Marshal(body)
	if err != nil {
		return Response{}, fmt.Errorf("openai: encoding the request: %w", err)
	}
	h := http.Header{}
	if p.apiKey != "" {
		h.Set("Authorization", "Bearer "+p.apiKey)
	}
	raw, _, err := p.c.post(ctx, p.url, h, data)
	if err != nil {
		return Response{}, err
	}
	var r oaResponse
	if err := json.Unmarshal(raw, &r); err != nil {
		return Response{Raw: raw}, fmt.Errorf("openai: reading the response of %s: %w (body: %s)", p.url, err, snippet(raw))
	}
	resp := Response{Raw: raw, Model: r.Model, InputTokens: r.Usage.PromptTokens, OutputTokens: r.Usage.CompletionTokens}
	if len(r.Choices) == 0 {
		return resp, fmt.Errorf("openai: the response has no choices (body: %s)", snippet(raw))
	}
	ch := r.Choices[0]
	if ch.Message.Refusal != nil && *ch.Message.Refusal != "" {
		return resp, fmt.Errorf("openai: the model refused: %s", *ch.Message.Refusal)
	}
	if ch.Message.Content != nil {
		resp.Text = *ch.Message.Content
	}
	switch ch.FinishReason {
	case "length":
		return resp, fmt.Errorf("openai: the reply was cut off at the token limit (%d tokens); raise the limit or ask for less", r.Usage.CompletionTokens)
	case "content_filter":
		return resp, errors.New("openai: the reply was withheld by the content filter")
	}
	if resp.Text == "" {
		return resp, fmt.Errorf("openai: the reply is empty (finish_reason %q)", ch.FinishReason)
	}
	return resp, nil
}

// parseOpenAIError reads {"error":{"message","type","param","code"}}.
// Servers that only claim compatibility send other shapes, such as
// Ollama's {"error":"message"}; those keep their text.
func parseOpenAIError(status int, h http.Header, body []byte) *APIError {
	e := &APIError{Provider: "openai", StatusCode: status, Body: body, RequestID: h.Get("x-request-id")}
	var env struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &env) == nil && len(env.Error) > 0 {
		var obj struct {
			Message string `json:"message"`
			Type    string `json:"type"`
			Code    any    `json:"code"`
		}
		var s string
		switch {
		case json.Unmarshal(env.Error, &obj) == nil:
			e.Message, e.Type = obj.Message, obj.Type
			if obj.Code != nil {
				e.Code = fmt.Sprint(obj.Code)
			}
		case json.Unmarshal(env.Error, &s) == nil:
			e.Message = s
		}
	}
	if e.Message == "" {
		e.Message = snippet(body)
		if e.Message == "" {
			e.Message = http.StatusText(status)
		}
	}
	return e
}

func schemaName(req Request) string {
	if req.SchemaName != "" {
		return req.SchemaName
	}
	return "reply"
}
