package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// Anthropic API settings.
const (
	DefaultAnthropicBaseURL = "https://api.anthropic.com"
	DefaultAnthropicModel   = "claude-sonnet-4-5"
	AnthropicVersion        = "2023-06-01"
)

// Anthropic is a client of Anthropic's Messages API. Structured output is
// a forced tool call: the request offers one tool whose input_schema is
// the reply's schema and makes the model call it; the tool's input is
// the reply.
type Anthropic struct {
	c      *client
	url    string
	model  string
	apiKey string
}

var _ Provider = (*Anthropic)(nil)

// NewAnthropic returns a client for cfg's BaseURL (default
// DefaultAnthropicBaseURL), Model (default DefaultAnthropicModel) and
// APIKey, which is required.
func NewAnthropic(cfg Config) (*Anthropic, error) {
	if cfg.APIKey == "" {
		return nil, fmt.Errorf("%w: anthropic: ANTHROPIC_API_KEY is not set", ErrNotConfigured)
	}
	base := strings.TrimRight(cfg.BaseURL, "/")
	if base == "" {
		base = DefaultAnthropicBaseURL
	}
	url := base + "/v1/messages"
	if strings.HasSuffix(base, "/v1") {
		url = base + "/messages"
	}
	model := cfg.Model
	if model == "" {
		model = DefaultAnthropicModel
	}
	return &Anthropic{
		c:      newClient("anthropic", cfg.HTTPClient, cfg.Timeout, cfg.MaxRetries, parseAnthropicError),
		url:    url,
		model:  model,
		apiKey: cfg.APIKey,
	}, nil
}

type anMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type anTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

type anToolChoice struct {
	Type string `json:"type"`
	Name string `json:"name"`
}

type anRequest struct {
	Model      string        `json:"model"`
	MaxTokens  int           `json:"max_tokens"`
	System     string        `json:"system,omitempty"`
	Messages   []anMessage   `json:"messages"`
	Tools      []anTool      `json:"tools,omitempty"`
	ToolChoice *anToolChoice `json:"tool_choice,omitempty"`
}

type anResponse struct {
	Model   string `json:"model"`
	Content []struct {
		Type  string          `json:"type"`
		Text  string          `json:"text"`
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
	} `json:"content"`
	StopReason string `json:"stop_reason"`
	Usage      struct {
		InputTokens  int `json:"input_tokens"`
		OutputTokens int `json:"output_tokens"`
	} `json:"usage"`
}

// Complete sends req as a message.
func (p *Anthropic) Complete(ctx context.Context, req Request) (Response, error) {
	body := anRequest{Model: p.model, MaxTokens: req.MaxTokens, System: req.System,
		Messages: []anMessage{{Role: "user", Content: req.User}}}
	if body.MaxTokens <= 0 {
		body.MaxTokens = DefaultMaxTokens
	}
	name := schemaName(req)
	if len(req.Schema) > 0 {
		body.Tools = []anTool{{Name: name, Description: "Record the reply. Its input is the complete answer, following the schema exactly.",
			InputSchema: req.Schema}}
		body.ToolChoice = &anToolChoice{Type: "tool", Name: name}
	}
	data, err := json.Marshal(body)
	if err != nil {
		return Response{}, fmt.Errorf("anthropic: encoding the request: %w", err)
	}
	h := http.Header{}
	h.Set("x-api-key", p.apiKey)
	h.Set("anthropic-version", AnthropicVersion)
	raw, _, err := p.c.post(ctx, p.url, h, data)
	if err != nil {
		return Response{}, err
	}
	var r anResponse
	if err := json.Unmarshal(raw, &r); err != nil {
		return Response{Raw: raw}, fmt.Errorf("anthropic: reading the response of %s: %w (body: %s)", p.url, err, snippet(raw))
	}
	resp := Response{Raw: raw, Model: r.Model, InputTokens: r.Usage.InputTokens, OutputTokens: r.Usage.OutputTokens}
	if r.StopReason == "max_tokens" {
		return resp, fmt.Errorf("anthropic: the reply was cut off at max_tokens (%d); raise the limit or ask for less", body.MaxTokens)
	}
	var text strings.Builder
	for _, c := range r.Content {
		switch {
		case len(req.Schema) > 0 && c.Type == "tool_use" && c.Name == name:
			resp.Text = string(c.Input)
			return resp, nil
		case c.Type == "text":
			text.WriteString(c.Text)
		}
	}
	if len(req.Schema) > 0 {
		return resp, fmt.Errorf("anthropic: the model did not call the %q tool (stop_reason %q, text %q)", name, r.StopReason, snippet([]byte(text.String())))
	}
	resp.Text = text.String()
	if resp.Text == "" {
		return resp, fmt.Errorf("anthropic: the reply is empty (stop_reason %q)", r.StopReason)
	}
	return resp, nil
}

// parseAnthropicError reads {"type":"error","error":{"type","message"}}.
func parseAnthropicError(status int, h http.Header, body []byte) *APIError {
	e := &APIError{Provider: "anthropic", StatusCode: status, Body: body, RequestID: h.Get("request-id")}
	var env struct {
		Type  string `json:"type"`
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
		RequestID string `json:"request_id"`
	}
	if json.Unmarshal(body, &env) == nil {
		e.Type, e.Message = env.Error.Type, env.Error.Message
		if e.RequestID == "" {
			e.RequestID = env.RequestID
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
