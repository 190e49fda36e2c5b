package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	srcmcp "github.com/capbroker/capbroker/source/mcp"
	"github.com/capbroker/capbroker/source/mcpconfig"
)

// upstreamProtocol is the protocol revision the gateway asks its upstreams
// for: the newest one with the initialize handshake, which every SDK in use
// today speaks and which lets upstreams send requests (sampling,
// elicitation) back through the gateway.
const upstreamProtocol = "2025-11-25"

// ErrUpstreamDown is returned (wrapped) by calls to an upstream that is not
// connected, while it is being restarted.
var ErrUpstreamDown = errors.New("upstream not connected")

// listing is what an upstream offers, as last listed.
type listing struct {
	tools     []*mcp.Tool
	prompts   []*mcp.Prompt
	resources []*mcp.Resource
	templates []*mcp.ResourceTemplate
	caps      *mcp.ServerCapabilities
}

// call is a request in flight from a downstream session to an upstream;
// requests and notifications the upstream sends while it runs are routed
// back to that session, in the context of the request.
type call struct {
	id    uint64
	ctx   context.Context
	ss    *mcp.ServerSession
	token any // the downstream client's progress token, if any
}

// hooks is how an upstream reports to the gateway.
type hooks interface {
	// changed is called after the upstream's listing changed (connect,
	// list_changed, restart).
	changed(u *upstream)
	// resourceUpdated forwards notifications/resources/updated.
	resourceUpdated(ctx context.Context, u *upstream, p *mcp.ResourceUpdatedNotificationParams)
	// broadcastLog forwards a log message that belongs to no call.
	broadcastLog(ctx context.Context, u *upstream, p *mcp.LoggingMessageParams)
}

// upstream is one MCP server the gateway fronts. It keeps one connection
// open, restarting it with exponential backoff when it drops, and routes
// what the server sends back to the downstream call that caused it.
type upstream struct {
	cfg     ServerConfig
	opts    *Options
	hooks   hooks
	log     *slog.Logger
	client  *mcp.Client
	http    *http.Client // a remote upstream's: upstreamHTTPClient with an eventTap
	timeout time.Duration

	mu       sync.Mutex
	cs       *mcp.ClientSession
	ready    chan struct{} // closed while cs is usable; replaced when it drops
	lastErr  error
	restarts int
	// failures counts the attempts to connect that failed since the last
	// success; retryAt is when the next attempt starts (zero while one
	// runs or the upstream is connected). See session.
	failures int
	retryAt  time.Time
	failed   chan struct{} // closed when an attempt fails; then replaced
	list     listing
	// truncated says which listings a bound cut short, "" if none.
	truncated string
	calls     map[uint64]*call
	subs      map[string]int // resource URI -> downstream subscriptions
	// logs are the log messages of no call waiting to go to every
	// session, in order, on a goroutine while broadcasting (see
	// broadcast); dropped counts those a full queue refused.
	logs         []*mcp.LoggingMessageParams
	broadcasting bool
	dropped      int

	nextID   atomic.Uint64
	redactor *mcpconfig.Redactor // hides the config's ${VAR} values
}

func newUpstream(cfg ServerConfig, opts *Options, h hooks) *upstream {
	u := &upstream{
		cfg: cfg, opts: opts, hooks: h,
		log:      redactLogger(opts.Logger, cfg.Secrets).With("upstream", cfg.Name),
		timeout:  cfg.Timeout,
		ready:    make(chan struct{}),
		failed:   make(chan struct{}),
		calls:    map[uint64]*call{},
		subs:     map[string]int{},
		redactor: mcpconfig.NewRedactor(cfg.Secrets...),
	}
	if u.timeout <= 0 {
		u.timeout = opts.CallTimeout
	}
	u.http = &http.Client{Transport: tapEvents{upstreamHTTPClient.Transport, u.seeNow}}
	u.client = mcp.NewClient(&mcp.Implementation{Name: "capbroker-gateway", Version: Version}, &mcp.ClientOptions{
		CreateMessageHandler: u.onCreateMessage,
		ElicitationHandler:   u.onElicit,
		Capabilities: &mcp.ClientCapabilities{
			Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}},
		},
		ElicitationCompleteHandler: u.onElicitationComplete,
		ToolListChangedHandler:     func(ctx context.Context, _ *mcp.ToolListChangedRequest) { u.relist(ctx) },
		PromptListChangedHandler:   func(ctx context.Context, _ *mcp.PromptListChangedRequest) { u.relist(ctx) },
		ResourceListChangedHandler: func(ctx context.Context, _ *mcp.ResourceListChangedRequest) { u.relist(ctx) },
		ResourceUpdatedHandler: func(ctx context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
			u.hooks.resourceUpdated(ctx, u, r.Params)
		},
		// Log and progress notifications are forwarded as they are read,
		// not by handlers: see seeNow.
	})
	// Forward elicitation requests as they came: the SDK's own checks of
	// the requested schema would refuse schemas the client may accept.
	u.client.AddSendingMiddleware(u.traceClient)
	u.client.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if r, ok := req.(*mcp.ElicitRequest); ok && method == "elicitation/create" {
				return u.onElicit(ctx, r)
			}
			return next(ctx, method, req)
		}
	})
	return u
}

