package gateway

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestListen(t *testing.T) {
	tests := []struct {
		addr, token string
		wantErr     error
	}{
		{"127.0.0.1:0", "", nil},
		{"localhost:0", "", nil},
		{":0", "", nil}, // no host: loopback
		{"0.0.0.0:0", "", ErrTokenRequired},
		{"0.0.0.0:0", "secret", nil},
	}
	for _, tc := range tests {
		ln, err := Listen(tc.addr, tc.token)
		if !errors.Is(err, tc.wantErr) {
			t.Errorf("Listen(%q, %q) = %v, want %v", tc.addr, tc.token, err, tc.wantErr)
		}
		if ln != nil {
			if tc.addr == ":0" && !strings.HasPrefix(ln.Addr().String(), "127.0.0.1:") {
				t.Errorf("Listen(:0) bound %s, want loopback", ln.Addr())
			}
			ln.Close()
		}
	}
}

func TestHTTPProtection(t *testing.T) {
	g := startGateway(t, []ServerConfig{testServer("a")}, &Options{Mode: ModeAll})
	url := serveHTTP(t, g, &HTTPOptions{Token: "s3cret"})
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	post := func(h map[string]string) (int, string) {
		req, _ := http.NewRequest("POST", url, strings.NewReader(init))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range h {
			req.Header.Set(k, v)
		}
		if h["Host"] != "" {
			req.Host = h["Host"]
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	tests := []struct {
		name    string
		headers map[string]string
		want    int
	}{
		{"no token", nil, http.StatusUnauthorized},
		{"wrong token", map[string]string{"Authorization": "Bearer nope"}, http.StatusUnauthorized},
		{"token", map[string]string{"Authorization": "Bearer s3cret"}, http.StatusOK},
		{"dns rebinding", map[string]string{"Authorization": "Bearer s3cret", "Host": "evil.example:80"}, http.StatusForbidden},
		{"cross-origin", map[string]string{"Authorization": "Bearer s3cret", "Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got, body := post(tc.headers); got != tc.want {
				t.Errorf("status %d (%s), want %d", got, body, tc.want)
			}
		})
	}
	// Metrics are served behind the same token.
	req, _ := http.NewRequest("GET", strings.TrimSuffix(url, "/mcp")+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer s3cret")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(b), "capbroker_gateway_upstream_up") {
		t.Errorf("metrics: %s", b)
	}
}

// TestHTTPGuardEveryPath checks that /status and /metrics, not only /mcp,
// refuse a DNS-rebinding Host and a page of another origin (they answered
// any Host and Origin before), and that --allow-host widens the check.
func TestHTTPGuardEveryPath(t *testing.T) {
	g := startGateway(t, []ServerConfig{testServer("a")}, &Options{Mode: ModeAll})
	base := strings.TrimSuffix(serveHTTP(t, g, &HTTPOptions{AllowedHosts: []string{"gw.internal"}}), "/mcp")
	get := func(path string, h map[string]string) (int, string) {
		req, _ := http.NewRequest("GET", base+path, nil)
		for k, v := range h {
			req.Header.Set(k, v)
		}
		if h["Host"] != "" {
			req.Host = h["Host"]
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	for _, path := range []string{"/status", "/metrics"} {
		for _, tc := range []struct {
			name    string
			headers map[string]string
			want    int
		}{
			{"loopback", nil, http.StatusOK},
			{"localhost", map[string]string{"Host": "localhost"}, http.StatusOK},
			{"allowed host", map[string]string{"Host": "gw.internal:9000"}, http.StatusOK},
			{"dns rebinding", map[string]string{"Host": "evil.example"}, http.StatusForbidden},
			{"foreign origin", map[string]string{"Origin": "https://evil.example"}, http.StatusForbidden},
		} {
			t.Run(path+" "+tc.name, func(t *testing.T) {
				if got, body := get(path, tc.headers); got != tc.want {
					t.Errorf("status %d (%.200s), want %d", got, body, tc.want)
				}
			})
		}
	}
}

// TestServeTimeouts runs the gateway's HTTP face through Serve with short
// bounds: a client that never ends its body and an idle keep-alive
// connection are closed. Before, Serve had only a header timeout and held
// both forever.
func TestServeTimeouts(t *testing.T) {
	g := startGateway(t, []ServerConfig{testServer("a")}, &Options{Mode: ModeAll})
	ln, err := Listen("127.0.0.1:0", "")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, ln, g.Handler(nil), &ServeOptions{ReadTimeout: 150 * time.Millisecond, IdleTimeout: 150 * time.Millisecond})
	}()
	t.Cleanup(func() { cancel(); <-done })
	closed := func(c net.Conn) bool {
		c.SetReadDeadline(time.Now().Add(20 * time.Second)) // patience, not a bound under test
		_, err := io.ReadAll(c)
		var ne net.Error
		return !errors.As(err, &ne) || !ne.Timeout()
	}
	t.Run("slow body", func(t *testing.T) {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		io.WriteString(c, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{\"jsonrpc\":")
		if !closed(c) {
			t.Error("a client that never ends its body holds the connection")
		}
	})
	t.Run("idle keep-alive", func(t *testing.T) {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		io.WriteString(c, "GET /status HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("/status: %d", res.StatusCode)
		}
		if !closed(c) {
			t.Error("an idle keep-alive connection is held")
		}
	})
}
