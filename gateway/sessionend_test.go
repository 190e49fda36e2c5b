package gateway

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/capbroker/capbroker/policy"
)

// TestSessionEnds: a session's end is traced once, with how it ended: an
// HTTP client that closes its session, a stdio client that disconnects,
// a session still open when the gateway stops; a request that opened a
// session its client never initialized (a version probe) leaves no end.
func TestSessionEnds(t *testing.T) {
	ev := &events{}
	g, err := New(&Config{Servers: []ServerConfig{testServer("alpha")}}, &Options{Mode: ModeAuto, Family: policy.General, Trace: ev, Logger: slog.New(slog.NewTextHandler(newTestWriter(t), &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := g.Ready(context.Background()); err != nil {
		t.Fatal(err)
	}
	url := serveHTTP(t, g, nil)
	ends := func() map[string]string {
		ev.mu.Lock()
		defer ev.mu.Unlock()
		out := map[string]string{}
		for _, e := range ev.all {
			if e.Kind == "end" {
				if _, dup := out[e.Session]; dup {
					t.Errorf("session %s ended twice", e.Session)
				}
				out[e.Session] = e.Reason
			}
		}
		return out
	}
	waitEnd := func(key, why string) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for !strings.Contains(ends()[key], why) {
			if time.Now().After(deadline) {
				t.Fatalf("no end of session %s saying %q: %v", key, why, ends())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	named := connect(t, url, nil, map[string]string{SessionHeader: "a"})
	findNames(t, named, "echo the text back")
	open := connect(t, url, nil, nil)
	res, body := post(t, url, nil, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"probe","version":"1"}}}`)
	if res.StatusCode != 200 {
		t.Fatalf("a probe's initialize: %s %s", res.Status, body)
	}
	named.Close()
	waitEnd("a", "session ended: closed by its client")
	if e, _ := ev.last("end"); e.Finds != 1 || len(e.Exposed) == 0 || e.Mode != "auto" {
		t.Errorf("the end of a: finds %d, exposed %v, mode %q", e.Finds, e.Exposed, e.Mode)
	}

	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- g.ServeStdio(context.Background(), inR, outW, "stdio-x"); outW.Close() }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(context.Background(), &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	listNames(t, cs)
	inW.Close() // the client goes away
	<-done
	waitEnd("stdio-x", "session ended: its client disconnected")

	listNames(t, open)
	g.Close()
	got := ends()
	if len(got) != 3 {
		t.Errorf("ends %v, want a, stdio-x and the open anonymous session (none for the probe)", got)
	}
	stopped := 0
	for _, why := range got {
		if why == "session ended: the gateway stopped" {
			stopped++
		}
	}
	if stopped != 1 {
		t.Errorf("ends %v, want one session ended by the gateway stopping", got)
	}
}