// run keeps the upstream connected until ctx is done. firstDone is closed
// after the first connection attempt, whatever its outcome.
func (u *upstream) run(ctx context.Context, firstDone chan<- struct{}) {
	backoff := u.opts.MinBackoff
	first := true
	for {
		started := time.Now()
		u.mu.Lock()
		u.retryAt = time.Time{}
		u.mu.Unlock()
		cs, err := u.connect(ctx)
		if err == nil {
			err = u.relistSession(ctx, cs)
			if err != nil {
				cs.Close()
			}
		}
		// The first attempt's outcome is recorded before firstDone closes,
		// so whoever waits on it (the gateway's start) sees the upstream
		// connected or its error, never a half-set state.
		if err != nil {
			if ctx.Err() != nil {
				if first {
					close(firstDone)
				}
				return
			}
			err = u.redactErr(err)
			u.mu.Lock()
			u.lastErr = err
			u.failures++
			u.retryAt = time.Now().Add(backoff)
			close(u.failed)
			u.failed = make(chan struct{})
			u.mu.Unlock()
			if first {
				first = false
				close(firstDone)
			}
			u.log.Warn("upstream unavailable; retrying", "error", err, "retry_in", backoff)
			u.opts.Metrics.upstreamUp(u.cfg.Name, false)
		} else {
			u.mu.Lock()
			u.cs = cs
			u.lastErr = nil
			u.failures = 0
			close(u.ready)
			u.mu.Unlock()
			if first {
				first = false
				close(firstDone)
			}
			u.opts.Metrics.upstreamUp(u.cfg.Name, true)
			u.resubscribe(ctx, cs)
			u.log.Info("upstream connected", "transport", u.cfg.Transport(), "tools", len(u.listing().tools))
			u.hooks.changed(u)

			done := make(chan error, 1)
			go func() { done <- cs.Wait() }()
			select {
			case <-ctx.Done():
				cs.Close()
				return
			case werr := <-done:
				if time.Since(started) > u.opts.MaxBackoff {
					backoff = u.opts.MinBackoff // it ran a while: restart soon
				}
				u.mu.Lock()
				if u.cs == cs {
					u.cs = nil
					u.ready = make(chan struct{})
				}
				u.restarts++
				u.retryAt = time.Now().Add(backoff)
				u.lastErr = u.redactErr(fmt.Errorf("connection lost: %v", orClosed(werr)))
				lost := u.lastErr
				u.mu.Unlock()
				u.opts.Metrics.upstreamUp(u.cfg.Name, false)
				u.opts.Metrics.restart(u.cfg.Name)
				u.log.Warn("upstream connection lost; restarting", "error", lost, "retry_in", backoff)
			}
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		backoff = min(2*backoff, u.opts.MaxBackoff)
	}
}

func orClosed(err error) error {
	if err == nil {
		return errors.New("the server closed the connection")
	}
	return err
}

// connect opens a new session with the upstream, bounded by the start
// timeout.
func (u *upstream) connect(ctx context.Context) (*mcp.ClientSession, error) {
	ctx, cancel := context.WithTimeout(ctx, u.opts.StartTimeout)
	defer cancel()
	var t mcp.Transport
	var stderr *lineLogger      // a stdio server's
	var watch *srcmcp.AuthWatch // says when a remote server wants a sign-in
	if u.cfg.URL != "" {
		tr := mcpconfig.HTTP
		if u.cfg.SSE {
			tr = mcpconfig.SSE
		}
		var err error
		if t, watch, err = srcmcp.RemoteTransport(mcpconfig.Server{Name: u.cfg.Name, Transport: tr, URL: u.cfg.URL, Headers: u.cfg.Headers}, u.http, u.opts.Tokens, true); err != nil {
			return nil, err
		}
	} else {
		cmd := exec.Command(u.cfg.Command, u.cfg.Args...)
		cmd.Dir = u.cfg.Dir
		cmd.Env = mcpconfig.Environ(os.Environ(), &mcpconfig.Server{Env: u.cfg.Env, InheritEnv: u.cfg.InheritEnv, InheritVars: u.cfg.InheritVars}, u.opts.InheritEnv)
		stderr = &lineLogger{log: u.log, redact: u.redact}
		cmd.Stderr = stderr
		t = orderedTransport{&mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, u.seeNow}
	}
	cs, err := u.client.Connect(ctx, t, &mcp.ClientSessionOptions{ProtocolVersion: upstreamProtocol})
	if err != nil {
		if aerr := watch.Explain(u.cfg.Name, u.describe(), srcmcp.HasAuthorization(u.cfg.Headers), err); aerr != nil {
			return nil, aerr
		}
		if said := stderr.tail(); said != "" {
			// A server that exits while starting usually says why there.
			return nil, fmt.Errorf("connecting to %s: %w (its stderr: %q)", u.describe(), err, said)
		}
		return nil, fmt.Errorf("connecting to %s: %w", u.describe(), err)
	}
	if caps := cs.InitializeResult().Capabilities; caps != nil && caps.Logging != nil {
		// Receive everything; each downstream session filters by its own level.
		if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
			u.log.Debug("setting the upstream log level", "error", err)
		}
	}
	return cs, nil
}

