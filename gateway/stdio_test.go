package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/capbroker/capbroker/policy"
)

// TestStdioBadLines sends a stdio gateway garbage: each bad line is
// answered with a JSON-RPC error, and the session goes on to answer a
// valid initialize and tools/list. (On the old gateway the first bad line
// ended the session.)
func TestStdioBadLines(t *testing.T) {
	g := startGateway(t, nil, &Options{Mode: ModeSearch, MaxMessage: 4096})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- g.ServeStdio(context.Background(), inR, outW, "") }()
	t.Cleanup(func() { inW.Close(); outR.Close() })
	replies := bufio.NewReader(outR)

	type reply struct {
		ID     json.RawMessage `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	send := func(line string) reply {
		t.Helper()
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			t.Fatalf("the gateway stopped reading: %v", err)
		}
		b, err := replies.ReadBytes('\n')
		if err != nil {
			t.Fatalf("no reply to %.60q: %v", line, err)
		}
		var r reply
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatalf("reply %q: %v", b, err)
		}
		return r
	}

	for _, tc := range []struct {
		name, line string
		code       int
		id         string
	}{
		{"garbage", "garbage", codeParseError, "null"},
		{"truncated JSON", `{"jsonrpc":"2.0","id":1,"method":"tools/li`, codeParseError, "null"},
		{"over-long line", `{"jsonrpc":"2.0","id":2,"method":"ping","params":{"pad":"` + strings.Repeat("x", 100_000) + `"}}`, codeParseError, "null"},
		{"binary", "\x00\x01\x02\xff", codeParseError, "null"},
		{"a number", "42", codeInvalidRequest, "null"},
		{"empty batch", "[]", codeInvalidRequest, "null"},
		{"batch", `[{"jsonrpc":"2.0","id":3,"method":"ping"}]`, codeInvalidRequest, "null"},
		{"wrong version", `{"jsonrpc":"1.0","id":4,"method":"ping"}`, codeInvalidRequest, "4"},
		{"bad id", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, codeInvalidRequest, "null"},
		{"bad method", `{"jsonrpc":"2.0","id":"five","method":5}`, codeInvalidRequest, `"five"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := send(tc.line)
			if r.Error == nil || r.Error.Code != tc.code || string(r.ID) != tc.id {
				t.Fatalf("reply %+v (error %+v), want code %d with id %s", r, r.Error, tc.code, tc.id)
			}
			t.Logf("%s", r.Error.Message)
		})
	}

	r := send(`{"jsonrpc":"2.0","id":10,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"garbage-client","version":"1"}}}`)
	if r.Error != nil || string(r.ID) != "10" {
		t.Fatalf("initialize after bad lines: %s %+v", r.ID, r.Error)
	}
	if _, err := io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	if r := send("not json either"); r.Error == nil || r.Error.Code != codeParseError {
		t.Fatalf("bad line after initialize: %+v", r)
	}
	r = send(`{"jsonrpc":"2.0","id":11,"method":"tools/list"}`)
	if r.Error != nil || !strings.Contains(string(r.Result), policy.HatchName) {
		t.Fatalf("tools/list after bad lines: %s %+v", r.Result, r.Error)
	}
	inW.Close()
	if err := <-done; err != nil {
		t.Fatalf("ServeStdio: %v", err)
	}
}
