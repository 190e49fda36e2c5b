package httpguard

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// serve runs t's server for h on loopback and returns its address.
func serve(tb testing.TB, to Timeouts, h http.Handler) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	srv := to.Server(h)
	go srv.Serve(ln)
	tb.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// closedWithin reports whether the server closes c (a read ends in EOF
// or a reset) before the test's patience runs out. The patience is far
// longer than the timeouts under test: it only keeps a broken server from
// hanging the test.
func closedWithin(c net.Conn) bool {
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	_, err := io.ReadAll(c)
	ne, ok := err.(net.Error)
	return !(ok && ne.Timeout())
}

// TestTimeouts checks each bound against a client that stops sending:
// a slow body and an idle keep-alive connection are closed; a handler
// that takes longer than the read bound after reading its body still
// answers (a streamed MCP reply must not be cut).
func TestTimeouts(t *testing.T) {
	const short = 150 * time.Millisecond
	to := Timeouts{Header: short, Read: short, Write: -1, Idle: short}
	addr := serve(t, to, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			return
		}
		if string(b) == "slow-reply" {
			time.Sleep(4 * short)
		}
		w.Write([]byte("done:" + string(b)))
	}))
	dial := func(t *testing.T) net.Conn {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	t.Run("slow headers", func(t *testing.T) {
		c := dial(t)
		io.WriteString(c, "POST / HTTP/1.1\r\nHost: localhost\r\n")
		if !closedWithin(c) {
			t.Error("a client that never ends its headers holds the connection")
		}
	})
	t.Run("slow body", func(t *testing.T) {
		c := dial(t)
		io.WriteString(c, "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100\r\n\r\nonly part")
		if !closedWithin(c) {
			t.Error("a client that never ends its body holds the connection")
		}
	})
	t.Run("idle keep-alive", func(t *testing.T) {
		c := dial(t)
		io.WriteString(c, "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2\r\n\r\nhi")
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		if string(b) != "done:hi" {
			t.Fatalf("reply %q", b)
		}
		if !closedWithin(c) {
			t.Error("an idle keep-alive connection is held")
		}
	})
	t.Run("long reply after the body", func(t *testing.T) {
		res, err := http.Post("http://"+addr+"/", "text/plain", strings.NewReader("slow-reply"))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		if err != nil || string(b) != "done:slow-reply" {
			t.Errorf("a reply that takes longer than the read bound: %q, %v", b, err)
		}
	})
}

func TestTimeoutDefaults(t *testing.T) {
	srv := Timeouts{Write: -1}.Server(http.NotFoundHandler())
	if srv.ReadHeaderTimeout != DefaultTimeouts.Header || srv.IdleTimeout != DefaultTimeouts.Idle || srv.WriteTimeout != 0 || srv.ReadTimeout != 0 {
		t.Errorf("server timeouts: header %v idle %v write %v read %v", srv.ReadHeaderTimeout, srv.IdleTimeout, srv.WriteTimeout, srv.ReadTimeout)
	}
}
