package gateway

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/capbroker/capbroker/policy"
	"github.com/capbroker/capbroker/store"
)

// balancer is an HTTP transport that sends each request to the replica
// chosen last, as a load balancer without affinity may.
type balancer struct {
	mu      sync.Mutex
	host    string
	headers map[string]string
}

func (b *balancer) to(rawURL string) {
	u, err := url.Parse(rawURL)
	if err != nil {
		panic(err)
	}
	b.mu.Lock()
	b.host = u.Host
	b.mu.Unlock()
}

func (b *balancer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	b.mu.Lock()
	r.URL.Host, r.Host = b.host, b.host
	for k, v := range b.headers {
		r.Header.Set(k, v)
	}
	b.mu.Unlock()
	return http.DefaultTransport.RoundTrip(r)
}

// connectVia opens a client session through b, to the replica b points
// at.
func connectVia(tb testing.TB, b *balancer) *mcp.ClientSession {
	tb.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "fleet-client", Version: "1"}, nil)
	t := &mcp.StreamableClientTransport{Endpoint: "http://replica/mcp", HTTPClient: &http.Client{Transport: b}}
	cs, err := c.Connect(context.Background(), t, nil)
	if err != nil {
		tb.Fatalf("connecting to the gateway: %v", err)
	}
	tb.Cleanup(func() { cs.Close() })
	return cs
}

// TestFleetAnyReplica starts two gateway replicas on one database, opens
// a session on the first, finds a tool there, and sends the session's
// next requests to the second: it serves them, listing what the first's
// find_capability added, and calls it. Before the fleet kept MCP sessions
// in the database, the second answered 404 "session not found".
func TestFleetAnyReplica(t *testing.T) {
	for _, db := range persistentStores {
		for _, named := range []bool{false, true} {
			name := db.name + "/anonymous"
			if named {
				name = db.name + "/named"
			}
			t.Run(name, func(t *testing.T) {
				open := db.db(t)
				servers := []ServerConfig{testServer("alpha"), testServer("beta")}
				replica := func() (*StoreSessions, string) {
					st := open()
					t.Cleanup(func() { st.Close() })
					ss := NewStoreSessions(st, &StoreOptions{Task: "fleet test"})
					t.Cleanup(func() { ss.Close() })
					g := startGateway(t, servers, &Options{Mode: ModeAuto, Family: policy.General, Store: ss, Trace: ss})
					return ss, serveHTTP(t, g, nil)
				}
				_, urlA := replica()
				ssB, urlB := replica()

				b := &balancer{}
				if named {
					b.headers = map[string]string{SessionHeader: "fleet-named"}
				}
				b.to(urlA)
				cs := connectVia(t, b)
				before := listNames(t, cs)
				if slices.Contains(before, "beta__echo") {
					t.Fatalf("beta__echo listed before any find: %v", before)
				}
				found := findNames(t, cs, "echo the text back")
				if !slices.Contains(found, "beta__echo") {
					t.Fatalf("find on the first replica: %v", found)
				}
				onA := listNames(t, cs)

				b.to(urlB)
				onB := listNames(t, cs)
				if diff := cmp.Diff(onA, onB); diff != "" {
					t.Errorf("tools listed by the second replica (-first +second):\n%s", diff)
				}
				if text, isErr := callText(t, cs, "beta__echo", map[string]any{"text": "on B"}); isErr || text != "beta: on B" {
					t.Errorf("beta__echo on the second replica: %v %q", isErr, text)
				}
				if text, isErr := callText(t, cs, CallName, map[string]any{"name": "beta__echo", "arguments": map[string]any{"text": "through"}}); isErr || text != "beta: through" {
					t.Errorf("call_capability(beta__echo) on the second replica: %v %q", isErr, text)
				}
				// A find on the second replica reaches the first.
				more := findNames(t, cs, "process id")
				if !slices.Contains(more, "alpha__pid") {
					t.Fatalf("find on the second replica: %v", more)
				}
				// A tool called by name on the second joins the session
				// there, and so on the first.
				if text, isErr := callText(t, cs, "alpha__sleep", map[string]any{"ms": 1}); isErr || text != "slept" {
					t.Fatalf("alpha__sleep called by name on the second replica: %v %q", isErr, text)
				}
				b.to(urlA)
				names := listNames(t, cs)
				if !slices.Contains(names, "alpha__pid") {
					t.Errorf("the first replica does not list what the second found: %v", names)
				}
				if !slices.Contains(names, "alpha__sleep") {
					t.Errorf("the first replica does not list the tool the second was called by name: %v", names)
				}
				if _, isErr := callText(t, cs, "alpha__pid", nil); isErr {
					t.Error("alpha__pid, found on the second replica, is not callable on the first")
				}

				// The session ends on a replica that never served it: it
				// is gone from the database, and no replica serves it.
				id := cs.ID()
				ms := ssB.st.(store.MCPSessions)
				if _, err := ms.MCPSession(context.Background(), id); err != nil {
					t.Fatalf("the session is not in the database: %v", err)
				}
				b.to(urlB)
				cs.Close()
				if _, err := ms.MCPSession(context.Background(), id); err == nil {
					t.Error("the session is still in the database after the client ended it")
				}
			})
		}
	}
}

