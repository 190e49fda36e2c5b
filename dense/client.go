package dense

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/capbroker/capbroker/internal/retry"
)

// Embedder turns texts into vectors.
//
// Embed returns one vector per text, in the order of texts, all of the
// same length. It must be safe for concurrent use. An error means no
// vector of the call can be trusted.
//
// Model names the model the vectors come from; vectors of different models
// are never compared or cached together.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	Model() string
}

// QueryEmbedder is an [Embedder] with a way of its own to embed search
// queries: the built-in encoder reads a query without its filler words,
// for a quarter less work. An [Index] embeds queries with EmbedQueries
// when its embedder has it, and cards always with Embed.
type QueryEmbedder interface {
	Embedder
	EmbedQueries(ctx context.Context, texts []string) ([][]float32, error)
}

// Environment variables read by [ClientFromEnv].
const (
	EnvBaseURL = "CAPBROKER_EMBED_BASE_URL"
	EnvModel   = "CAPBROKER_EMBED_MODEL"
	EnvAPIKey  = "CAPBROKER_EMBED_API_KEY"
	EnvOpenAI  = "OPENAI_API_KEY"
)

// DefaultBaseURL is the endpoint used when only a model is configured.
const DefaultBaseURL = "https://api.openai.com/v1"

// Client defaults.
const (
	DefaultBatchSize  = 128
	DefaultTimeout    = 30 * time.Second
	DefaultMaxRetries = 4
	DefaultMaxBackoff = 20 * time.Second
	DefaultParallel   = 2
	// MaxBatchSize is the OpenAI limit on inputs per request.
	MaxBatchSize = 2048
)

// configHelp says how to configure the endpoint; it ends errors that a
// configuration change can fix.
const configHelp = "set " + EnvBaseURL + " (e.g. http://localhost:11434/v1 for Ollama, " +
	"http://localhost:8000/v1 for vLLM, " + DefaultBaseURL + " for OpenAI), " +
	EnvModel + " (e.g. nomic-embed-text, text-embedding-3-small) and, if the server needs one, " +
	EnvAPIKey + " (or " + EnvOpenAI + ")"

// ErrNotConfigured is returned by [ClientFromEnv] when no embedding model
// is configured: dense ranking is off.
var ErrNotConfigured = errors.New("dense ranking is off: no embeddings endpoint configured; " + configHelp)

// ClientOptions configures a [Client]. Only Model is required.
type ClientOptions struct {
	// BaseURL is the OpenAI-compatible API root, usually ending in /v1;
	// requests go to BaseURL + "/embeddings". A URL that already ends in
	// /embeddings is used as is. If empty, DefaultBaseURL.
	BaseURL string `json:"base_url,omitempty" yaml:"base_url,omitempty"`
	// Model is the embedding model name the server knows.
	Model string `json:"model" yaml:"model"`
	// APIKey, if set, is sent as "Authorization: Bearer <key>".
	APIKey string `json:"-" yaml:"-"`
	// Dimensions, if positive, asks the model for vectors of this length
	// (OpenAI text-embedding-3 models support it). If zero, not sent.
	Dimensions int `json:"dimensions,omitempty" yaml:"dimensions,omitempty"`
	// BatchSize is the most texts sent in one request. If zero,
	// DefaultBatchSize; at most MaxBatchSize.
	BatchSize int `json:"batch_size,omitempty" yaml:"batch_size,omitempty"`
	// Parallel is how many requests of one Embed call may be in flight at
	// once. If zero, DefaultParallel.
	Parallel int `json:"parallel,omitempty" yaml:"parallel,omitempty"`
	// Timeout bounds each HTTP attempt. If zero, DefaultTimeout. The
	// caller's context bounds the whole call, retries included.
	Timeout time.Duration `json:"timeout,omitempty" yaml:"timeout,omitempty"`
	// MaxRetries is how many times a request is retried after a 429, a
	// 5xx or a network error. If zero, DefaultMaxRetries; negative means
	// never retry.
	MaxRetries int `json:"max_retries,omitempty" yaml:"max_retries,omitempty"`
	// MaxBackoff caps the wait between retries, including a server's
	// Retry-After. If zero, DefaultMaxBackoff.
	MaxBackoff time.Duration `json:"max_backoff,omitempty" yaml:"max_backoff,omitempty"`
	// HTTPClient sends the requests. If nil, a client with no overall
	// timeout (Timeout applies per attempt).
	HTTPClient *http.Client `json:"-" yaml:"-"`
}

