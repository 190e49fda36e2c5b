package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// An upstream's log and progress notifications about a call must reach the
// client before the call's result: a client stops listening for a call's
// progress once it has the result, and the result closes the stream the
// notifications go on. The SDK delivers a response to the caller as soon
// as it is read but runs notification handlers on a goroutine of their
// own, so a handler for a log message sent just before a result could run
// after the gateway had already answered the client; the message was then
// lost. The gateway therefore forwards these two kinds of notification
// where an upstream's messages are read, before it reads the next one:
//
//   - stdio: orderedTransport wraps the connection and sees each message
//     as it is read;
//   - HTTP (streamable and SSE): eventTap sees each server-sent event of a
//     response body before the SDK can read it.
//
// (The streamable connection is not wrapped: it has methods the SDK finds
// by an unexported interface, which a wrapper would hide.)

// seeNow forwards m now if it is a log or progress notification; see the
// comment above.
func (u *upstream) seeNow(ctx context.Context, m jsonrpc.Message) {
	r, ok := m.(*jsonrpc.Request)
	if !ok || r.IsCall() {
		return
	}
	switch r.Method {
	case "notifications/message":
		var p mcp.LoggingMessageParams
		if err := json.Unmarshal(r.Params, &p); err != nil {
			u.log.Warn("upstream sent a log message the gateway cannot read", "error", err)
			return
		}
		u.onLog(ctx, &p)
	case "notifications/progress":
		var p mcp.ProgressNotificationParams
		if err := json.Unmarshal(r.Params, &p); err != nil {
			u.log.Warn("upstream sent a progress notification the gateway cannot read", "error", err)
			return
		}
		u.onProgress(&p)
	}
}

// orderedTransport is a stdio transport whose connection calls see with
// each message it reads, before handing it on.
type orderedTransport struct {
	mcp.Transport
	see func(context.Context, jsonrpc.Message)
}

func (t orderedTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return orderedConn{c, t.see}, nil
}

type orderedConn struct {
	mcp.Connection
	see func(context.Context, jsonrpc.Message)
}

func (c orderedConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if err == nil {
		c.see(ctx, m)
	}
	return m, err
}

// tapEvents is an HTTP transport that gives each event-stream response an
// eventTap calling see.
type tapEvents struct {
	base http.RoundTripper
	see  func(context.Context, jsonrpc.Message)
}

func (t tapEvents) RoundTrip(r *http.Request) (*http.Response, error) {
	res, err := t.base.RoundTrip(r)
	if err != nil || res.Body == nil {
		return res, err
	}
	if mt, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type")); mt == "text/event-stream" {
		ctx := r.Context()
		res.Body = &eventTap{body: res.Body, see: func(data []byte) {
			if m, err := jsonrpc.DecodeMessage(data); err == nil {
				t.see(ctx, m)
			}
		}}
	}
	return res, nil
}

// eventTap passes a server-sent event stream through unchanged, but only
// whole events, calling see with an event's data (its data lines joined
// by newlines) before the event can be read. A partial event at the end
// of the stream is passed on as it is, unseen.
type eventTap struct {
	body io.ReadCloser
	see  func(data []byte)
	// buf[start:] is read from body and not yet handed on; buf[:ready]
	// are whole events, seen; the lines before buf[line] are scanned, and
	// data holds the data of the event they began.
	buf                []byte
	start, ready, line int
	data               []byte
	hasData            bool
	err                error
}

func (t *eventTap) Read(p []byte) (int, error) {
	for t.ready == t.start {
		if t.err != nil {
			if t.start == len(t.buf) {
				return 0, t.err
			}
			t.ready = len(t.buf)
			break
		}
		t.fill()
	}
	n := copy(p, t.buf[t.start:t.ready])
	t.start += n
	return n, nil
}

// fill reads more of the body, once every whole event has been handed on.
func (t *eventTap) fill() {
	if t.start > 0 { // keep only the partial event, at the front
		t.buf = t.buf[:copy(t.buf, t.buf[t.start:])]
		t.ready -= t.start
		t.line -= t.start
		t.start = 0
	}
	if len(t.buf) == cap(t.buf) {
		t.buf = append(t.buf, make([]byte, max(4096, len(t.buf)))...)[:len(t.buf)]
	}
	n, err := t.body.Read(t.buf[len(t.buf):cap(t.buf)])
	t.buf = t.buf[:len(t.buf)+n]
	t.err = err
	t.scan()
}

// scan reads the whole lines from buf[line:], seeing each event that ends.
// A line ends at "\n", "\r\n" or a lone "\r"; a "\r" last in buf waits for
// the next byte, unless the stream has ended.
func (t *eventTap) scan() {
	for {
		rest := t.buf[t.line:]
		i := bytes.IndexAny(rest, "\r\n")
		if i < 0 {
			return
		}
		next := i + 1
		if rest[i] == '\r' {
			if next == len(rest) && t.err == nil {
				return
			}
			if next < len(rest) && rest[next] == '\n' {
				next++
			}
		}
		t.field(rest[:i])
		t.line += next
		if i == 0 { // a blank line ends the event
			if t.hasData {
				t.see(t.data)
			}
			t.data, t.hasData = t.data[:0], false
			t.ready = t.line
		}
	}
}

// field adds a line's data, if it is a data field, to the event's.
func (t *eventTap) field(line []byte) {
	v, ok := bytes.CutPrefix(line, []byte("data"))
	if !ok || (len(v) > 0 && v[0] != ':') {
		return
	}
	if len(v) > 0 {
		v = bytes.TrimPrefix(v[1:], []byte(" "))
	}
	if t.hasData {
		t.data = append(t.data, '\n')
	}
	t.data = append(t.data, v...)
	t.hasData = true
}

func (t *eventTap) Close() error { return t.body.Close() }
