package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/capbroker/capbroker/internal/atomicfile"
	"github.com/capbroker/capbroker/source/mcpconfig"
)

// TokenStore keeps the OAuth tokens capbroker obtained for remote MCP
// servers (capbroker login), one JSON file per server in Dir, readable
// by the owner only (0600, in a 0700 folder), replaced atomically.
// A stored login is used only for the URL it was obtained for.
type TokenStore struct {
	Dir string
}

// login is one stored sign-in: the client registration, the endpoints
// and the token, enough to refresh it without the user.
type login struct {
	Server       string           `json:"server"`
	URL          string           `json:"url"`
	ClientID     string           `json:"client_id"`
	ClientSecret string           `json:"client_secret,omitempty"`
	AuthURL      string           `json:"auth_url"`
	TokenURL     string           `json:"token_url"`
	AuthStyle    oauth2.AuthStyle `json:"auth_style,omitempty"`
	Scopes       []string         `json:"scopes,omitempty"`
	Token        *oauth2.Token    `json:"token"`
}

// path is the file of a server's login: a readable name plus a hash, so
// distinct names never share a file.
func (st *TokenStore) path(server string) string {
	var b strings.Builder
	for _, r := range server {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
		if b.Len() >= 40 {
			break
		}
	}
	sum := sha256.Sum256([]byte(server))
	return filepath.Join(st.Dir, b.String()+"-"+hex.EncodeToString(sum[:4])+".json")
}

// load returns the stored login of server for url, or nil if there is
// none (or it was obtained for another URL).
func (st *TokenStore) load(server, url string) (*login, error) {
	if st == nil || st.Dir == "" {
		return nil, nil
	}
	p := st.path(server)
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) || err == nil && len(data) == 0 {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the OAuth login of MCP server %s: %w", server, err)
	}
	var l login
	if err := json.Unmarshal(data, &l); err != nil || l.Token == nil {
		return nil, fmt.Errorf("reading the OAuth login of MCP server %s from %s: not a capbroker login (%v); run capbroker login %s again", server, p, err, server)
	}
	if l.Server != server || l.URL != url {
		return nil, nil
	}
	return &l, nil
}

// save stores l, 0600, atomically.
func (st *TokenStore) save(l *login) error {
	if err := os.MkdirAll(st.Dir, 0o700); err != nil {
		return fmt.Errorf("storing the OAuth login of MCP server %s: %w", l.Server, err)
	}
	p := st.path(l.Server)
	// A new file gets 0600 before any secret is written: atomicfile keeps
	// the permissions of the file it replaces.
	if f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600); err == nil {
		f.Close()
	}
	if err := os.Chmod(p, 0o600); err != nil {
		return fmt.Errorf("storing the OAuth login of MCP server %s: %w", l.Server, err)
	}
	data, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(p, append(data, '\n')); err != nil {
		return fmt.Errorf("storing the OAuth login of MCP server %s in %s: %w", l.Server, p, err)
	}
	return nil
}

// Has reports whether a login is stored for server at url.
func (st *TokenStore) Has(server, url string) bool {
	l, err := st.load(server, url)
	return err == nil && l != nil
}

// Transport returns base sending the stored access token of server (at
// url) as a bearer token, refreshing it when it has expired and storing
// the refreshed one. Without a stored login it returns base and false.
func (st *TokenStore) Transport(server, url string, base http.RoundTripper) (http.RoundTripper, bool, error) {
	l, err := st.load(server, url)
	if err != nil || l == nil {
		return base, false, err
	}
	cfg := &oauth2.Config{
		ClientID: l.ClientID, ClientSecret: l.ClientSecret, Scopes: l.Scopes,
		Endpoint: oauth2.Endpoint{AuthURL: l.AuthURL, TokenURL: l.TokenURL, AuthStyle: l.AuthStyle},
	}
	src := &savingSource{st: st, l: l, src: cfg.TokenSource(context.Background(), l.Token), last: l.Token.AccessToken}
	return &oauth2.Transport{Source: src, Base: base}, true, nil
}

// savingSource stores a refreshed token so the next run starts from it.
type savingSource struct {
	st   *TokenStore
	src  oauth2.TokenSource
	mu   sync.Mutex
	l    *login
	last string
}

