package llm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Defaults of the HTTP providers.
const (
	DefaultTimeout    = 2 * time.Minute
	DefaultMaxRetries = 3
	DefaultMaxTokens  = 8192
	// MaxRetryWait is the longest wait a provider's retry-after may ask
	// for; a longer one ends the retries at once.
	MaxRetryWait = time.Minute
	// maxBody bounds a response body read into memory.
	maxBody = 32 << 20
)

// client sends JSON requests with a per-attempt timeout and retries on
// 429 and 5xx, honoring retry-after.
type client struct {
	provider   string
	http       *http.Client
	timeout    time.Duration
	maxRetries int
	// backoff is the wait before the first retry; it doubles each time.
	backoff time.Duration
	// sleep waits d or until ctx ends; tests replace it.
	sleep func(ctx context.Context, d time.Duration) error
	// parseError turns an error response into an APIError.
	parseError func(status int, h http.Header, body []byte) *APIError
}

func newClient(provider string, hc *http.Client, timeout time.Duration, maxRetries int,
	parseError func(int, http.Header, []byte) *APIError) *client {
	if hc == nil {
		hc = http.DefaultClient
	}
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	switch {
	case maxRetries == 0:
		maxRetries = DefaultMaxRetries
	case maxRetries < 0:
		maxRetries = 0
	}
	return &client{provider: provider, http: hc, timeout: timeout, maxRetries: maxRetries,
		backoff: 500 * time.Millisecond, sleep: sleepCtx, parseError: parseError}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// post sends body to url and returns the body of a 2xx response.
func (c *client) post(ctx context.Context, url string, header http.Header, body []byte) ([]byte, http.Header, error) {
	for attempt := 1; ; attempt++ {
		resp, h, err := c.once(ctx, url, header, body)
		if err == nil {
			return resp, h, nil
		}
		var apiErr *APIError
		if !errors.As(err, &apiErr) || !apiErr.Retryable() || attempt > c.maxRetries || h.Get("x-should-retry") == "false" {
			if apiErr != nil {
				apiErr.Attempts = attempt
			}
			return nil, h, err
		}
		wait, fromServer := retryAfter(h)
		if !fromServer {
			wait = c.backoff << (attempt - 1)
			wait += time.Duration(rand.Int64N(int64(wait)/4 + 1)) // jitter, up to +25%
		}
		if wait > MaxRetryWait {
			apiErr.Attempts = attempt
			return nil, h, fmt.Errorf("%w (the server asks to wait %s before retrying)", err, wait.Round(time.Second))
		}
		if err := c.sleep(ctx, wait); err != nil {
			return nil, h, fmt.Errorf("%s: waiting to retry: %w", c.provider, err)
		}
	}
}

// once sends one attempt.
func (c *client) once(ctx context.Context, url string, header http.Header, body []byte) ([]byte, http.Header, error) {
	actx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", c.provider, err)
	}
	req.Header = header.Clone()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, nil, c.transportErr(ctx, actx, url, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return nil, resp.Header, c.transportErr(ctx, actx, url, err)
	}
	if resp.StatusCode/100 != 2 {
		return nil, resp.Header, c.parseError(resp.StatusCode, resp.Header, data)
	}
	return data, resp.Header, nil
}

// transportErr explains a request that got no HTTP answer.
func (c *client) transportErr(ctx, actx context.Context, url string, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%s: %w", c.provider, ctx.Err())
	}
	if errors.Is(actx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("%s: %w: no answer from %s within %s (raise it with CAPBROKER_LLM_TIMEOUT or llm.timeout)",
			c.provider, ErrTimeout, url, c.timeout)
	}
	var op *net.OpError
	var dns *net.DNSError
	if errors.As(err, &op) || errors.As(err, &dns) {
		return fmt.Errorf("%s: %w: cannot reach %s: %v; start the server or point CAPBROKER_LLM_BASE_URL at one (%s)",
			c.provider, ErrUnreachable, url, errors.Unwrap(err), configureHelp)
	}
	return fmt.Errorf("%s: %w: %s: %v", c.provider, ErrUnreachable, url, err)
}

// retryAfter reads how long the server asks to wait: retry-after-ms,
// then retry-after in seconds or as an HTTP date.
func retryAfter(h http.Header) (time.Duration, bool) {
	if h == nil {
		return 0, false
	}
	if v := strings.TrimSpace(h.Get("retry-after-ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 {
			return time.Duration(ms * float64(time.Millisecond)), true
		}
	}
	v := strings.TrimSpace(h.Get("retry-after"))
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
		return time.Duration(s * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0), true
	}
	return 0, false
}

// snippet returns the start of a body for an error message.
func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}
