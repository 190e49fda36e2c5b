package mcp

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
)

// ErrNeedsAuth is wrapped by the error of a remote server that refused
// capbroker's requests as unauthorized (401, or 403 with a challenge).
var ErrNeedsAuth = errors.New("the server needs authorization")

// AuthWatch is an http.RoundTripper that remembers a 401 or 403 answer
// and its WWW-Authenticate challenge, so a failed connection can say that
// the server wants a sign-in instead of an opaque transport error.
// [AuthWatch.Explain] says what to do: run capbroker login ([Login]), or
// set a header.
type AuthWatch struct {
	// Base sends the requests; nil means http.DefaultTransport.
	Base http.RoundTripper
	// SignedIn says Base sends a token from capbroker login.
	SignedIn bool

	mu        sync.Mutex
	status    int
	challenge string
}

// RoundTrip implements http.RoundTripper.
func (a *AuthWatch) RoundTrip(r *http.Request) (*http.Response, error) {
	base := a.Base
	if base == nil {
		base = http.DefaultTransport
	}
	resp, err := base.RoundTrip(r)
	if err == nil && (resp.StatusCode == http.StatusUnauthorized ||
		resp.StatusCode == http.StatusForbidden && resp.Header.Get("WWW-Authenticate") != "") {
		a.mu.Lock()
		a.status, a.challenge = resp.StatusCode, resp.Header.Get("WWW-Authenticate")
		a.mu.Unlock()
	}
	return resp, err
}

// Explain returns nil if no request was refused; else an error wrapping
// ErrNeedsAuth and cause that names the server, says whether it wants
// OAuth, and what to do. hasAuthHeader tells whether the config already
// sends an Authorization header (then the token was refused).
func (a *AuthWatch) Explain(server, url string, hasAuthHeader bool, cause error) error {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	status, challenge := a.status, a.challenge
	a.mu.Unlock()
	if status == 0 {
		return nil
	}
	answer := fmt.Sprintf("%d %s", status, http.StatusText(status))
	if challenge != "" {
		answer += " (WWW-Authenticate: " + oneLine(challenge, 300) + ")"
	}
	oauth := strings.HasPrefix(strings.ToLower(strings.TrimSpace(challenge)), "bearer")
	var msg string
	switch {
	case hasAuthHeader:
		msg = fmt.Sprintf("MCP server %s at %s refused the Authorization header its config sends: it answered %s. "+
			"The token is wrong, expired or lacks a scope: renew it and update the environment variable the header names",
			server, url, answer)
	case a.SignedIn:
		msg = fmt.Sprintf("MCP server %s at %s refused the token capbroker login obtained: it answered %s. "+
			"Sign in again: run capbroker login %s", server, url, answer, server)
	case oauth:
		msg = fmt.Sprintf("MCP server %s at %s needs OAuth: it answered %s. "+
			"Sign in: run capbroker login %s. Or get an access token for it (from the service, "+
			"or the token another MCP client obtained) and add to its config "+
			`"headers": {"Authorization": "Bearer ${%s}"} with %s set in the environment; or leave it out of capbroker's configs`,
			server, url, answer, server, tokenVar(server), tokenVar(server))
	default:
		msg = fmt.Sprintf("MCP server %s at %s needs credentials: it answered %s. "+
			`Add them to its config ("headers": {"Authorization": "..."}, values from ${VARS}); or leave it out of capbroker's configs`,
			server, url, answer)
	}
	return authError{msg: msg, cause: cause}
}

type authError struct {
	msg   string
	cause error
}

func (e authError) Error() string   { return e.msg }
func (e authError) Unwrap() []error { return []error{ErrNeedsAuth, e.cause} }

// tokenVar suggests an environment variable name for a server's token.
func tokenVar(server string) string {
	var b strings.Builder
	for _, r := range strings.ToUpper(server) {
		if r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String() + "_TOKEN"
}

func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > max {
		s = s[:max] + "…"
	}
	return s
}

// HasAuthorization reports whether a server's headers set Authorization.
func HasAuthorization(headers map[string]string) bool {
	for k := range headers {
		if strings.EqualFold(k, "Authorization") {
			return true
		}
	}
	return false
}
