package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/capbroker/capbroker/internal/oauthtest"
	"github.com/capbroker/capbroker/source/mcpconfig"
)

// browser is the writer Login prints to: it opens the authorization URL
// it finds there, as the user would.
type browser struct {
	mu   sync.Mutex
	text strings.Builder
	errs chan error
}

var authURLRE = regexp.MustCompile(`http://127\.0\.0\.1:\d+/authorize\?\S+`)

func (b *browser) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.text.Write(p)
	if u := authURLRE.FindString(string(p)); u != "" {
		go func() { b.errs <- oauthtest.Browse(u) }()
	}
	return len(p), nil
}

// TestLogin: against an OAuth authorization server and a real MCP server
// requiring its tokens, listing fails saying to run capbroker login;
// Login signs in (dynamic registration, PKCE), stores the token 0600,
// and listing then works; an expired token is refreshed and the new one
// stored; a revoked one says to sign in again.
func TestLogin(t *testing.T) {
	w := oauthtest.New(t)
	ctx := context.Background()
	s := mcpconfig.Server{Name: "docs", Transport: mcpconfig.HTTP, URL: w.MCPURL}
	st := &TokenStore{Dir: t.TempDir() + "/oauth"}
	opts := &Options{Timeout: 30 * time.Second, Tokens: st}

	_, err := List(ctx, s, opts)
	if !errors.Is(err, ErrNeedsAuth) || !strings.Contains(err.Error(), "run capbroker login docs") {
		t.Fatalf("before login: err = %v", err)
	}

	b := &browser{errs: make(chan error, 1)}
	if err := Login(ctx, s, st, &LoginOptions{Out: b, Timeout: time.Minute}); err != nil {
		t.Fatalf("Login: %v\n%s", err, b.text.String())
	}
	if err := <-b.errs; err != nil {
		t.Fatalf("browser: %v", err)
	}
	if !strings.Contains(b.text.String(), "Signed in to MCP server docs") {
		t.Errorf("Login printed:\n%s", b.text.String())
	}
	for _, e := range []string{"register", "authorize", "code"} {
		if w.Count(e) != 1 {
			t.Errorf("%s happened %d times, want 1", e, w.Count(e))
		}
	}
	fi, err := os.Stat(st.path("docs"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v %v", fi, err)
	}
	if di, err := os.Stat(st.Dir); err != nil || di.Mode().Perm() != 0o700 {
		t.Fatalf("token folder: %v %v", di, err)
	}

	cards, err := List(ctx, s, opts)
	if err != nil || len(cards) != 1 || byName(cards, "docs__"+w.Tool) == nil && byName(cards, w.Tool) == nil {
		t.Fatalf("after login: %v %v", names(cards), err)
	}

	// The token expires: the next listing refreshes it and stores the
	// new one (the server now refuses the old one).
	l, err := st.load("docs", w.MCPURL)
	if err != nil || l == nil {
		t.Fatalf("load: %v %v", l, err)
	}
	old := l.Token.AccessToken
	l.Token.Expiry = time.Now().Add(-time.Minute)
	if err := st.save(l); err != nil {
		t.Fatal(err)
	}
	if _, err := List(ctx, s, opts); err != nil {
		t.Fatalf("after expiry: %v", err)
	}
	if w.Count("refresh") != 1 {
		t.Errorf("refreshes = %d, want 1", w.Count("refresh"))
	}
	l2, _ := st.load("docs", w.MCPURL)
	if l2 == nil || l2.Token.AccessToken == old || !l2.Token.Expiry.After(time.Now()) {
		t.Errorf("stored token after refresh: %+v (old %s)", l2, old)
	}
	if _, err := List(ctx, s, opts); err != nil || w.Count("refresh") != 1 {
		t.Errorf("a fresh stored token is used as is: %v, refreshes %d", err, w.Count("refresh"))
	}

	// A login is for one URL: another server of the same name gets nothing.
	if st.Has("docs", w.MCPURL+"/other") {
		t.Error("the login is offered to another URL")
	}

	w.RevokeAll()
	_, err = List(ctx, s, opts)
	if !errors.Is(err, ErrNeedsAuth) || !strings.Contains(err.Error(), "refused the token capbroker login obtained") ||
		!strings.Contains(err.Error(), "run capbroker login docs") {
		t.Errorf("revoked: err = %v", err)
	}
	if p := w.Problems(); len(p) > 0 {
		t.Errorf("protocol problems: %v", p)
	}
	data, _ := os.ReadFile(st.path("docs"))
	var saved map[string]any
	if err := json.Unmarshal(data, &saved); err != nil || saved["client_id"] == "" {
		t.Errorf("stored login: %s (%v)", data, err)
	}
}