// Client is an [Embedder] that calls an OpenAI-compatible /v1/embeddings
// endpoint: OpenAI, Ollama, vLLM, llama.cpp server, LiteLLM, and others.
// It is safe for concurrent use.
type Client struct {
	url      string
	o        ClientOptions
	requests atomic.Int64
	// sleep waits for d or until ctx is done; tests replace it.
	sleep func(ctx context.Context, d time.Duration) error
}

var _ Embedder = (*Client)(nil)

// NewClient returns a client for the endpoint opts describe.
func NewClient(opts *ClientOptions) (*Client, error) {
	if opts == nil || strings.TrimSpace(opts.Model) == "" {
		return nil, fmt.Errorf("embeddings client: no model given; %s", configHelp)
	}
	o := *opts
	o.Model = strings.TrimSpace(o.Model)
	if o.BaseURL == "" {
		o.BaseURL = DefaultBaseURL
	}
	u, err := url.Parse(strings.TrimSpace(o.BaseURL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("embeddings client: base URL %q is not an http(s) URL; %s", o.BaseURL, configHelp)
	}
	endpoint := strings.TrimRight(u.String(), "/")
	if !strings.HasSuffix(endpoint, "/embeddings") {
		endpoint += "/embeddings"
	}
	if o.BatchSize <= 0 {
		o.BatchSize = DefaultBatchSize
	}
	if o.BatchSize > MaxBatchSize {
		o.BatchSize = MaxBatchSize
	}
	if o.Parallel <= 0 {
		o.Parallel = DefaultParallel
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxRetries == 0 {
		o.MaxRetries = DefaultMaxRetries
	}
	if o.MaxRetries < 0 {
		o.MaxRetries = 0
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = DefaultMaxBackoff
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{}
	}
	return &Client{url: endpoint, o: o, sleep: sleepCtx}, nil
}

// ClientFromEnv builds a client from the environment, read through getenv
// (os.Getenv in a program):
//
//   - CAPBROKER_EMBED_MODEL turns dense ranking on and names the model;
//   - CAPBROKER_EMBED_BASE_URL is the API root (default DefaultBaseURL);
//   - CAPBROKER_EMBED_API_KEY, else OPENAI_API_KEY, is the bearer token.
//
// With no model set it returns ErrNotConfigured: dense ranking is off by
// default. A base URL or key without a model is a configuration mistake
// and gets an error that says so.
func ClientFromEnv(getenv func(string) string, opts *ClientOptions) (*Client, error) {
	var o ClientOptions
	if opts != nil {
		o = *opts
	}
	model := strings.TrimSpace(getenv(EnvModel))
	base := strings.TrimSpace(getenv(EnvBaseURL))
	if model == "" {
		if base != "" {
			return nil, fmt.Errorf("%s is set but %s is not: name the embedding model the server at %s serves", EnvBaseURL, EnvModel, base)
		}
		return nil, ErrNotConfigured
	}
	o.Model = model
	if base != "" {
		o.BaseURL = base
	}
	if k := getenv(EnvAPIKey); k != "" {
		o.APIKey = k
	} else if k := getenv(EnvOpenAI); k != "" {
		o.APIKey = k
	}
	return NewClient(&o)
}

// Model returns the model name, followed by "@<n>" when Dimensions asks
// for vectors of length n: vectors of one model name but different
// lengths are kept apart in the cache.
func (c *Client) Model() string {
	if c.o.Dimensions > 0 {
		return fmt.Sprintf("%s@%d", c.o.Model, c.o.Dimensions)
	}
	return c.o.Model
}

// URL returns the endpoint requests are sent to.
func (c *Client) URL() string { return c.url }

// Requests returns how many HTTP requests the client has sent, retries
// included.
func (c *Client) Requests() int64 { return c.requests.Load() }

// APIError is an error answer of the endpoint.
type APIError struct {
	// StatusCode is the HTTP status.
	StatusCode int
	// Message, Type and Code come from the OpenAI error body
	// {"error":{"message","type","code"}} when the server sent one.
	Message string
	Type    string
	Code    string
	// URL is the endpoint that answered.
	URL string
	// RetryAfter is the wait the server asked for (Retry-After or
	// retry-after-ms); HasRetryAfter says whether it asked.
	RetryAfter    time.Duration
	HasRetryAfter bool
}

func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "embeddings endpoint %s: HTTP %d", e.URL, e.StatusCode)
	if e.Message != "" {
		fmt.Fprintf(&b, ": %s", e.Message)
	}
	var tags []string
	if e.Type != "" {
		tags = append(tags, "type "+e.Type)
	}
	if e.Code != "" {
		tags = append(tags, "code "+e.Code)
	}
	if len(tags) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(tags, ", "))
	}
	switch {
	case e.StatusCode == http.StatusUnauthorized || e.StatusCode == http.StatusForbidden:
		b.WriteString("; check " + EnvAPIKey + " (or " + EnvOpenAI + ")")
	case e.StatusCode == http.StatusNotFound:
		b.WriteString("; check " + EnvBaseURL + " (it usually ends in /v1) and that " + EnvModel + " names a model the server has")
	}
	return b.String()
}