// TestDurableRecord checks that with Durable a record is in the database
// when Record returns, before the store is closed.
func TestDurableRecord(t *testing.T) {
	for _, db := range persistentStores {
		t.Run(db.name, func(t *testing.T) {
			st := db.db(t)()
			defer st.Close()
			ss := NewStoreSessions(st, &StoreOptions{Durable: true})
			defer ss.Close()
			ctx := context.Background()
			for i := range 3 {
				ss.Record(ctx, Event{Session: "durable", Kind: "call", Tool: "alpha__echo", Outcome: "ok", Upstream: "alpha"})
				recs, err := st.Traces(ctx, &store.TraceQuery{SessionID: "durable"})
				if err != nil {
					t.Fatal(err)
				}
				if len(recs) != i+1 {
					t.Fatalf("after %d records, %d in the database", i+1, len(recs))
				}
			}
		})
	}
}

// TestFleetNotify checks that replicas on PostgreSQL tell each other of
// session changes: a session opened on B, whose client's event stream is
// held by B, finds a tool on A: B reads it back and the client gets
// list_changed on B's stream; the client ends the session on A: B closes
// its copy.
func TestFleetNotify(t *testing.T) {
	db := persistentStores[1] // postgres
	open := db.db(t)
	servers := []ServerConfig{testServer("alpha")}
	replica := func() (*Gateway, string) {
		st := open()
		t.Cleanup(func() { st.Close() })
		ss := NewStoreSessions(st, nil)
		t.Cleanup(func() { ss.Close() })
		g := startGateway(t, servers, &Options{Mode: ModeAuto, Family: policy.General, Store: ss, Trace: ss})
		return g, serveHTTP(t, g, nil)
	}
	_, urlA := replica()
	gB, urlB := replica()

	changed := make(chan struct{}, 8)
	b := &balancer{}
	b.to(urlB)
	c := mcp.NewClient(&mcp.Implementation{Name: "fleet-client", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: "http://replica/mcp", HTTPClient: &http.Client{Transport: b}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	listNames(t, cs) // B holds the session and the client's stream
	for len(changed) > 0 {
		<-changed
	}
	b.to(urlA)
	if found := findNames(t, cs, "echo the text back"); !slices.Contains(found, "alpha__echo") {
		t.Fatalf("find on A: %v", found)
	}
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("no list_changed on the stream B holds after a find on A")
	}
	var onB *session
	for _, s := range gB.liveSessions() {
		if s.id == cs.ID() {
			onB = s
		}
	}
	if onB == nil || !onB.isExposed("alpha__echo") {
		t.Fatal("B's copy of the session does not hold what A found")
	}
	cs.Close() // DELETE, on A
	deadline := time.Now().Add(10 * time.Second)
	for hasSessions(onB.server) {
		if time.Now().After(deadline) {
			t.Fatal("B's copy of the session is still open 10 s after the client ended it on A")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
