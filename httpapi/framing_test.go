package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/capbroker/capbroker/httpapi"
)

// TestExplorerNotFramed: the explorer, its files, the API and refusals
// all tell browsers not to show them in another site's frame. Before,
// any site could frame the explorer.
func TestExplorerNotFramed(t *testing.T) {
	ts := newTestServer(t, &httpapi.Options{Token: "secret"})
	for _, tt := range []struct {
		path   string
		header map[string]string
		status int
	}{
		{"/", nil, 200},
		{"/static/app.js", nil, 200},
		{"/v1/cards", nil, 401},
		{"/v1/cards", map[string]string{"Authorization": "Bearer secret"}, 200},
		{"/", map[string]string{"Origin": "https://evil.example"}, 403},
	} {
		req, _ := http.NewRequest("GET", ts.URL+tt.path, nil)
		for k, v := range tt.header {
			req.Header.Set(k, v)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != tt.status {
			t.Errorf("GET %s: status %d, want %d", tt.path, res.StatusCode, tt.status)
		}
		if got := res.Header.Get("Content-Security-Policy"); got != "frame-ancestors 'none'" {
			t.Errorf("GET %s: Content-Security-Policy %q", tt.path, got)
		}
		if got := res.Header.Get("X-Frame-Options"); got != "DENY" {
			t.Errorf("GET %s: X-Frame-Options %q", tt.path, got)
		}
	}
}
