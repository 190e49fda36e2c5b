package gateway

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/capbroker/capbroker/policy"
)

// TestReconcile changes the servers of a running gateway under a
// connected client: an added server's tools join the list, a removed
// one's leave it, each time with notifications/tools/list_changed, and a
// server whose definition is unchanged keeps running (not restarted).
func TestReconcile(t *testing.T) {
	alpha, beta := testServer("alpha"), testServer("beta")
	g := startGateway(t, []ServerConfig{alpha}, &Options{Mode: ModeAll, Family: policy.General, AllowIrreversible: true})
	url := serveHTTP(t, g, nil)
	changed := make(chan struct{}, 10)
	cs := connect(t, url, &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
		changed <- struct{}{}
	}}, nil)
	has := func(prefix string) bool {
		return slices.ContainsFunc(listNames(t, cs), func(n string) bool { return strings.HasPrefix(n, prefix) })
	}
	if !has("alpha__") || has("beta__") {
		t.Fatalf("before: %v", listNames(t, cs))
	}
	waitChanged := func(what string) {
		t.Helper()
		select {
		case <-changed:
		case <-time.After(30 * time.Second):
			t.Fatalf("no list_changed after %s", what)
		}
	}
	wait := func(what string, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: tools %v", what, listNames(t, cs))
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	alphaUp := g.upstream("alpha")

	ch := g.Reconcile([]ServerConfig{alpha, beta})
	if !slices.Equal(ch.Added, []string{"beta"}) || len(ch.Removed)+len(ch.Restarted) != 0 {
		t.Errorf("adding beta: %+v", ch)
	}
	waitChanged("adding beta")
	wait("adding beta", func() bool { return has("beta__") && has("alpha__") })
	if g.upstream("alpha") != alphaUp {
		t.Error("alpha, unchanged, was restarted")
	}
	if text, isErr := callText(t, cs, "beta__echo", map[string]any{"text": "hi"}); isErr || !strings.Contains(text, "hi") {
		t.Errorf("calling the added server: %q (error %v)", text, isErr)
	}

	ch = g.Reconcile([]ServerConfig{beta})
	if !slices.Equal(ch.Removed, []string{"alpha"}) {
		t.Errorf("removing alpha: %+v", ch)
	}
	waitChanged("removing alpha")
	wait("removing alpha", func() bool { return !has("alpha__") && has("beta__") })

	changedBeta := beta
	changedBeta.Timeout = 42 * time.Second
	if ch = g.Reconcile([]ServerConfig{changedBeta}); !slices.Equal(ch.Restarted, []string{"beta"}) {
		t.Errorf("changing beta: %+v", ch)
	}
	if ch = g.Reconcile([]ServerConfig{changedBeta}); !ch.Empty() {
		t.Errorf("the same list again: %+v", ch)
	}
	// Only where it is written changed (an entry above it in the file got
	// a line longer, "capbroker server disable" of another server): the
	// same server, not restarted.
	movedBeta := changedBeta
	movedBeta.File, movedBeta.Line = "/elsewhere/servers.json", changedBeta.Line+3
	betaUp := g.upstream("beta")
	if ch = g.Reconcile([]ServerConfig{movedBeta}); !ch.Empty() {
		t.Errorf("beta moved down its file: %+v, want nothing restarted", ch)
	}
	if g.upstream("beta") != betaUp {
		t.Error("beta, only moved in its file, was restarted")
	}
}
