package httpguard

import (
	"io"
	"net/http"
	"time"
)

// Timeouts bound how long one client may hold a connection, so that slow
// bodies and idle keep-alive connections cannot pile up. Zero fields take
// the defaults of [DefaultTimeouts]; a negative one turns that bound off.
type Timeouts struct {
	// Header bounds reading a request's headers.
	Header time.Duration
	// Read bounds reading a request's headers and body. It is enforced on
	// the body alone (see [Timeouts.Server]): once the body is read, the
	// handler may take as long as it needs, as a streamed MCP reply does.
	Read time.Duration
	// Write bounds writing a response, from the end of reading its
	// request. Streaming faces (the gateway) leave it off by default.
	Write time.Duration
	// Idle bounds how long a keep-alive connection waits for its next
	// request.
	Idle time.Duration
}

// DefaultTimeouts are the bounds of `capbroker serve`: 5 s for headers,
// 30 s for a request, 60 s for a response, 120 s idle. The gateway uses
// the same without the write bound (its replies stream for as long as a
// tool call runs).
var DefaultTimeouts = Timeouts{Header: 5 * time.Second, Read: 30 * time.Second, Write: 60 * time.Second, Idle: 120 * time.Second}

// resolved fills zero fields from DefaultTimeouts and turns negative
// ones into zero (off, for net/http).
func (t Timeouts) resolved() Timeouts {
	pick := func(v, def time.Duration) time.Duration {
		switch {
		case v < 0:
			return 0
		case v == 0:
			return def
		}
		return v
	}
	d := DefaultTimeouts
	return Timeouts{Header: pick(t.Header, d.Header), Read: pick(t.Read, d.Read), Write: pick(t.Write, d.Write), Idle: pick(t.Idle, d.Idle)}
}

// Server returns an http.Server for h with the timeouts set. The read
// bound is a deadline on reading each request's body, lifted when the body
// has been read: net/http's own ReadTimeout would also cancel a handler
// still streaming its reply when the deadline passes.
func (t Timeouts) Server(h http.Handler) *http.Server {
	r := t.resolved()
	if r.Read > 0 {
		h = bodyDeadline(h, r.Read)
	}
	return &http.Server{Handler: h, ReadHeaderTimeout: r.Header, WriteTimeout: r.Write, IdleTimeout: r.Idle}
}

// bodyDeadline gives each request d to deliver its body.
func bodyDeadline(next http.Handler, d time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
			next.ServeHTTP(w, r)
			return
		}
		if rc.SetReadDeadline(time.Now().Add(d)) != nil {
			next.ServeHTTP(w, r) // not a connection with deadlines (HTTP/2 tests, recorders)
			return
		}
		r.Body = &deadlineBody{ReadCloser: r.Body, rc: rc}
		next.ServeHTTP(w, r)
	})
}

// deadlineBody lifts the read deadline once the body is read.
type deadlineBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	done bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.done {
		b.done = true
		b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}
