package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"slices"

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
			// Decode only what may be a notification: a result can be
			// megabytes, and the SDK decodes it anyway. (Not the whole
			// method name: JSON may write its "/" as "\/".)
			if !bytes.Contains(data, []byte("notifications")) {
				return
			}
			if m, err := jsonrpc.DecodeMessage(data); err == nil {
				t.see(ctx, m)
			}
		}}
	}
	return res, nil
}

// eventTap passes a server-sent event stream through unchanged, but only
// whole events, calling see with an event's data (its data lines joined
// by newlines) before the event can be read; see must not keep the slice.
// A partial event at the end of the stream is passed on as it is, unseen.
type eventTap struct {
	body io.ReadCloser
	see  func(data []byte)
	// buf[start:] is read from body and not yet handed on; buf[start:ready]
	// are whole events, seen. The lines before buf[line] are read, and no
	// line ends in buf[line:scanned].
	buf                         []byte
	start, ready, line, scanned int
	dataLines, dataFrom, dataTo int    // the event's data lines so far; the first is buf[dataFrom:dataTo]
	joined                      []byte // the event's data, once it has two lines
	err                         error
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
		t.scanned -= t.start
		t.dataFrom -= t.start
		t.dataTo -= t.start
		t.start = 0
	}
	if len(t.buf) == cap(t.buf) {
		t.buf = slices.Grow(t.buf, max(4096, len(t.buf)))
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
		rest := t.buf[t.scanned:]
		i := bytes.IndexByte(rest, '\n')
		before := rest // a "\r" ends the line if it comes first
		if i >= 0 {
			before = rest[:i]
		}
		if j := bytes.IndexByte(before, '\r'); j >= 0 {
			i = j
		}
		if i < 0 {
			t.scanned = len(t.buf)
			return
		}
		end := t.scanned + i
		next := end + 1
		if t.buf[end] == '\r' {
			if next == len(t.buf) && t.err == nil {
				t.scanned = end
				return
			}
			if next < len(t.buf) && t.buf[next] == '\n' {
				next++
			}
		}
		blank := end == t.line
		if !blank {
			t.field(t.line, end)
		}
		t.line, t.scanned = next, next
		if blank { // the event ends
			switch t.dataLines {
			case 0:
			case 1:
				t.see(t.buf[t.dataFrom:t.dataTo])
			default:
				t.see(t.joined)
			}
			t.dataLines = 0
			t.ready = next
		}
	}
}

// field takes the data of buf[from:to], a line, if it is a data field.
func (t *eventTap) field(from, to int) {
	v, ok := bytes.CutPrefix(t.buf[from:to], []byte("data"))
	if !ok || (len(v) > 0 && v[0] != ':') {
		return
	}
	if len(v) > 0 {
		v = bytes.TrimPrefix(v[1:], []byte(" "))
	}
	switch t.dataLines++; t.dataLines {
	case 1:
		t.dataTo = to
		t.dataFrom = to - len(v)
	case 2:
		t.joined = append(append(append(t.joined[:0], t.buf[t.dataFrom:t.dataTo]...), '\n'), v...)
	default:
		t.joined = append(append(t.joined, '\n'), v...)
	}
}

func (t *eventTap) Close() error { return t.body.Close() }
