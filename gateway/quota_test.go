package gateway

import (
	"net/http"
	"strings"
	"testing"
)

// TestClientSessionQuota: one client (here, by its address) cannot take
// every session: past MaxClientSessions its next one is refused with 429
// naming --max-client-sessions, while another client (a session key of
// its own) still gets one; when one of its sessions ends, it may open
// another. Before, one client could open all MaxSessions.
func TestClientSessionQuota(t *testing.T) {
	g := startGateway(t, nil, &Options{Mode: ModeSearch, MaxSessions: 10})
	url := serveHTTP(t, g, &HTTPOptions{MaxClientSessions: 3})
	c := &http.Client{}
	var ids []string
	for range 3 {
		id, status, body, err := rawSession(c, url)
		if err != nil || status != http.StatusOK {
			t.Fatalf("session %d: %d %s %v", len(ids)+1, status, body, err)
		}
		ids = append(ids, id)
	}
	for range 2 { // refusals do not count
		_, status, body, err := rawSession(c, url)
		if err != nil || status != http.StatusTooManyRequests || !strings.Contains(body, "--max-client-sessions") {
			t.Fatalf("a 4th session of one client: %d %q %v; want 429 naming --max-client-sessions", status, body, err)
		}
	}
	if _, status, body, err := rawSession(c, url+"?session=other-client"); err != nil || status != http.StatusOK {
		t.Fatalf("another client's session: %d %s %v", status, body, err)
	}
	req, _ := http.NewRequest(http.MethodDelete, url, nil)
	req.Header.Set("Mcp-Session-Id", ids[0])
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	eventually(t, "the deleted session ends", func() bool { return len(g.liveSessions()) == 3 })
	eventually(t, "the client may open one again", func() bool {
		_, status, _, err := rawSession(c, url)
		return err == nil && status == http.StatusOK
	})
}
