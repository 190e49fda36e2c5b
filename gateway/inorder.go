package gateway

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"slices"
	"unicode"

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
//
// A notification about a call is forwarded there and then, so a client
// slow to take it holds up the reading of that stream (for stdio, of the
// upstream) until it does, as it would hold up the call's own result. A
// log message of no call is queued and sent to every session on a
// goroutine of its own (broadcast): it need not come before anything.

// seeNow forwards m now if it is a log or progress notification; see the
// comment above.
func (u *upstream) seeNow(m jsonrpc.Message) {
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
		u.onLog(&p)
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
	see func(jsonrpc.Message)
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
	see func(jsonrpc.Message)
}

func (c orderedConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if err == nil {
		c.see(m)
	}
	return m, err
}

// tapEvents is an HTTP transport that gives each event-stream response an
// eventTap calling see.
type tapEvents struct {
	base http.RoundTripper
	see  func(jsonrpc.Message)
}

func (t tapEvents) RoundTrip(r *http.Request) (*http.Response, error) {
	res, err := t.base.RoundTrip(r)
	if err != nil || res.Body == nil {
		return res, err
	}
	// An event stream, or what the legacy SSE transport's GET reads as
	// one whatever its content type says.
	if mt, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type")); mt == "text/event-stream" || r.Method == http.MethodGet && mt != "application/json" {
		res.Body = &eventTap{body: res.Body, see: func(data []byte) {
			// Decode only what may be a notification: a result can be
			// megabytes, and the SDK decodes it anyway. (Not the whole
			// method name: JSON may write its "/" as "\/".)
			if !bytes.Contains(data, []byte("notifications")) {
				return
			}
			if m, err := jsonrpc.DecodeMessage(data); err == nil {
				if r, ok := m.(*jsonrpc.Request); ok && !r.IsCall() {
					t.see(r)
				}
			}
		}}
	}
	return res, nil
}

// eventTap passes a server-sent event stream through unchanged, but only
// whole events: it calls see with an event's data before any byte that
// ends the event can be read, so the SDK cannot act on an event, or on any
// after it, before see has run. see must not keep the slice.
//
// It reads events as the SDK's client does (mcp/event.go), so that it
// sees what the SDK will deliver: lines end at "\n" (a "\r" before it is
// dropped); a blank line or the end of the stream ends an event; a data
// field's value is trimmed of spaces, and the data of several data lines
// is joined by "\n"; a line without a colon ends the stream for the SDK,
// and an event longer than mcp.DefaultMaxEventSize too; from either on,
// the tap passes the stream through unseen, holding nothing back. Only
// events named "message" (or not named) are seen.
type eventTap struct {
	body io.ReadCloser
	see  func(data []byte)
	max  int // the longest event held back; 0: mcp.DefaultMaxEventSize
	// buf[start:] is read from body and not yet handed on; buf[start:ready]
	// may be handed on. ready is where the event being read began. The
	// lines before buf[line] are read, and no line ends in
	// buf[line:scanned].
	buf                         []byte
	start, ready, line, scanned int
	dataLines, dataFrom, dataTo int    // the event's data lines so far; the first is buf[dataFrom:dataTo]
	joined                      []byte // the event's data, once it has two lines
	other                       bool   // the event is named, not "message"
	done                        bool   // past what the SDK reads: pass the rest through
	err                         error
}

func (t *eventTap) Read(p []byte) (int, error) {
	for t.ready == t.start {
		if t.err != nil {
			return 0, t.err
		}
		t.fill()
	}
	n := copy(p, t.buf[t.start:t.ready])
	t.start += n
	return n, nil
}

// fill reads more of the body, once all that may be handed on has been.
func (t *eventTap) fill() {
	if t.start == len(t.buf) && cap(t.buf) > 1<<20 {
		// A large event has gone: do not keep its buffer.
		t.buf, t.start, t.ready, t.line, t.scanned = nil, 0, 0, 0, 0
	}
	if t.start > 0 { // keep only the event being read, at the front
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
	if !t.done {
		t.scan()
	}
	if t.done {
		t.ready = len(t.buf)
	}
}

// scan reads the whole lines from buf[line:], seeing each event that
// ends. When the body has ended, what is left may all be handed on: at
// io.EOF the last line and event end too; after another error the SDK
// delivers neither, so they are not seen.
func (t *eventTap) scan() {
	eof := errors.Is(t.err, io.EOF)
	for !t.done {
		end := -1
		if i := bytes.IndexByte(t.buf[t.scanned:], '\n'); i >= 0 {
			end = t.scanned + i
		} else if eof && t.line < len(t.buf) {
			end = len(t.buf) // the last line, unended
		}
		if end < 0 {
			t.scanned = len(t.buf)
			if len(t.buf)-t.ready > cmp.Or(t.max, mcp.DefaultMaxEventSize) {
				t.done = true
			}
			break
		}
		next := min(end+1, len(t.buf))
		line := bytes.TrimRight(t.buf[t.line:end], "\r")
		if len(line) > 0 {
			t.field(line, t.line)
		}
		t.line, t.scanned = next, next
		if len(line) == 0 {
			t.endEvent()
			t.ready = next
		}
	}
	if t.err != nil {
		if eof && !t.done {
			t.endEvent()
		}
		t.ready = len(t.buf)
	}
}

// endEvent sees the event read, if it is to be seen, and starts the next.
func (t *eventTap) endEvent() {
	if !t.other {
		switch t.dataLines {
		case 0:
		case 1:
			t.see(t.buf[t.dataFrom:t.dataTo])
		default:
			t.see(t.joined)
		}
	}
	t.dataLines, t.other = 0, false
}

// field takes a line, which begins at buf[at], as the SDK does.
func (t *eventTap) field(line []byte, at int) {
	colon := bytes.IndexByte(line, ':')
	if colon < 0 {
		t.done = true
		return
	}
	value := line[colon+1:]
	switch string(line[:colon]) {
	case "event":
		if v := bytes.TrimSpace(value); len(v) > 0 && string(v) != "message" {
			t.other = true
		}
	case "data":
		v := bytes.TrimSpace(value)
		switch t.dataLines++; t.dataLines {
		case 1:
			t.dataFrom = at + colon + 1 + len(value) - len(bytes.TrimLeftFunc(value, unicode.IsSpace))
			t.dataTo = t.dataFrom + len(v)
		case 2:
			t.joined = append(append(append(t.joined[:0], t.buf[t.dataFrom:t.dataTo]...), '\n'), v...)
		default:
			t.joined = append(append(t.joined, '\n'), v...)
		}
	}
}

func (t *eventTap) Close() error { return t.body.Close() }
