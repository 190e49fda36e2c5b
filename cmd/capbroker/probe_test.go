package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestProbe(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/readyz" {
			http.Error(w, `{"ready":false,"why":["draining"]}`, http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("ok\n"))
	}))
	defer srv.Close()
	for _, tc := range []struct {
		path, want string
	}{
		{"/healthz", ""},
		{"/readyz", "503 Service Unavailable"},
	} {
		_, stderr, code := run(t, "probe", srv.URL+tc.path)
		if tc.want == "" && code != 0 {
			t.Errorf("probe %s: exit %d (%s)", tc.path, code, stderr)
		}
		if tc.want != "" && (code == 0 || !strings.Contains(stderr, tc.want) || !strings.Contains(stderr, "draining")) {
			t.Errorf("probe %s: exit %d, stderr %q; want an error with %q and the body", tc.path, code, stderr, tc.want)
		}
	}
}