func (u *upstream) describe() string {
	if u.cfg.URL != "" {
		return u.redact(u.cfg.URL)
	}
	return u.redact(strings.Join(append([]string{u.cfg.Command}, u.cfg.Args...), " "))
}

// redact shows the config's ${VAR} values as ${VAR}.
func (u *upstream) redact(s string) string { return u.redactor.Redact(s) }

// redactErr returns err with its text redacted, still unwrapping to err.
func (u *upstream) redactErr(err error) error {
	if err == nil {
		return nil
	}
	if msg := err.Error(); u.redact(msg) != msg {
		return redactedError{msg: u.redact(msg), err: err}
	}
	return err
}

type redactedError struct {
	msg string
	err error
}

func (r redactedError) Error() string { return r.msg }
func (r redactedError) Unwrap() error { return r.err }

// relist re-reads the listing after a list_changed notification.
func (u *upstream) relist(ctx context.Context) {
	u.mu.Lock()
	cs := u.cs
	u.mu.Unlock()
	if cs == nil {
		return
	}
	go func() {
		// Out of the notification handler: listing is a request whose answer
		// is read by the same connection.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), u.timeout)
		defer cancel()
		if err := u.relistSession(ctx, cs); err != nil {
			u.log.Warn("re-listing after list_changed", "error", err)
			return
		}
		u.hooks.changed(u)
	}()
}

