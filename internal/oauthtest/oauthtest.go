// Package oauthtest runs, for tests, a small OAuth 2.1 authorization
// server and, behind it, a real MCP server (the go-sdk's streamable HTTP
// handler) that requires its bearer tokens: protected-resource metadata,
// authorization-server metadata, dynamic client registration, an
// /authorize that redirects straight back with a code (checking PKCE
// S256 later at /token), and a /token that issues and refreshes tokens.
package oauthtest

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// World is the authorization server and the MCP server it protects.
type World struct {
	// MCPURL is the MCP server's endpoint; AuthURL the authorization
	// server's issuer.
	MCPURL, AuthURL string
	// Tool is the name of the one tool the MCP server offers.
	Tool string

	mu       sync.Mutex
	clients  map[string][]string // client_id -> redirect URIs
	codes    map[string]grant    // code -> what it was issued for
	valid    map[string]bool     // access tokens the MCP server accepts
	refresh  map[string]bool     // refresh tokens the server accepts
	n        int
	counts   map[string]int
	problems []string
}

type grant struct{ clientID, redirect, challenge string }

// Count reports how many times an event happened: "register",
// "authorize", "code" (tokens for a code), "refresh", "mcp-ok" (MCP
// requests with a valid token), "mcp-refused".
func (w *World) Count(event string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.counts[event]
}

// Problems lists the protocol errors the servers saw (a bad PKCE
// verifier, an unknown client, ...); a correct client causes none.
func (w *World) Problems() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.problems...)
}

// RevokeAll makes every token issued so far invalid.
func (w *World) RevokeAll() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.valid, w.refresh = map[string]bool{}, map[string]bool{}
}

func (w *World) problem(format string, args ...any) {
	w.problems = append(w.problems, fmt.Sprintf(format, args...))
}

// New starts both servers; they stop when the test ends.
func New(t testing.TB) *World {
	w := &World{Tool: "search_docs", clients: map[string][]string{}, codes: map[string]grant{},
		valid: map[string]bool{}, refresh: map[string]bool{}, counts: map[string]int{}}
	as := httptest.NewServer(http.HandlerFunc(w.authServer))
	t.Cleanup(as.Close)
	w.AuthURL = as.URL

	server := mcp.NewServer(&mcp.Implementation{Name: "docs", Version: "1"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: w.Tool, Description: "Search the team's documentation"},
		func(ctx context.Context, req *mcp.CallToolRequest, in struct {
			Query string `json:"query"`
		}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "found: " + in.Query}}}, nil, nil
		})
	mux := http.NewServeMux()
	rs := httptest.NewServer(mux)
	t.Cleanup(rs.Close)
	w.MCPURL = rs.URL + "/mcp"
	mux.Handle("/.well-known/oauth-protected-resource/mcp", auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource: w.MCPURL, AuthorizationServers: []string{as.URL}, ScopesSupported: []string{"docs:read"},
	}))
	verify := func(ctx context.Context, token string, r *http.Request) (*auth.TokenInfo, error) {
		w.mu.Lock()
		defer w.mu.Unlock()
		if !w.valid[token] {
			w.counts["mcp-refused"]++
			return nil, auth.ErrInvalidToken
		}
		w.counts["mcp-ok"]++
		return &auth.TokenInfo{Scopes: []string{"docs:read"}, Expiration: time.Now().Add(time.Hour)}, nil
	}
	mux.Handle("/mcp", auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{
		ResourceMetadataURL: rs.URL + "/.well-known/oauth-protected-resource/mcp",
	})(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)))
	return w
}

