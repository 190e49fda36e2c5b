package gateway

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// DefaultMaxMessage is the default bound on one JSON-RPC message from a
// stdio client ([Options.MaxMessage]).
const DefaultMaxMessage = 16 << 20

// JSON-RPC error codes the stdio filter answers with.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
)

// stdioFilter stands between a stdio client and the SDK: it reads the
// client's newline-delimited JSON-RPC and answers what is not one JSON-RPC
// message (malformed JSON, a line longer than max, a batch, an object that
// is not a request, notification or response) with a JSON-RPC error, and
// passes every valid line on. The SDK ends a stdio session at the first
// line it cannot decode; behind the filter, one bad line costs one error
// reply and the session goes on.
//
// Read returns the valid lines; out must be the writer the SDK writes to,
// so the filter's replies and the SDK's messages never interleave (the
// SDK writes each message with one Write).
type stdioFilter struct {
	in  io.ReadCloser
	out *lockedWriter
	max int
	log *slog.Logger

	pr *io.PipeReader
	pw *io.PipeWriter
}

func newStdioFilter(in io.ReadCloser, out *lockedWriter, max int, log *slog.Logger) *stdioFilter {
	if max <= 0 {
		max = DefaultMaxMessage
	}
	pr, pw := io.Pipe()
	f := &stdioFilter{in: in, out: out, max: max, log: log, pr: pr, pw: pw}
	go f.run()
	return f
}

func (f *stdioFilter) Read(p []byte) (int, error) { return f.pr.Read(p) }

// Close closes the client's input and stops the filter.
func (f *stdioFilter) Close() error {
	f.pr.Close()
	return f.in.Close()
}

func (f *stdioFilter) run() {
	r := bufio.NewReaderSize(f.in, 64<<10)
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		over := len(line)+len(chunk) > f.max+2 // room for "\r\n"
		if !over {
			line = append(line, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			if over {
				// Too long: skip the rest of the line, then answer it.
				err = f.discardLine(r)
				f.reply(nil, codeParseError, fmt.Sprintf("message longer than %d bytes; it was not read", f.max))
				line = line[:0]
				if err != nil {
					f.pw.CloseWithError(orEOF(err))
					return
				}
			}
			continue
		}
		if over {
			f.reply(nil, codeParseError, fmt.Sprintf("message longer than %d bytes; it was not read", f.max))
			line = line[:0]
		} else if len(line) > 0 {
			if ok := f.check(line); ok {
				if bytes.HasSuffix(line, []byte("\n")) {
					_, werr := f.pw.Write(line)
					if werr != nil {
						return // the SDK closed its side
					}
				} else {
					// The last line of the input, without a newline.
					if _, werr := f.pw.Write(append(line, '\n')); werr != nil {
						return
					}
				}
			}
			line = line[:0]
		}
		if err != nil {
			f.pw.CloseWithError(orEOF(err))
			return
		}
	}
}

// discardLine reads up to and including the next newline.
func (f *stdioFilter) discardLine(r *bufio.Reader) error {
	for {
		_, err := r.ReadSlice('\n')
		if !errors.Is(err, bufio.ErrBufferFull) {
			return err
		}
	}
}

func orEOF(err error) error {
	if err == nil {
		return io.EOF
	}
	return err
}

// check reports whether line is one JSON-RPC message the SDK can take,
// answering it with an error when it is not.
func (f *stdioFilter) check(line []byte) bool {
	trimmed := bytes.TrimSpace(line)
	if len(trimmed) == 0 {
		return false
	}
	if !json.Valid(trimmed) {
		f.reply(nil, codeParseError, "parse error: the line is not valid JSON")
		return false
	}
	switch trimmed[0] {
	case '{':
	case '[':
		f.reply(nil, codeInvalidRequest, "invalid request: JSON-RPC batches are not supported (MCP removed them in protocol 2025-06-18); send one message per line")
		return false
	default:
		f.reply(nil, codeInvalidRequest, "invalid request: a JSON-RPC message must be a JSON object")
		return false
	}
	if _, err := jsonrpc.DecodeMessage(trimmed); err != nil {
		var probe struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.Unmarshal(trimmed, &probe)
		f.reply(validID(probe.ID), codeInvalidRequest, "invalid request: "+err.Error())
		return false
	}
	return true
}

// validID returns raw if it is a JSON-RPC ID (a string or a number), else
// nil (answered with id null).
func validID(raw json.RawMessage) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return nil
	}
	switch v.(type) {
	case string, float64:
		return raw
	}
	return nil
}

// reply writes a JSON-RPC error response to the client.
func (f *stdioFilter) reply(id json.RawMessage, code int, msg string) {
	if id == nil {
		id = json.RawMessage("null")
	}
	f.log.Warn("stdio client sent a bad message; answered with an error", "code", code, "error", msg)
	b, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{code, msg}})
	if err != nil {
		return
	}
	f.out.Write(append(b, '\n'))
}

// lockedWriter serializes writes, each written whole.
type lockedWriter struct {
	mu sync.Mutex
	w  io.WriteCloser
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) Close() error { return l.w.Close() }