// relistSession lists everything cs offers and stores it.
func (u *upstream) relistSession(ctx context.Context, cs *mcp.ClientSession) error {
	ctx, cancel := context.WithTimeout(ctx, u.opts.StartTimeout)
	defer cancel()
	var l listing
	l.caps = cs.InitializeResult().Capabilities
	if l.caps == nil {
		l.caps = &mcp.ServerCapabilities{}
	}
	// Each listing is bounded (Options.MaxListItems, MaxListPages): a
	// server that pages forever is read once, up to the bound.
	maxItems, maxPages := u.opts.MaxListItems, u.opts.MaxListPages
	var notes []string
	note := func(n string) {
		if n != "" {
			notes = append(notes, n)
		}
	}
	var (
		err error
		n   string
	)
	if l.caps.Tools != nil {
		if l.tools, n, err = listPaged(ctx, "tools", maxItems, maxPages, pageTools(cs)); err != nil {
			return fmt.Errorf("listing tools: %w", err)
		}
		note(n)
		// includeTools, excludeTools, disabledTools: a tool left out is
		// neither listed nor callable through the gateway.
		filter := mcpconfig.Server{IncludeTools: u.cfg.IncludeTools, ExcludeTools: u.cfg.ExcludeTools}
		l.tools = slices.DeleteFunc(l.tools, func(t *mcp.Tool) bool { return !filter.ToolAllowed(t.Name) })
	}
	if l.caps.Prompts != nil {
		if l.prompts, n, err = listPaged(ctx, "prompts", maxItems, maxPages, pagePrompts(cs)); err != nil {
			return fmt.Errorf("listing prompts: %w", err)
		}
		note(n)
	}
	if l.caps.Resources != nil {
		if l.resources, n, err = listPaged(ctx, "resources", maxItems, maxPages, pageResources(cs)); err != nil {
			return fmt.Errorf("listing resources: %w", err)
		}
		note(n)
		if l.templates, n, err = listPaged(ctx, "resource templates", maxItems, maxPages, pageTemplates(cs)); err != nil {
			// Some servers offer resources without templates.
			u.log.Debug("listing resource templates", "error", err)
		}
		note(n)
	}
	truncated := strings.Join(notes, "; ")
	if truncated != "" {
		u.log.Warn("upstream listing cut short", "note", truncated)
	}
	u.mu.Lock()
	u.list, u.truncated = l, truncated
	u.mu.Unlock()
	return nil
}

func (u *upstream) listing() listing {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.list
}

// Status is the state of one upstream, for status reports.
type Status struct {
	Name      string `json:"name"`
	Transport string `json:"transport"`
	Connected bool   `json:"connected"`
	Tools     int    `json:"tools"`
	Restarts  int    `json:"restarts"`
	Error     string `json:"error,omitempty"`
	// Truncated says which of its listings a bound cut short.
	Truncated string `json:"truncated,omitempty"`
}

func (u *upstream) status() Status {
	u.mu.Lock()
	defer u.mu.Unlock()
	s := Status{Name: u.cfg.Name, Transport: u.cfg.Transport(), Connected: u.cs != nil, Tools: len(u.list.tools), Restarts: u.restarts, Truncated: u.truncated}
	if u.lastErr != nil {
		s.Error = u.lastErr.Error()
	}
	return s
}

// restartWait is how far off the next attempt to start a down upstream
// may be for a call to wait for it: a restart after a crash comes after
// MinBackoff (200 ms), a flapping server's after up to MaxBackoff.
const restartWait = 10 * time.Second

// session returns the upstream's connection. A call to an upstream that
// is down waits for it while an attempt to start it runs (bounded by
// StartTimeout) or is due within restartWait, until ctx is done. One
// that failed to start twice in a row, or whose next attempt is further
// off, fails the call at once, saying why and when it is tried again,
// rather than holding it for the whole call timeout.
func (u *upstream) session(ctx context.Context) (*mcp.ClientSession, error) {
	until := time.Now().Add(restartWait)
	for {
		u.mu.Lock()
		cs, ready, failed, failures, retryAt := u.cs, u.ready, u.failed, u.failures, u.retryAt
		u.mu.Unlock()
		if cs != nil {
			return cs, nil
		}
		// retryAt is zero while an attempt runs: wait for its outcome.
		if !retryAt.IsZero() && (failures >= 2 || retryAt.After(until)) {
			return nil, u.downErr()
		}
		select {
		case <-ready:
		case <-failed:
		case <-ctx.Done():
			return nil, u.downErr()
		}
	}
}

// downErr says why the upstream is down: ErrUpstreamDown, with its last
// error and, after failed attempts, how many and when the next is due
// (or that one is under way).
func (u *upstream) downErr() error {
	u.mu.Lock()
	lastErr, failures, retryAt := u.lastErr, u.failures, u.retryAt
	u.mu.Unlock()
	next := "another attempt is under way"
	if !retryAt.IsZero() {
		next = "next attempt in " + max(0, time.Until(retryAt)).Round(100*time.Millisecond).String()
	}
	switch {
	case failures > 0:
		tried := "its attempt to start failed"
		if failures > 1 {
			tried = fmt.Sprintf("%d attempts to start it failed, the last", failures)
		}
		return fmt.Errorf("%w: %s: %s: %v; %s", ErrUpstreamDown, u.cfg.Name, tried, lastErr, next)
	case lastErr != nil:
		return fmt.Errorf("%w: %s: %v; %s", ErrUpstreamDown, u.cfg.Name, lastErr, next)
	}
	return fmt.Errorf("%w: %s: %s", ErrUpstreamDown, u.cfg.Name, next)
}

