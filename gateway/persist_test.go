package gateway

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/capbroker/capbroker/internal/testenv"
	"github.com/capbroker/capbroker/policy"
	"github.com/capbroker/capbroker/store"
	"github.com/capbroker/capbroker/store/postgres"
	"github.com/capbroker/capbroker/store/sqlite"
	"github.com/capbroker/capbroker/trace"
	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"
)

// persistentStores are the real databases sessions persist in. Each
// returns a func that opens the same database again (a restarted
// gateway).
var persistentStores = []struct {
	name string
	db   func(tb testing.TB) func() store.Store
}{
	{"sqlite", func(tb testing.TB) func() store.Store {
		path := filepath.Join(tb.TempDir(), "capbroker.db")
		return func() store.Store {
			st, err := sqlite.Open(context.Background(), path, nil)
			if err != nil {
				tb.Fatal(err)
			}
			return st
		}
	}},
	{"postgres", func(tb testing.TB) func() store.Store {
		dsn := testenv.Postgres(tb)
		var b [6]byte
		rand.Read(b[:])
		schema := "capbroker_gateway_" + hex.EncodeToString(b[:])
		tb.Cleanup(func() {
			ctx := context.Background()
			conn, err := pgx.Connect(ctx, dsn)
			if err != nil {
				tb.Errorf("dropping schema %s: %v", schema, err)
				return
			}
			defer conn.Close(ctx)
			if _, err := conn.Exec(ctx, `DROP SCHEMA IF EXISTS `+pgx.Identifier{schema}.Sanitize()+` CASCADE`); err != nil {
				tb.Errorf("dropping schema %s: %v", schema, err)
			}
		})
		return func() store.Store {
			st, err := postgres.Open(context.Background(), dsn, &postgres.Options{Schema: schema})
			if err != nil {
				tb.Fatal(err)
			}
			return st
		}
	}},
}

// TestStoreSessions runs a session through a gateway persisting in a real
// database, restarts the gateway on the same database, and checks that
// the reconnecting client gets the same tools and that the store holds
// the session and its trace.
func TestStoreSessions(t *testing.T) {
	for _, db := range persistentStores {
		t.Run(db.name, func(t *testing.T) {
			open := db.db(t)
			servers := []ServerConfig{testServer("alpha"), testServer("beta")}
			const key = "persist-1"
			start := func(st store.Store) (*Gateway, *StoreSessions, string) {
				ss := NewStoreSessions(st, &StoreOptions{Task: "gateway test"})
				g := startGateway(t, servers, &Options{Mode: ModeSearch, Family: policy.General, Store: ss, Trace: ss})
				return g, ss, serveHTTP(t, g, nil)
			}

			// First run: find, call a found tool, call one not exposed.
			st1 := open()
			g1, ss1, url1 := start(st1)
			cs := connect(t, url1, nil, map[string]string{SessionHeader: key})
			found := findNames(t, cs, "echo the text back")
			if !slices.Contains(found, "beta__echo") {
				t.Fatalf("find: %v", found)
			}
			if text, isErr := callText(t, cs, "beta__echo", map[string]any{"text": "one"}); isErr || text != "beta: one" {
				t.Fatalf("beta__echo: %v %q", isErr, text)
			}
			if _, isErr := callText(t, cs, "alpha__pidd", nil); !isErr {
				t.Fatal("a misspelt alpha__pid ran")
			}
			before := listNames(t, cs)
			cs.Close()
			g1.Close()
			ss1.Close()
			st1.Close()

			// Second run, a new gateway process on the same database.
			st2 := open()
			defer st2.Close()
			g2, ss2, url2 := start(st2)
			again := connect(t, url2, nil, map[string]string{SessionHeader: key})
			after := listNames(t, again)
			if diff := cmp.Diff(before, after); diff != "" {
				t.Errorf("tools after a restart (-before +after):\n%s", diff)
			}
			if text, isErr := callText(t, again, "beta__echo", map[string]any{"text": "two"}); isErr || text != "beta: two" {
				t.Errorf("beta__echo after a restart: %v %q", isErr, text)
			}
			again.Close()
			g2.Close()
			ss2.Close()

			ctx := context.Background()
			sess, err := st2.Session(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			if sess.Task != "gateway test" || sess.FindCalls != 1 || len(sess.Selected) != 0 {
				t.Errorf("stored session: task %q, finds %d, selected %v", sess.Task, sess.FindCalls, sess.Selected)
			}
			if diff := cmp.Diff(found, sess.Exposed); diff != "" {
				t.Errorf("stored exposed tools, in the order found (-want +got):\n%s", diff)
			}
			wantListed := append(slices.Clone(sess.Exposed), policy.HatchName)
			sort.Strings(wantListed)
			if diff := cmp.Diff(wantListed, after); diff != "" {
				t.Errorf("listed = stored exposed + hatch (-want +got):\n%s", diff)
			}

			recs, err := st2.Traces(ctx, &store.TraceQuery{SessionID: key})
			if err != nil {
				t.Fatal(err)
			}
			var kinds []string
			recs = slices.DeleteFunc(recs, func(r trace.Record) bool { return r.Kind == trace.KindEnd }) // when the end lands races the test's close
			for _, r := range recs {
				k := string(r.Kind)
				if r.Kind == trace.KindCall {
					k += " " + r.Tool
				}
				kinds = append(kinds, k)
			}
			want := []string{"select", "find", "call beta__echo", "call alpha__pidd", "resume", "call beta__echo"}
			if diff := cmp.Diff(want, kinds); diff != "" {
				t.Fatalf("trace records (-want +got):\n%s", diff)
			}
			sel, find, okCall, refused, resume := recs[0], recs[1], recs[2], recs[3], recs[4]
			for _, r := range recs[2:] {
				if r.FindCapabilityCalls != 1 || r.Task != "gateway test" {
					t.Errorf("%s record after the find: %d finds, task %q", r.Kind, r.FindCapabilityCalls, r.Task)
				}
			}
			if sel.Task != "gateway test" || sel.FindCapabilityCalls != 0 || len(sel.SelectedTools) != 0 || sel.Tokens.Full == 0 || sel.CapabilityReason == "" {
				t.Errorf("select record: %+v", sel)
			}
			if find.Query != "echo the text back" || find.FindCapabilityCalls != 1 || !cmp.Equal(find.Found, found) ||
				!cmp.Equal(find.SelectedTools, found) || find.Tokens.Exposed == 0 || find.Tokens.Exposed >= find.Tokens.Full {
				t.Errorf("find record: %+v", find)
			}
			var d struct {
				Upstream, Outcome string
			}
			json.Unmarshal(okCall.Detail, &d)
			if d.Upstream != "beta" || d.Outcome != "ok" || len(okCall.Failures) != 0 || okCall.Tokens.Full != find.Tokens.Full {
				t.Errorf("call record: %+v (detail %s)", okCall, okCall.Detail)
			}
			if !refused.Failed(trace.TierExposure) || !strings.Contains(refused.Failures[0].Message, "find_capability") {
				t.Errorf("refused call record: %+v", refused)
			}
			if !cmp.Equal(resume.SelectedTools, found) || resume.Failed("") {
				t.Errorf("resume record: %+v", resume)
			}
		})
	}
}
