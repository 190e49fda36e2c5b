package httpguard

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestGuard(t *testing.T) {
	g, err := New(&Options{Hosts: []string{"capbroker.internal", "*.corp.example"}, Origins: []string{"https://tools.example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	h := g.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }))
	tests := []struct {
		name, method, host string
		header             map[string]string
		want               int
		wantMsg            string
	}{
		{"loopback address", "GET", "127.0.0.1:8080", nil, 200, ""},
		{"loopback v6", "GET", "[::1]:8080", nil, 200, ""},
		{"localhost", "GET", "localhost:8080", nil, 200, ""},
		{"localhost with a dot", "GET", "localhost.:8080", nil, 200, ""},
		{"name under .localhost", "GET", "capbroker.localhost:8080", nil, 200, ""},
		{"LAN address", "POST", "192.168.1.5:8080", nil, 200, ""},
		{"no Host (HTTP/1.0)", "GET", "", nil, 200, ""},
		{"allowed name", "GET", "capbroker.internal:8080", nil, 200, ""},
		{"allowed domain", "GET", "a.corp.example", nil, 200, ""},
		{"dns rebinding name", "GET", "evil.example:8080", nil, 403, "Host \"evil.example:8080\" refused"},
		{"rebinding with a loopback-looking name", "GET", "127.0.0.1.nip.io:8080", nil, 403, "DNS rebinding"},
		{"domain itself not allowed by *.", "GET", "corp.example", nil, 403, "--allow-host"},
		{"same origin", "POST", "localhost:8080", map[string]string{"Origin": "http://localhost:8080", "Sec-Fetch-Site": "same-origin"}, 200, ""},
		{"same origin without fetch metadata", "POST", "localhost:8080", map[string]string{"Origin": "http://localhost:8080"}, 200, ""},
		{"foreign origin POST", "POST", "localhost:8080", map[string]string{"Origin": "https://evil.example"}, 403, "cross-origin"},
		{"foreign origin GET", "GET", "localhost:8080", map[string]string{"Origin": "https://evil.example"}, 403, "--allow-origin"},
		{"other port is another origin", "POST", "localhost:8080", map[string]string{"Origin": "http://localhost:3000"}, 403, "cross-origin"},
		{"null origin", "POST", "localhost:8080", map[string]string{"Origin": "null"}, 403, "cross-origin"},
		{"cross-site fetch metadata only", "POST", "localhost:8080", map[string]string{"Sec-Fetch-Site": "cross-site"}, 403, "cross-origin"},
		{"allowed origin", "POST", "localhost:8080", map[string]string{"Origin": "https://tools.example.com", "Sec-Fetch-Site": "cross-site"}, 200, ""},
		{"no origin (curl, SDKs)", "POST", "localhost:8080", nil, 200, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(tc.method, "/v1/select", strings.NewReader("{}"))
			r.Host = tc.host
			for k, v := range tc.header {
				r.Header.Set(k, v)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != tc.want || !strings.Contains(w.Body.String(), tc.wantMsg) {
				t.Errorf("%s Host %q %v: %d %q, want %d with %q", tc.method, tc.host, tc.header, w.Code, w.Body, tc.want, tc.wantMsg)
			}
		})
	}
}

func TestBadOrigin(t *testing.T) {
	if _, err := New(&Options{Origins: []string{"tools.example.com/x"}}); err == nil || !strings.Contains(err.Error(), "tools.example.com/x") {
		t.Errorf("New with a malformed origin: %v, want an error naming it", err)
	}
}
