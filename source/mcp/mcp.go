package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/source/mcpconfig"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultTimeout bounds one server's connection and listing when
// [Options.Timeout] is zero.
const DefaultTimeout = 30 * time.Second

// DefaultMaxTools bounds the tools read from one server when
// [Options.MaxTools] is zero; a server that pages forever stops there
// with an error.
const DefaultMaxTools = 10000

// Metadata keys set on MCP tool cards.
const (
	MetaServer    = "server"       // server name
	MetaTransport = "transport"    // stdio, http or sse
	MetaTitle     = card.MetaTitle // the tool's display title
)

// Options configures [List]. A nil *Options uses the defaults.
type Options struct {
	// Timeout bounds connecting, initializing and listing; zero means
	// DefaultTimeout.
	Timeout time.Duration
	// Environ is the environment stdio servers take their variables from;
	// nil means os.Environ(). A server gets only the safe set
	// ([mcpconfig.SafeEnv]) and what its config names, unless InheritEnv.
	Environ []string
	// InheritEnv passes all of Environ to every stdio server.
	InheritEnv bool
	// HTTPClient is used for remote servers; nil means a client with no
	// timeout of its own (Timeout still applies).
	HTTPClient *http.Client
	// MaxTools stops a server that returns more tools; zero means
	// DefaultMaxTools.
	MaxTools int
	// Tokens holds the OAuth logins of remote servers (capbroker login):
	// a server with one is sent its token, refreshed when expired. Nil
	// means none.
	Tokens *TokenStore
}

// ClientName is the implementation name capbroker announces to servers.
const ClientName = "capbroker"

// List connects to s and returns a card per tool. On error no cards are
// returned; the error names the server and, for a stdio server, ends with
// what it wrote to stderr.
func List(ctx context.Context, s mcpconfig.Server, opts *Options) (cards []card.Card, err error) {
	if opts == nil {
		opts = &Options{}
	}
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	max := opts.MaxTools
	if max <= 0 {
		max = DefaultMaxTools
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	var stderr *tail
	var watch *AuthWatch
	defer func() {
		if err == nil {
			return
		}
		if aerr := watch.Explain(s.Name, s.URL, HasAuthorization(s.Headers), err); aerr != nil {
			err = aerr
		} else if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			err = fmt.Errorf("MCP server %s: no answer within %s: %w", s.Name, timeout, err)
		} else {
			err = fmt.Errorf("MCP server %s: %w", s.Name, err)
		}
		if stderr != nil {
			if t := stderr.String(); t != "" {
				err = fmt.Errorf("%w; its stderr ends: %s", err, t)
			}
		}
		// The error goes to reports, logs and the index: never with the
		// values of the server's ${VAR}s.
		if len(s.Secrets) > 0 {
			err = redacted{msg: s.Redact(err.Error()), err: err}
		}
	}()

	var transport sdk.Transport
	switch s.Transport {
	case mcpconfig.Stdio:
		cmd := exec.CommandContext(ctx, s.Command, s.Args...)
		env := opts.Environ
		if env == nil {
			env = os.Environ()
		}
		cmd.Env = mcpconfig.Environ(env, &s, opts.InheritEnv)
		cmd.Dir = s.Dir
		stderr = &tail{max: 2048}
		cmd.Stderr = stderr
		setProcessGroup(cmd)
		cmd.WaitDelay = 2 * time.Second
		transport = &sdk.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}
	case mcpconfig.HTTP, mcpconfig.SSE:
		if transport, watch, err = RemoteTransport(s, opts.HTTPClient, opts.Tokens, false); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("unknown transport %q", s.Transport)
	}

	client := sdk.NewClient(&sdk.Implementation{Name: ClientName, Version: "0"}, nil)
	session, err := client.Connect(ctx, transport, nil)
	if err != nil {
		return nil, fmt.Errorf("connecting: %w", err)
	}
	defer session.Close()
	for tool, err := range session.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("listing tools: %w", err)
		}
		if len(cards) >= max {
			return nil, fmt.Errorf("listing tools: more than %d tools", max)
		}
		if !s.ToolAllowed(tool.Name) { // includeTools, excludeTools, disabledTools
			continue
		}
		c, err := ToolCard(s, tool)
		if err != nil {
			return nil, err
		}
		cards = append(cards, c)
	}
	return cards, nil
}

