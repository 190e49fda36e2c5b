package gateway

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"testing"
)

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// FuzzStdioLine feeds the stdio gateway's check of each client line
// arbitrary bytes: it must not panic; a line it passes on is one JSON
// object; a line it refuses is answered with exactly one JSON-RPC error
// (parse error or invalid request) whose id is null, a string or a
// number.
func FuzzStdioLine(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"find_capability","arguments":{"query":"x"}}}`,
		`{"jsonrpc":"1.0","id":2,"method":"x"}`, `{"jsonrpc":"2.0","id":{},"method":"x"}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, `42`, `"x"`, `{`, "\x00\xff", ``, `   `,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		var out bytes.Buffer
		flt := &stdioFilter{out: &lockedWriter{w: nopWriteCloser{&out}}, max: DefaultMaxMessage, log: slog.New(slog.DiscardHandler)}
		ok := flt.check(line)
		trimmed := bytes.TrimSpace(line)
		if ok {
			if out.Len() != 0 || len(trimmed) == 0 || trimmed[0] != '{' || !json.Valid(trimmed) {
				t.Fatalf("passed %q on (answer %q)", line, out.Bytes())
			}
			return
		}
		if len(trimmed) == 0 {
			if out.Len() != 0 {
				t.Fatalf("answered a blank line: %q", out.Bytes())
			}
			return
		}
		if bytes.Count(out.Bytes(), []byte("\n")) != 1 {
			t.Fatalf("refused %q with %q, want one line", line, out.Bytes())
		}
		var reply struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Error   struct{ Code int }
		}
		if err := json.Unmarshal(out.Bytes(), &reply); err != nil || reply.JSONRPC != "2.0" ||
			(reply.Error.Code != codeParseError && reply.Error.Code != codeInvalidRequest) {
			t.Fatalf("refused %q with %q (%v)", line, out.Bytes(), err)
		}
		if id := bytes.TrimSpace(reply.ID); string(id) != "null" && validID(id) == nil {
			t.Fatalf("answered with id %s", id)
		}
	})
}

// FuzzHatchArguments feeds the parsing of what a client sends to a
// gateway tool, find_capability's and call_capability's arguments and a
// proxied call's arguments, arbitrary bytes: nothing panics, and the
// arguments passed upstream are nothing or one JSON object, with a reason
// whenever they are refused.
func FuzzHatchArguments(f *testing.F) {
	for _, s := range []string{
		`{"query":"read a file","k":3}`, `{"query":"x","task":"t1"}`, `{"name":"fs__read","arguments":{"path":"/tmp"}}`,
		`"{\"path\":\"/tmp\"}"`, `"[]"`, `""`, `[1,2]`, `null`, `3`, `{"k":"many"}`, `{`, "\xff",
	} {
		f.Add([]byte(s))
	}
	g := &Gateway{opts: &Options{FindK: 5}}
	f.Fuzz(func(t *testing.T, data []byte) {
		var fa findArgs
		if json.Unmarshal(data, &fa) == nil {
			if k := g.findK(fa.Query, fa.K); k < 1 || k > 20 && fa.K <= 0 {
				t.Fatalf("findK(%q, %d) = %d", fa.Query, fa.K, k)
			}
		}
		var ca struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}
		_ = json.Unmarshal(data, &ca)
		for _, raw := range [][]byte{data, ca.Arguments} {
			args, bad := callArguments(raw)
			if args != nil {
				if bad != "" {
					t.Fatalf("callArguments(%q) = %q and %q", raw, args, bad)
				}
				tr := bytes.TrimSpace(args)
				if len(tr) == 0 || tr[0] != '{' || !json.Valid(tr) {
					t.Fatalf("callArguments(%q) passes on %q, not a JSON object", raw, args)
				}
			}
			tr := bytes.TrimSpace(raw)
			if args == nil && bad == "" && len(tr) > 0 && string(tr) != "null" && !bytes.Equal(tr, []byte(`""`)) {
				var s string
				if json.Unmarshal(tr, &s) != nil || len(bytes.TrimSpace([]byte(s))) > 0 {
					t.Fatalf("callArguments(%q) dropped the arguments without a reason", raw)
				}
			}
		}
	})
}