// Temporary reports whether retrying may help (429 or 5xx).
func (e *APIError) Temporary() bool {
	return e.StatusCode == http.StatusTooManyRequests || e.StatusCode >= 500
}

// Embed embeds texts in batches of at most BatchSize, up to Parallel
// requests at a time, retrying 429, 5xx and network errors with
// exponential backoff (honoring Retry-After). Empty texts are rejected:
// the OpenAI API does not accept them.
func (c *Client) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	for i, t := range texts {
		if strings.TrimSpace(t) == "" {
			return nil, fmt.Errorf("embedding: text %d is empty", i)
		}
	}
	out := make([][]float32, len(texts))
	if len(texts) == 0 {
		return out, nil
	}
	type batch struct{ lo, hi int }
	var batches []batch
	for lo := 0; lo < len(texts); lo += c.o.BatchSize {
		batches = append(batches, batch{lo, min(lo+c.o.BatchSize, len(texts))})
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu       sync.Mutex
		firstErr error
		wg       sync.WaitGroup
		next     atomic.Int64
	)
	workers := min(c.o.Parallel, len(batches))
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(batches) || ctx.Err() != nil {
					return
				}
				b := batches[i]
				vecs, err := c.embedBatch(ctx, texts[b.lo:b.hi])
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = fmt.Errorf("embedding texts %d-%d of %d: %w", b.lo, b.hi-1, len(texts), err)
					}
					mu.Unlock()
					cancel()
					return
				}
				copy(out[b.lo:b.hi], vecs)
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("embedding: %w", err)
	}
	dim := len(out[0])
	for i, v := range out {
		if len(v) != dim {
			return nil, fmt.Errorf("embedding: vector %d has %d dimensions, vector 0 has %d", i, len(v), dim)
		}
	}
	return out, nil
}

// request is the body of POST /embeddings.
type request struct {
	Model      string   `json:"model"`
	Input      []string `json:"input"`
	Dimensions int      `json:"dimensions,omitempty"`
}

// response is the body of a successful answer.
type response struct {
	Object string `json:"object"`
	Data   []struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
	Model string `json:"model"`
}

// embedBatch sends one request, retrying what may pass on a retry.
func (c *Client) embedBatch(ctx context.Context, texts []string) ([][]float32, error) {
	body, err := json.Marshal(request{Model: c.o.Model, Input: texts, Dimensions: c.o.Dimensions})
	if err != nil {
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		vecs, err := c.post(ctx, body, len(texts))
		if err == nil {
			return vecs, nil
		}
		if !retryable(err) || attempt >= c.o.MaxRetries || ctx.Err() != nil {
			if attempt > 0 {
				err = fmt.Errorf("after %d attempts: %w", attempt+1, err)
			}
			return nil, err
		}
		wait := backoff(attempt)
		var ae *APIError
		if errors.As(err, &ae) && ae.HasRetryAfter {
			wait = ae.RetryAfter
		}
		wait = min(wait, c.o.MaxBackoff)
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			return nil, fmt.Errorf("giving up: the deadline comes before the next retry in %v: %w", wait, err)
		}
		if serr := c.sleep(ctx, wait); serr != nil {
			return nil, fmt.Errorf("%w (while waiting to retry: %w)", err, serr)
		}
	}
}