// begin registers a call in flight from ss; the returned func ends it.
func (u *upstream) begin(ctx context.Context, ss *mcp.ServerSession, token any) (*call, func()) {
	c := &call{id: u.nextID.Add(1), ctx: ctx, ss: ss, token: token}
	u.mu.Lock()
	u.calls[c.id] = c
	u.mu.Unlock()
	return c, func() {
		u.mu.Lock()
		delete(u.calls, c.id)
		u.mu.Unlock()
	}
}

// route returns the call that a request or notification from the upstream
// belongs to: the latest call in flight whose session can take it. The
// protocol does not tie a server's requests to the call that caused them,
// so when calls from several client sessions that could take it are in
// flight, route returns nil and the number of those sessions: asking the
// wrong client would show one user's request to another (a sampling
// request carries the upstream's prompt, an elicitation its question).
// Calls of one session alone are never ambiguous.
func (u *upstream) route(accept func(*mcp.ServerSession) bool) (_ *call, sessions int) {
	u.mu.Lock()
	defer u.mu.Unlock()
	var best *call
	var seen []*mcp.ServerSession // few: the sessions with calls in flight here
	for _, c := range u.calls {
		if accept != nil && !accept(c.ss) {
			continue
		}
		if !slices.Contains(seen, c.ss) {
			seen = append(seen, c.ss)
		}
		if best == nil || c.id > best.id {
			best = c
		}
	}
	if len(seen) > 1 {
		return nil, len(seen)
	}
	return best, len(seen)
}

// errAmbiguous says why a request from upstream u was not forwarded.
func (u *upstream) errAmbiguous(what string, sessions int) error {
	return fmt.Errorf("capbroker gateway: %s asked for %s while calls from %d client sessions were in flight; MCP does not say which call a request belongs to, so the gateway refuses rather than ask the wrong client", u.cfg.Name, what, sessions)
}

// progressToken is the token the gateway sends upstream for call id.
func progressToken(upstream string, id uint64) string {
	return fmt.Sprintf("capbroker:%s:%d", upstream, id)
}

// onProgress forwards a progress notification to the call whose token it
// carries, with the client's own token.
func (u *upstream) onProgress(r *mcp.ProgressNotificationParams) {
	u.mu.Lock()
	var c *call
	for _, x := range u.calls {
		if x.token != nil && progressToken(u.cfg.Name, x.id) == fmt.Sprint(r.ProgressToken) {
			c = x
			break
		}
	}
	u.mu.Unlock()
	if c == nil {
		return
	}
	p := *r
	p.ProgressToken = c.token
	if err := c.ss.NotifyProgress(c.ctx, &p); err != nil {
		u.log.Debug("forwarding progress", "error", err)
	}
}

// onLog forwards a log message to the session whose call is in flight,
// or to every session when no call is.
func (u *upstream) onLog(p *mcp.LoggingMessageParams) {
	c, sessions := u.route(nil)
	switch {
	case c != nil:
		if err := c.ss.Log(c.ctx, p); err != nil {
			u.log.Debug("forwarding a log message", "error", err)
		}
	case sessions > 1:
		// Which session's call it is about is unknown: keep it here
		// rather than tell the wrong client.
		u.log.Info("upstream log message not forwarded: calls from several sessions in flight",
			"sessions", sessions, "level", p.Level, "logger", p.Logger, "data", p.Data)
	default:
		u.broadcast(p)
	}
}

// maxQueuedLogs bounds the log messages of no call waiting to be sent.
const maxQueuedLogs = 256