// RemoteTransport returns the client transport of remote server s:
// streamable HTTP, or the legacy SSE transport (an event stream from
// s.URL, messages POSTed to the endpoint it names) when s.Transport is
// [mcpconfig.SSE]. Every request carries s.Headers ([HeaderTransport])
// and goes through the returned [AuthWatch], which explains a refusal.
// hc nil means a client with no timeout of its own. listen keeps the
// streamable transport's standalone stream open for server notifications
// (a long-lived session, such as the gateway's); discovery does not.
// tokens, if it holds a login for s (capbroker login) and s sets no
// Authorization header, adds its bearer token, refreshed when expired.
func RemoteTransport(s mcpconfig.Server, hc *http.Client, tokens *TokenStore, listen bool) (sdk.Transport, *AuthWatch, error) {
	if hc == nil {
		hc = &http.Client{}
	}
	c := *hc
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	if len(s.Headers) > 0 {
		base = HeaderTransport{Base: base, Headers: s.Headers}
	}
	signedIn := false
	if !HasAuthorization(s.Headers) {
		var err error
		if base, signedIn, err = tokens.Transport(s.Name, s.URL, base); err != nil {
			return nil, nil, err
		}
	}
	watch := &AuthWatch{Base: base, SignedIn: signedIn}
	c.Transport = watch
	if s.Transport == mcpconfig.SSE {
		t := &sdk.SSEClientTransport{Endpoint: s.URL, HTTPClient: &c}
		if listen {
			return longSSE{t}, watch, nil
		}
		return t, watch, nil
	}
	return &sdk.StreamableClientTransport{Endpoint: s.URL, HTTPClient: &c, MaxRetries: -1, DisableStandaloneSSE: !listen}, watch, nil
}

// longSSE is an SSE client transport whose event stream outlives the
// context of Connect: the SDK's opens the stream with that context, so a
// connection made under a start timeout would drop when the timeout's
// context is cancelled. The context still bounds connecting; closing the
// connection ends the stream.
type longSSE struct{ t *sdk.SSEClientTransport }

func (l longSSE) Connect(ctx context.Context) (sdk.Connection, error) {
	life, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, cancel)
	conn, err := l.t.Connect(life)
	if !stop() { // ctx ended while connecting
		cancel()
		if err == nil {
			conn.Close()
			err = ctx.Err()
		}
		return nil, err
	}
	if err != nil {
		cancel()
		return nil, err
	}
	return closing{conn, cancel}, nil
}

// closing is a connection that cancels its stream's context when closed.
type closing struct {
	sdk.Connection
	cancel context.CancelFunc
}

func (c closing) Close() error {
	err := c.Connection.Close()
	c.cancel()
	return err
}

// ToolCard turns one listed tool of server s into a card, named
// server__tool, with its digest computed. The MCP gateway uses it so the
// digests it pins are the ones discovery pins.
func ToolCard(s mcpconfig.Server, t *sdk.Tool) (card.Card, error) {
	if strings.TrimSpace(t.Name) == "" {
		return card.Card{}, fmt.Errorf("listing tools: a tool has no name")
	}
	c := card.Card{
		Name:         card.Namespaced(s.Name, t.Name),
		OriginalName: t.Name,
		Kind:         card.KindTool,
		Source:       s.Name,
		Description:  t.Description,
		Path:         s.File,
		Meta:         map[string]string{MetaServer: s.Name, MetaTransport: s.Transport},
	}
	if t.InputSchema != nil {
		raw, err := json.Marshal(t.InputSchema)
		if err != nil {
			return card.Card{}, fmt.Errorf("tool %s: encoding input schema: %w", t.Name, err)
		}
		c.InputSchema = raw
	}
	if t.Annotations != nil {
		raw, err := json.Marshal(t.Annotations)
		if err != nil {
			return card.Card{}, fmt.Errorf("tool %s: encoding annotations: %w", t.Name, err)
		}
		if string(raw) != "{}" {
			c.Annotations = raw
		}
	}
	title := t.Title
	if title == "" && t.Annotations != nil {
		title = t.Annotations.Title
	}
	if title != "" {
		c.Meta[MetaTitle] = title
	}
	if c.Description == "" {
		c.Description = title
	}
	c.ResolveRisk()
	c.Digest = c.ComputeDigest()
	return c, nil
}

// redacted is an error whose text has the server's secrets hidden; it
// still unwraps to the original, for errors.Is.
type redacted struct {
	msg string
	err error
}

func (r redacted) Error() string { return r.msg }
func (r redacted) Unwrap() error { return r.err }

// HeaderTransport adds configured headers to every request.
type HeaderTransport struct {
	Base    http.RoundTripper
	Headers map[string]string
}

// RoundTrip sends r with the headers set.
func (h HeaderTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(h.Headers) > 0 {
		r = r.Clone(r.Context())
		for k, v := range h.Headers {
			r.Header.Set(k, v)
		}
	}
	return h.Base.RoundTrip(r)
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

var _ io.Writer = (*tail)(nil)

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = t.buf[len(t.buf)-t.max:]
	}
	return len(p), nil
}

// String returns the kept bytes on one line.
func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.Join(strings.Fields(strings.ToValidUTF8(string(t.buf), "?")), " ")
}