func (s *savingSource) Token() (*oauth2.Token, error) {
	tok, err := s.src.Token()
	if err != nil {
		return nil, fmt.Errorf("refreshing the OAuth token of MCP server %s (run capbroker login %s): %w", s.l.Server, s.l.Server, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if tok.AccessToken != s.last {
		s.last = tok.AccessToken
		l := *s.l
		l.Token = tok
		if err := s.st.save(&l); err != nil {
			return nil, err
		}
	}
	return tok, nil
}

// LoginOptions configures [Login].
type LoginOptions struct {
	// Out receives the authorization URL to open in a browser.
	Out io.Writer
	// Timeout bounds the whole sign-in, the user's included; if zero, 5
	// minutes.
	Timeout time.Duration
	// HTTPClient talks to the server and the authorization server; nil
	// means http.DefaultClient.
	HTTPClient *http.Client
}

// Login signs in to the remote MCP server s with OAuth (authorization
// code with PKCE, the client registered dynamically): it listens for the
// redirect on a loopback address, writes the authorization URL to
// opts.Out, waits for the browser to come back, and stores the token in
// st. A server that asks for no sign-in is an error that says so.
func Login(ctx context.Context, s mcpconfig.Server, st *TokenStore, opts *LoginOptions) error {
	if s.URL == "" || s.Transport == mcpconfig.SSE {
		return fmt.Errorf("capbroker login %s: only remote servers over streamable HTTP sign in with OAuth; this one is %s", s.Name, s.Transport)
	}
	if opts == nil {
		opts = &LoginOptions{}
	}
	out := opts.Out
	if out == nil {
		out = io.Discard
	}
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = 5 * time.Minute
	}
	hc := opts.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("capbroker login %s: listening for the redirect: %w", s.Name, err)
	}
	redirect := fmt.Sprintf("http://%s/callback", ln.Addr())
	results := make(chan url2result, 1)
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/callback" {
			http.NotFound(w, r)
			return
		}
		q := r.URL.Query()
		res := url2result{code: q.Get("code"), state: q.Get("state"), iss: q.Get("iss")}
		if e := q.Get("error"); e != "" {
			res.err = fmt.Errorf("the authorization server refused: %s %s", e, q.Get("error_description"))
		} else if res.code == "" {
			res.err = errors.New("the redirect carried no authorization code")
		}
		if res.err != nil {
			http.Error(w, "capbroker: sign-in failed: "+res.err.Error(), http.StatusBadRequest)
		} else {
			fmt.Fprintln(w, "capbroker: signed in; you can close this tab.")
		}
		select {
		case results <- res:
		default:
		}
	})}
	go srv.Serve(ln)
	defer srv.Close()

	var got *login
	h, err := auth.NewAuthorizationCodeHandler(&auth.AuthorizationCodeHandlerConfig{
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			RedirectURIs: []string{redirect}, ClientName: "capbroker",
			GrantTypes: []string{"authorization_code", "refresh_token"}, ResponseTypes: []string{"code"},
			TokenEndpointAuthMethod: "none",
		}},
		RedirectURL:         redirect,
		RequestRefreshToken: true,
		Client:              hc,
		AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			fmt.Fprintf(out, "To sign in to MCP server %s, open this URL in a browser (waiting up to %s):\n\n  %s\n\n", s.Name, timeout, args.URL)
			select {
			case res := <-results:
				if res.err != nil {
					return nil, res.err
				}
				return &auth.AuthorizationResult{Code: res.code, State: res.state, Iss: res.iss}, nil
			case <-ctx.Done():
				return nil, fmt.Errorf("no sign-in came back to %s: %w", redirect, ctx.Err())
			}
		},
		NewTokenSource: func(ctx context.Context, cfg *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
			got = &login{Server: s.Name, URL: s.URL, ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret,
				AuthURL: cfg.Endpoint.AuthURL, TokenURL: cfg.Endpoint.TokenURL, AuthStyle: cfg.Endpoint.AuthStyle,
				Scopes: cfg.Scopes, Token: tok}
			return cfg.TokenSource(ctx, tok), nil
		},
	})
	if err != nil {
		return fmt.Errorf("capbroker login %s: %w", s.Name, err)
	}
	c := *hc
	if len(s.Headers) > 0 {
		base := c.Transport
		if base == nil {
			base = http.DefaultTransport
		}
		c.Transport = HeaderTransport{Base: base, Headers: s.Headers}
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "capbroker", Version: "login"}, nil)
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: s.URL, HTTPClient: &c, OAuthHandler: h, MaxRetries: -1}, nil)
	if err != nil {
		return fmt.Errorf("capbroker login %s: signing in to %s: %w", s.Name, s.URL, err)
	}
	cs.Close()
	if got == nil {
		return fmt.Errorf("capbroker login %s: %s asked for no sign-in; nothing stored", s.Name, s.URL)
	}
	if err := st.save(got); err != nil {
		return err
	}
	fmt.Fprintf(out, "Signed in to MCP server %s; the token is stored in %s and used by discovery and the gateway.\n", s.Name, st.path(s.Name))
	return nil
}

type url2result struct {
	code, state, iss string
	err              error
}
