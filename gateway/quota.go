package gateway

import (
	"crypto/sha256"
	"encoding/hex"
	"net"
	"net/http"
	"strings"
	"sync"
)

// DefaultMaxClientSessions bounds the MCP sessions one client identity
// keeps open at once over HTTP (HTTPOptions.MaxClientSessions): a tenth
// of DefaultMaxSessions, so one client cannot take them all.
const DefaultMaxClientSessions = 100

// clientIdentity names who opens a session, for the per-client quota: its
// identity (HTTPOptions.Identities), else the session key it names (X-Capbroker-Session or ?session=), else its
// bearer token (by digest, never kept in clear), else its address.
func clientIdentity(r *http.Request) string {
	if id := requestIdentity(r.Context()); id != nil {
		return "identity " + id.Name
	}
	if key := firstOf(r.Header.Get(SessionHeader), r.URL.Query().Get("session")); key != "" {
		return "session " + key
	}
	if auth := r.Header.Get("Authorization"); auth != "" {
		sum := sha256.Sum256([]byte(auth))
		return "token " + hex.EncodeToString(sum[:8])
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	return "address " + strings.TrimSpace(host)
}

// clientQuota counts the open sessions of each client identity.
type clientQuota struct {
	max  int // <= 0: no bound
	mu   sync.Mutex
	open map[string]int
}

// reserve counts one more session for who, unless who has max open.
func (q *clientQuota) reserve(who string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.open == nil {
		q.open = map[string]int{}
	}
	if q.max > 0 && q.open[who] >= q.max {
		return false
	}
	q.open[who]++
	return true
}

// release counts one session of who less.
func (q *clientQuota) release(who string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.open[who] <= 1 {
		delete(q.open, who)
		return
	}
	q.open[who]--
}