func (w *World) authServer(rw http.ResponseWriter, r *http.Request) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch r.URL.Path {
	case "/.well-known/oauth-authorization-server":
		writeJSON(rw, http.StatusOK, map[string]any{
			"issuer": w.AuthURL, "authorization_endpoint": w.AuthURL + "/authorize",
			"token_endpoint": w.AuthURL + "/token", "registration_endpoint": w.AuthURL + "/register",
			"response_types_supported": []string{"code"}, "grant_types_supported": []string{"authorization_code", "refresh_token"},
			"code_challenge_methods_supported": []string{"S256"}, "token_endpoint_auth_methods_supported": []string{"none"},
			"scopes_supported": []string{"docs:read", "offline_access"},
		})
	case "/register":
		var m struct {
			RedirectURIs []string `json:"redirect_uris"`
		}
		if err := json.NewDecoder(r.Body).Decode(&m); err != nil || len(m.RedirectURIs) == 0 {
			w.problem("register: bad metadata (%v)", err)
			writeJSON(rw, http.StatusBadRequest, map[string]string{"error": "invalid_client_metadata"})
			return
		}
		w.n++
		id := fmt.Sprintf("client-%d", w.n)
		w.clients[id] = m.RedirectURIs
		w.counts["register"]++
		writeJSON(rw, http.StatusCreated, map[string]any{"client_id": id, "redirect_uris": m.RedirectURIs, "token_endpoint_auth_method": "none"})
	case "/authorize":
		q := r.URL.Query()
		redirect := q.Get("redirect_uri")
		ok := false
		for _, u := range w.clients[q.Get("client_id")] {
			ok = ok || u == redirect
		}
		if !ok || q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("resource") != w.MCPURL {
			w.problem("authorize: bad request %s", r.URL.RawQuery)
			http.Error(rw, "bad authorization request", http.StatusBadRequest)
			return
		}
		w.n++
		code := fmt.Sprintf("code-%d", w.n)
		w.codes[code] = grant{q.Get("client_id"), redirect, q.Get("code_challenge")}
		w.counts["authorize"]++
		u, _ := url.Parse(redirect)
		v := u.Query()
		v.Set("code", code)
		v.Set("state", q.Get("state"))
		u.RawQuery = v.Encode()
		http.Redirect(rw, r, u.String(), http.StatusFound)
	case "/token":
		if err := r.ParseForm(); err != nil {
			http.Error(rw, err.Error(), http.StatusBadRequest)
			return
		}
		switch r.PostForm.Get("grant_type") {
		case "authorization_code":
			g, ok := w.codes[r.PostForm.Get("code")]
			delete(w.codes, r.PostForm.Get("code"))
			sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
			switch {
			case !ok:
				w.problem("token: unknown code")
			case g.clientID != r.PostForm.Get("client_id") || g.redirect != r.PostForm.Get("redirect_uri"):
				w.problem("token: client or redirect differ from the authorization")
			case base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge:
				w.problem("token: PKCE verifier does not match the challenge")
			default:
				w.counts["code"]++
				w.issue(rw)
				return
			}
		case "refresh_token":
			if rt := r.PostForm.Get("refresh_token"); w.refresh[rt] {
				delete(w.refresh, rt)
				w.counts["refresh"]++
				w.issue(rw)
				return
			}
			w.problem("token: unknown refresh token")
		default:
			w.problem("token: grant_type %q", r.PostForm.Get("grant_type"))
		}
		writeJSON(rw, http.StatusBadRequest, map[string]string{"error": "invalid_grant"})
	default:
		http.NotFound(rw, r)
	}
}

// issue answers a new access and refresh token; the previous access
// tokens stop working, so a client must use the newest.
func (w *World) issue(rw http.ResponseWriter) {
	w.n++
	access, refresh := fmt.Sprintf("access-%d", w.n), fmt.Sprintf("refresh-%d", w.n)
	w.valid = map[string]bool{access: true}
	w.refresh[refresh] = true
	writeJSON(rw, http.StatusOK, map[string]any{"access_token": access, "token_type": "Bearer", "expires_in": 3600, "refresh_token": refresh})
}

// Browse plays the user's browser: it opens the authorization URL and
// follows the redirect back to the client's loopback listener.
func Browse(authURL string) error {
	resp, err := http.Get(authURL)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return errors.New("the sign-in ended with " + resp.Status)
	}
	return nil
}

func writeJSON(rw http.ResponseWriter, status int, v any) {
	rw.Header().Set("Content-Type", "application/json")
	rw.WriteHeader(status)
	json.NewEncoder(rw).Encode(v)
}