// broadcast queues a log message of no call for every session. It is sent
// on a goroutine of its own, not where the upstream's messages are read:
// it belongs to no call, so it need not come before anything, and one
// session slow to take it must not hold up the upstream's results.
func (u *upstream) broadcast(p *mcp.LoggingMessageParams) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.logs) >= maxQueuedLogs {
		if u.dropped++; u.dropped == 1 {
			u.log.Warn("upstream log messages dropped: clients are slow to take them", "queued", len(u.logs))
		}
		return
	}
	u.logs = append(u.logs, p)
	if !u.broadcasting {
		u.broadcasting = true
		go u.sendLogs()
	}
}

// sendLogs sends the queued log messages until none is left.
func (u *upstream) sendLogs() {
	for {
		u.mu.Lock()
		if len(u.logs) == 0 {
			u.broadcasting = false
			if u.dropped > 1 {
				u.log.Warn("upstream log messages dropped: clients were slow to take them", "dropped", u.dropped)
			}
			u.dropped = 0
			u.mu.Unlock()
			return
		}
		p := u.logs[0]
		u.logs[0] = nil
		u.logs = u.logs[1:]
		u.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		u.hooks.broadcastLog(ctx, u, p)
		cancel()
	}
}

func supportsSampling(ss *mcp.ServerSession) bool {
	ip := ss.InitializeParams()
	return ip != nil && ip.Capabilities != nil && ip.Capabilities.Sampling != nil
}

func supportsElicitation(ss *mcp.ServerSession) bool {
	ip := ss.InitializeParams()
	return ip != nil && ip.Capabilities != nil && ip.Capabilities.Elicitation != nil
}

func (u *upstream) onCreateMessage(ctx context.Context, r *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	c, sessions := u.route(supportsSampling)
	if sessions > 1 {
		return nil, u.errAmbiguous("sampling", sessions)
	}
	if c == nil {
		return nil, fmt.Errorf("capbroker gateway: no client session that supports sampling is waiting on %s", u.cfg.Name)
	}
	return c.ss.CreateMessage(linked(c.ctx, ctx), r.Params)
}

func (u *upstream) onElicit(ctx context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	c, sessions := u.route(supportsElicitation)
	if sessions > 1 {
		return nil, u.errAmbiguous("elicitation", sessions)
	}
	if c == nil {
		return nil, fmt.Errorf("capbroker gateway: no client session that supports elicitation is waiting on %s", u.cfg.Name)
	}
	return elicitRaw(linked(c.ctx, ctx), c.ss, r.Params)
}

type rawElicitKey struct{}

// elicitRaw asks ss's client and returns its answer as given: the SDK
// checks an accepted answer against the requested schema, which is the
// upstream's business, not the gateway's.
func elicitRaw(ctx context.Context, ss *mcp.ServerSession, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	var raw *mcp.ElicitResult
	res, err := ss.Elicit(context.WithValue(ctx, rawElicitKey{}, &raw), p)
	if err != nil && raw != nil {
		return raw, nil
	}
	return res, err
}

// keepRawElicit is sending middleware for downstream servers that keeps
// the client's answer to elicitation/create for elicitRaw.
func keepRawElicit(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if p, ok := ctx.Value(rawElicitKey{}).(**mcp.ElicitResult); ok && err == nil {
			if r, ok := res.(*mcp.ElicitResult); ok {
				*p = r
			}
		}
		return res, err
	}
}

func (u *upstream) onElicitationComplete(ctx context.Context, r *mcp.ElicitationCompleteNotificationRequest) {
	if c, _ := u.route(supportsElicitation); c != nil {
		c.ss.NotifyElicitationComplete(c.ctx, r.Params)
	}
}

// linked returns a context carrying base's values (the downstream request,
// so what is sent goes to that request's stream) that is also cancelled
// when other is.
func linked(base, other context.Context) context.Context {
	ctx, cancel := context.WithCancel(base)
	stop := context.AfterFunc(other, cancel)
	context.AfterFunc(ctx, func() { stop() })
	return ctx
}

// subscribe adds a downstream subscription to uri, subscribing upstream on
// the first.
func (u *upstream) subscribe(ctx context.Context, uri string) error {
	u.mu.Lock()
	u.subs[uri]++
	n := u.subs[uri]
	u.mu.Unlock()
	if n > 1 {
		return nil
	}
	cs, err := u.session(ctx)
	if err != nil {
		return err
	}
	return cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri})
}