// backoff is the wait before retry attempt+1: 0.5s, 1s, 2s, ... with
// jitter of up to a quarter.
func backoff(attempt int) time.Duration {
	d := 500 * time.Millisecond << min(attempt, 10)
	return d + time.Duration(rand.Int64N(int64(d/4)+1))
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// retryable reports whether err may pass on a retry.
func retryable(err error) bool {
	var ae *APIError
	if errors.As(err, &ae) {
		return ae.Temporary()
	}
	var ne netError
	return errors.As(err, &ne)
}

// netError marks a transport failure (refused, reset, attempt timeout).
type netError struct{ err error }

func (e netError) Error() string { return e.err.Error() }
func (e netError) Unwrap() error { return e.err }

// post sends one attempt.
func (c *Client) post(ctx context.Context, body []byte, n int) ([][]float32, error) {
	actx, cancel := context.WithTimeout(ctx, c.o.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if c.o.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.o.APIKey)
	}
	c.requests.Add(1)
	resp, err := c.o.HTTPClient.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, netError{fmt.Errorf("calling %s: %w; is the server running? %s", c.url, err, configHelp)}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, netError{fmt.Errorf("reading the answer of %s: %w", c.url, err)}
	}
	if resp.StatusCode != http.StatusOK {
		e := apiError(c.url, resp.StatusCode, data)
		e.RetryAfter, e.HasRetryAfter = retry.After(resp.Header)
		return nil, e
	}
	var r response
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("embeddings endpoint %s: answer is not an embeddings list: %w (starts %q)", c.url, err, snippet(data))
	}
	if len(r.Data) != n {
		return nil, fmt.Errorf("embeddings endpoint %s: sent %d inputs, got %d embeddings", c.url, n, len(r.Data))
	}
	vecs := make([][]float32, n)
	for _, d := range r.Data {
		if d.Index < 0 || d.Index >= n {
			return nil, fmt.Errorf("embeddings endpoint %s: embedding index %d out of range [0,%d)", c.url, d.Index, n)
		}
		if vecs[d.Index] != nil {
			return nil, fmt.Errorf("embeddings endpoint %s: embedding index %d given twice", c.url, d.Index)
		}
		if len(d.Embedding) == 0 {
			return nil, fmt.Errorf("embeddings endpoint %s: embedding %d is empty", c.url, d.Index)
		}
		for _, x := range d.Embedding {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return nil, fmt.Errorf("embeddings endpoint %s: embedding %d holds %v", c.url, d.Index, x)
			}
		}
		vecs[d.Index] = d.Embedding
	}
	return vecs, nil
}

// apiError reads an error answer: the OpenAI shape
// {"error":{"message","type","code"}}, a bare {"error":"..."} (Ollama),
// or any other body, quoted.
func apiError(u string, status int, data []byte) *APIError {
	e := &APIError{StatusCode: status, URL: u}
	var body struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(data, &body) == nil && len(body.Error) > 0 {
		var obj struct {
			Message string `json:"message"`
			Type    string `json:"type"`
			Code    any    `json:"code"`
		}
		var s string
		switch {
		case json.Unmarshal(body.Error, &obj) == nil && obj.Message != "":
			e.Message, e.Type = obj.Message, obj.Type
			if obj.Code != nil {
				e.Code = fmt.Sprint(obj.Code)
			}
		case json.Unmarshal(body.Error, &s) == nil:
			e.Message = s
		}
	}
	if e.Message == "" && len(bytes.TrimSpace(data)) > 0 {
		e.Message = fmt.Sprintf("%q", snippet(data))
	}
	return e
}

func snippet(data []byte) string {
	s := strings.TrimSpace(string(data))
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}
