package gateway

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/capbroker/capbroker/identity"
	"github.com/capbroker/capbroker/policy"
	"github.com/capbroker/capbroker/store"
)

// TestIdentities serves two identities from one identities file: each
// token maps to its identity; alice's profile keeps her to server alpha
// and her quota to two sessions; bob's rate bounds his requests; a
// session is refused to another identity; traces and /metrics name the
// identity, never the token.
func TestIdentities(t *testing.T) {
	const aliceToken, bobToken = "alice-secret-token", "bob-secret-token"
	set, err := identity.Parse([]byte(`identities:
  - name: alice
    token_sha256: `+identity.Hash(aliceToken)+`
    sessions: 2
    profile: {servers: [alpha]}
  - name: bob
    token_sha256: `+identity.Hash(bobToken)+`
    rate: 0.01
    burst: 4
`), "ids.yaml")
	if err != nil {
		t.Fatal(err)
	}
	st := persistentStores[0].db(t)()
	t.Cleanup(func() { st.Close() })
	ss := NewStoreSessions(st, &StoreOptions{Durable: true})
	t.Cleanup(func() { ss.Close() })
	g := startGateway(t, []ServerConfig{testServer("alpha"), testServer("beta")}, &Options{Mode: ModeAuto, Family: policy.General, Store: ss, Trace: ss})
	url := serveHTTP(t, g, &HTTPOptions{Identities: set})
	base := strings.TrimSuffix(url, "/mcp")
	bearer := func(tok string) map[string]string { return map[string]string{"Authorization": "Bearer " + tok} }

	for _, tok := range []string{"", "wrong"} {
		res, _ := post(t, url, bearer(tok), `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
		if res.StatusCode != http.StatusUnauthorized {
			t.Errorf("token %q: %s, want 401", tok, res.Status)
		}
	}
	if code, _ := get(t, base+"/healthz"); code != 200 {
		t.Errorf("/healthz without a token: %d", code)
	}

	alice := connect(t, url, nil, bearer(aliceToken))
	for _, n := range listNames(t, alice) {
		if strings.HasPrefix(n, "beta__") {
			t.Errorf("alice (profile: alpha) is listed %s", n)
		}
	}
	found := findNames(t, alice, "echo the text back")
	if !slices.Contains(found, "alpha__echo") || slices.Contains(found, "beta__echo") {
		t.Errorf("alice's find: %v, want alpha__echo and no beta tool", found)
	}
	if text, isErr := callText(t, alice, "beta__echo", map[string]any{"text": "x"}); !isErr || !strings.Contains(text, "outside this identity's profile") {
		t.Errorf("alice calls beta__echo: %v %q", isErr, text)
	}
	if text, isErr := callText(t, alice, "alpha__echo", map[string]any{"text": "hi"}); isErr || text != "alpha: hi" {
		t.Errorf("alice calls alpha__echo: %v %q", isErr, text)
	}
	connect(t, url, nil, bearer(aliceToken))
	res, body := post(t, url, bearer(aliceToken),
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if res.StatusCode != http.StatusTooManyRequests || !strings.Contains(body, "alice has 2 MCP sessions open") {
		t.Errorf("alice's third session: %s %s", res.Status, body)
	}

	// bob may not use alice's session.
	h := bearer(bobToken)
	h["Mcp-Session-Id"] = alice.ID()
	res, body = post(t, url, h, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if res.StatusCode != http.StatusForbidden {
		t.Errorf("bob with alice's session: %s %s", res.Status, body)
	}
	// bob's burst is 4 (one spent above); then he waits.
	codes := []int{}
	for range 4 {
		req, _ := http.NewRequest(http.MethodGet, base+"/status", nil)
		req.Header.Set("Authorization", "Bearer "+bobToken)
		r, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, r.Body)
		r.Body.Close()
		codes = append(codes, r.StatusCode)
	}
	if !slices.Equal(codes, []int{200, 200, 200, 429}) {
		t.Errorf("bob's requests past his burst: %v, want 200 200 200 429", codes)
	}

	recs, err := st.Traces(context.Background(), &store.TraceQuery{SessionID: alice.ID()})
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	for _, r := range recs {
		var d struct{ Identity string }
		json.Unmarshal(r.Detail, &d)
		if d.Identity != "alice" {
			t.Errorf("trace record %s of alice's session names identity %q", r.Kind, d.Identity)
		}
		calls++
	}
	if calls == 0 {
		t.Error("no trace records of alice's session")
	}
	m, err := st.(store.MCPSessions).MCPSession(context.Background(), alice.ID())
	if err != nil || m.Identity != "alice" {
		t.Errorf("alice's stored session: %+v %v", m, err)
	}

	req, _ := http.NewRequest(http.MethodGet, base+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+aliceToken)
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(r.Body)
	r.Body.Close()
	metrics := string(b)
	for _, want := range []string{`capbroker_gateway_identity_requests_total{identity="alice",outcome="ok"}`,
		`capbroker_gateway_identity_requests_total{identity="alice",outcome="session_quota"} 1`,
		`capbroker_gateway_identity_requests_total{identity="bob",outcome="rate_limited"} 1`,
		`capbroker_gateway_identity_requests_total{identity="",outcome="unauthorized"} 2`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	for _, secret := range []string{aliceToken, bobToken, identity.Hash(aliceToken)} {
		if strings.Contains(metrics, secret) {
			t.Errorf("/metrics shows a token or its digest")
		}
	}
}