func (u *upstream) unsubscribe(ctx context.Context, uri string) error {
	u.mu.Lock()
	if u.subs[uri] > 0 {
		u.subs[uri]--
	}
	n := u.subs[uri]
	if n == 0 {
		delete(u.subs, uri)
	}
	u.mu.Unlock()
	if n > 0 {
		return nil
	}
	cs, err := u.session(ctx)
	if err != nil {
		return err
	}
	return cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri})
}

// resubscribe renews subscriptions on a new connection.
func (u *upstream) resubscribe(ctx context.Context, cs *mcp.ClientSession) {
	u.mu.Lock()
	uris := sortedKeys(u.subs)
	u.mu.Unlock()
	for _, uri := range uris {
		if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
			u.log.Warn("renewing a resource subscription", "uri", uri, "error", err)
		}
	}
}

// lineLogger logs what a stdio upstream writes to stderr, line by line,
// and keeps its last lines (tailLines, each clipped to tailBytes), which
// an error starting the server quotes.
type lineLogger struct {
	log    *slog.Logger
	redact func(string) string
	mu     sync.Mutex
	buf    []byte
	last   []string
}

const (
	tailLines = 3
	tailBytes = 200
)

func (l *lineLogger) line(s string) {
	if l.redact != nil {
		s = l.redact(s)
	}
	l.log.Info("stderr", "line", s)
	if len(l.last) == tailLines {
		l.last = append(l.last[:0], l.last[1:]...)
	}
	l.last = append(l.last, clip(s, tailBytes))
}

// tail is the last lines written (the unfinished one too), joined by
// " / "; "" for a nil logger or none.
func (l *lineLogger) tail() string {
	if l == nil {
		return ""
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	lines := l.last
	if rest := strings.TrimSpace(string(l.buf)); rest != "" {
		if l.redact != nil {
			rest = l.redact(rest)
		}
		lines = append(slices.Clip(lines), clip(rest, tailBytes))
	}
	return strings.Join(lines, " / ")
}

func (l *lineLogger) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	for {
		i := strings.IndexByte(string(l.buf), '\n')
		if i < 0 {
			break
		}
		if line := strings.TrimRight(string(l.buf[:i]), "\r"); line != "" {
			l.line(line)
		}
		l.buf = l.buf[i+1:]
	}
	if len(l.buf) > 64<<10 {
		l.line(string(l.buf))
		l.buf = l.buf[:0]
	}
	return len(p), nil
}

var _ io.Writer = (*lineLogger)(nil)

// dead marks cs as unusable, if it is still the current session, so calls
// wait for the restart instead of using it.
func (u *upstream) dead(cs *mcp.ClientSession) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.cs == cs {
		u.cs = nil
		u.ready = make(chan struct{})
	}
}

// connected returns the live session, or nil while disconnected.
func (u *upstream) connected() *mcp.ClientSession {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.cs
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// redactLogger returns log, or when the upstream's config expanded
// secrets, a logger that shows them as ${VAR} in every message and
// attribute (errors included).
func redactLogger(log *slog.Logger, secrets []mcpconfig.Secret) *slog.Logger {
	if len(secrets) == 0 {
		return log
	}
	return slog.New(&redactHandler{h: log.Handler(), r: mcpconfig.NewRedactor(secrets...)})
}

// redactHandler redacts the records it passes on.
type redactHandler struct {
	h slog.Handler
	r *mcpconfig.Redactor
}

func (h *redactHandler) Enabled(ctx context.Context, l slog.Level) bool { return h.h.Enabled(ctx, l) }

func (h *redactHandler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, h.r.Redact(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.h.Handle(ctx, out)
}

func (h *redactHandler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, h.r.Redact(v.String()))
	case slog.KindGroup:
		attrs := v.Group()
		out := make([]any, len(attrs))
		for i, g := range attrs {
			out[i] = h.attr(g)
		}
		return slog.Group(a.Key, out...)
	case slog.KindAny:
		s := fmt.Sprint(v.Any())
		if r := h.r.Redact(s); r != s {
			return slog.String(a.Key, r)
		}
	}
	return a
}

func (h *redactHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	red := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		red[i] = h.attr(a)
	}
	return &redactHandler{h: h.h.WithAttrs(red), r: h.r}
}

func (h *redactHandler) WithGroup(name string) slog.Handler {
	return &redactHandler{h: h.h.WithGroup(name), r: h.r}
}
