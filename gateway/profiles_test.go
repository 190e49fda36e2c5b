package gateway

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/capbroker/capbroker/identity"
	"github.com/capbroker/capbroker/policy"
)

// TestGatewayProfiles serves named profiles at every level: the
// gateway's own keeps its catalog to server alpha without sleep and pins
// alpha__pid; an identity's named profile and a request's
// Capbroker-Profile header narrow one session further and pin their own
// tools; an unknown profile in the header is refused with 400; and
// SetProfiles applies edits while clients are connected (list_changed,
// new pins listed, a call refused before allowed after).
func TestGatewayProfiles(t *testing.T) {
	const carolToken, daveToken, erinToken = "carol-secret-token", "dave-secret-token", "erin-secret-token"
	ids, err := identity.Parse([]byte(`identities:
  - name: carol
    token_sha256: `+identity.Hash(carolToken)+`
    profile: echoes
  - name: dave
    token_sha256: `+identity.Hash(daveToken)+`
  - name: erin
    token_sha256: `+identity.Hash(erinToken)+`
    profile: {servers: [beta], always: [beta__reword]}
`), "ids.yaml")
	if err != nil {
		t.Fatal(err)
	}
	named := func(src string) *identity.Profiles {
		ps, err := identity.ParseProfiles([]byte(src), "profiles.json")
		if err != nil {
			t.Fatal(err)
		}
		return ps
	}
	serve := identity.Profile{Servers: []string{"alpha", "beta"}, Deny: []string{"*__sleep"}, Always: []string{"alpha__pid", "beta__pid"}}
	ps := Profiles{Serve: []identity.Profile{serve}, ServeNames: []string{"work"},
		Named: named(`{"profiles": {"echoes": {"tools": ["*__echo"], "always": ["beta__echo"]}, "alphaonly": {"servers": ["alpha"]}}}`)}
	g, err := New(&Config{Servers: []ServerConfig{testServer("alpha"), testServer("beta"), testServer("gamma")}},
		&Options{Mode: ModeAuto, Family: policy.General, Logger: slog.New(slog.NewTextHandler(newTestWriter(t), &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		t.Fatal(err)
	}
	g.SetProfiles(Profiles{Serve: []identity.Profile{{Servers: []string{"alpha"}, Deny: []string{"*__sleep"}, Always: []string{"alpha__pid"}}},
		ServeNames: []string{"work"}, Named: ps.Named})
	if err := g.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	if err := g.Ready(context.Background()); err != nil {
		t.Fatal(err)
	}
	url := serveHTTP(t, g, &HTTPOptions{Identities: ids})
	bearer := func(tok string, more ...string) map[string]string {
		h := map[string]string{"Authorization": "Bearer " + tok}
		for i := 0; i+1 < len(more); i += 2 {
			h[more[i]] = more[i+1]
		}
		return h
	}
	var changes atomic.Int64
	onChange := &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changes.Add(1) }}
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: timed out", what)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}

	// The gateway's profile: alpha only, no sleep, alpha__pid pinned.
	dave := connect(t, url, onChange, bearer(daveToken))
	if got := listNames(t, dave); !slices.Contains(got, "alpha__pid") || slices.ContainsFunc(got, func(n string) bool {
		return !strings.HasPrefix(n, "alpha__") && n != policy.HatchName && n != CallName && n != RouteName
	}) {
		t.Errorf("dave's list under the gateway's profile: %v, want alpha__pid pinned and no other server's tool", got)
	}
	if found := findNames(t, dave, "echo the text back"); !slices.Contains(found, "alpha__echo") || slices.Contains(found, "beta__echo") {
		t.Errorf("dave's find: %v, want alpha__echo, no beta tool", found)
	}
	for _, name := range []string{"beta__echo", "alpha__sleep", "gamma__pid"} {
		if text, isErr := callText(t, dave, name, map[string]any{"text": "x", "ms": 1}); !isErr {
			t.Errorf("dave calls %s outside the gateway's profile: %q", name, text)
		}
	}

	// A request's profile narrows further; an unknown one is refused.
	res, body := post(t, url, bearer(daveToken, ProfileHeader, "nope"),
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(body, `profile "nope" is not defined in profiles.json`) {
		t.Errorf("an unknown profile in the header: %s %s", res.Status, body)
	}
	res, body = post(t, url+"?profile=nope", bearer(daveToken),
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(body, `profile "nope" is not defined`) {
		t.Errorf("an unknown ?profile=: %s %s", res.Status, body)
	}

	req, _ := http.NewRequest(http.MethodGet, strings.TrimSuffix(url, "/mcp")+"/status", nil)
	req.Header.Set("Authorization", "Bearer "+daveToken)
	if r, err := http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	} else {
		var st struct{ Profiles []string }
		json.NewDecoder(r.Body).Decode(&st)
		r.Body.Close()
		if !slices.Equal(st.Profiles, []string{"work"}) {
			t.Errorf("/status profiles: %v, want [work]", st.Profiles)
		}
	}

	// Edit: the gateway now serves alpha and beta, and pins beta__pid too.
	before := changes.Load()
	g.SetProfiles(ps)
	waitFor("dave's list_changed after the gateway's profile widened", func() bool { return changes.Load() > before })
	waitFor("beta__pid pinned in dave's list", func() bool { return slices.Contains(listNames(t, dave), "beta__pid") })
	if text, isErr := callText(t, dave, "beta__echo", map[string]any{"text": "hi"}); isErr || text != "beta: hi" {
		t.Errorf("dave calls beta__echo once beta is served: %v %q", isErr, text)
	}

	// carol's identity names profile echoes: only echo tools, beta__echo pinned.
	carol := connect(t, url, onChange, bearer(carolToken))
	got := listNames(t, carol)
	if !slices.Contains(got, "beta__echo") || slices.Contains(got, "alpha__pid") {
		t.Errorf("carol's list (profile echoes): %v, want beta__echo pinned, alpha__pid not allowed", got)
	}
	if text, isErr := callText(t, carol, "alpha__pid", nil); !isErr || !strings.Contains(text, "outside profile echoes (of identity carol)") {
		t.Errorf("carol calls alpha__pid: %v %q", isErr, text)
	}
	// Her finds are filtered to the profile and keep the answer's shape:
	// each match's name first, the answer compact.
	if text, isErr := callText(t, carol, policy.HatchName, map[string]any{"query": "echo the text back, or say the process id"}); isErr ||
		!strings.HasPrefix(text, `{"matches":[{"name":"`) || strings.Contains(text, "__pid") || strings.Contains(text, "\n  ") {
		t.Errorf("carol's find (profile echoes): %v %s", isErr, text)
	}
	// erin's inline profile pins its own tool too.
	erin := connect(t, url, nil, bearer(erinToken))
	if got := listNames(t, erin); !slices.Contains(got, "beta__reword") || !slices.Contains(got, "beta__pid") || slices.Contains(got, "alpha__pid") {
		t.Errorf("erin's list (inline profile: beta, pins beta__reword): %v", got)
	}
	// The URL's profile (client add --shared --profile writes it) keeps
	// dave's second session to alpha.
	dave2 := connect(t, url+"?profile=alphaonly", nil, bearer(daveToken))
	if text, isErr := callText(t, dave2, "beta__echo", map[string]any{"text": "x"}); !isErr || !strings.Contains(text, "outside profile alphaonly (of the request: Capbroker-Profile or ?profile=)") {
		t.Errorf("dave's alphaonly session calls beta__echo: %v %q", isErr, text)
	}
	// Forgiving names reach nothing outside the profile, nor suggest it:
	// a prefixed name or call_capability is refused, saying which profile;
	// a loose one resolves among alpha's tools only.
	for _, c := range []struct {
		name string
		args map[string]any
	}{
		{"mcp__capbroker__beta__echo", map[string]any{"text": "x"}},
		{CallName, map[string]any{"name": "beta__echo", "arguments": map[string]any{"text": "x"}}},
		{CallName, map[string]any{"name": "mcp__capbroker__beta__echo", "arguments": map[string]any{"text": "x"}}},
	} {
		if text, isErr := callText(t, dave2, c.name, c.args); !isErr || !strings.Contains(text, "outside profile alphaonly") {
			t.Errorf("dave's alphaonly session calls %s %v: %v %q, want refused as outside profile alphaonly", c.name, c.args, isErr, text)
		}
	}
	if text, isErr := callText(t, dave2, "BETA.Echo", map[string]any{"text": "x"}); !isErr || strings.Contains(text, "beta__") {
		t.Errorf("dave's alphaonly session calls BETA.Echo: %v %q, want refused naming no beta tool", isErr, text)
	}
	if text, isErr := callText(t, dave2, "echo", map[string]any{"text": "x"}); isErr || text != "alpha: x" {
		t.Errorf("dave's alphaonly session calls echo (alpha__echo within the profile): %v %q", isErr, text)
	}

	// Edit echoes: it now allows pid tools too; carol hears of it.
	before = changes.Load()
	g.SetProfiles(Profiles{Serve: ps.Serve, ServeNames: ps.ServeNames,
		Named: named(`{"profiles": {"echoes": {"tools": ["*__echo", "*__pid"], "always": ["beta__echo"]}, "alphaonly": {"servers": ["alpha"]}}}`)})
	waitFor("list_changed after profile echoes changed", func() bool { return changes.Load() > before })
	if text, isErr := callText(t, carol, "alpha__pid", nil); isErr {
		t.Errorf("carol calls alpha__pid once echoes allows it: %q", text)
	}
	// Profile echoes removed: carol's session keeps within nothing.
	g.SetProfiles(Profiles{Serve: ps.Serve, ServeNames: ps.ServeNames, Named: named(`{}`)})
	if text, isErr := callText(t, carol, "beta__echo", map[string]any{"text": "x"}); !isErr || !strings.Contains(text, "profile echoes (of identity carol) is no longer defined") {
		t.Errorf("carol calls beta__echo with her profile gone: %v %q", isErr, text)
	}
}
