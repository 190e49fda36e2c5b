package replay_test

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	capbroker "github.com/capbroker/capbroker"
	"github.com/capbroker/capbroker/examples"
	"github.com/capbroker/capbroker/payload"
	"github.com/capbroker/capbroker/policy"
	"github.com/capbroker/capbroker/replay"
	"github.com/capbroker/capbroker/trace"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func readFixture(t *testing.T) []trace.Record {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "sessions.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := trace.ReadJSONL(f, "sessions.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// exposer is a lexical Broker over the example catalog, as replay runs it.
type exposer struct{ b *capbroker.Broker }

func (e exposer) Select(ctx context.Context, task string) ([]string, error) {
	return e.b.Select(ctx, task, &policy.Options{MaxSelected: policy.DefaultMaxSelected}).Names(), nil
}
func (e exposer) Find(ctx context.Context, q string) ([]string, error) {
	return e.b.Find(ctx, q, policy.DefaultFindK).Names(), nil
}
func (e exposer) Tokens(names []string) int {
	return e.b.Selector().ExposedTokens(names, payload.OpenAI)
}
func (e exposer) Has(name string) bool { _, ok := e.b.Catalog().Lookup(name); return ok }

func newExposer(t *testing.T) exposer {
	t.Helper()
	cards, err := examples.Cards()
	if err != nil {
		t.Fatal(err)
	}
	b, err := capbroker.New(context.Background(), &capbroker.Options{Cards: cards})
	if err != nil {
		t.Fatal(err)
	}
	return exposer{b}
}

func TestSessions(t *testing.T) {
	got := replay.Sessions(readFixture(t))
	type short struct {
		ID, Task string
		Finds    []string
		Calls    []string
		Tokens   int
	}
	var gotShort []short
	for _, s := range got {
		sh := short{ID: s.ID, Task: s.Task, Tokens: s.Tokens}
		for _, f := range s.Finds {
			sh.Finds = append(sh.Finds, f.Query)
		}
		for _, c := range s.Calls {
			sh.Calls = append(sh.Calls, c.Tool)
		}
		gotShort = append(gotShort, sh)
	}
	want := []short{
		{ID: "s1", Task: "show the last 50 lines of the api container's logs", Calls: []string{"container_logs"}, Tokens: 310},
		// git_add and git_commit once each; the find is kept with what it matched.
		{ID: "s2", Task: "fix the typo in the README", Finds: []string{"commit the change to git"}, Calls: []string{"edit_file", "git_add", "git_commit"}, Tokens: 700},
		// No task (the gateway's name for it), the errored send_email left
		// out, the one-off select outside any session too.
		{ID: "s3", Finds: []string{"send an email to bob", "qwzx vbnm"}, Calls: []string{"fax_document"}, Tokens: 380},
	}
	if diff := cmp.Diff(want, gotShort); diff != "" {
		t.Errorf("sessions (-want +got):\n%s", diff)
	}
}

func TestQueries(t *testing.T) {
	qs := replay.Queries(replay.Sessions(readFixture(t)))
	var got [][]string
	for _, q := range qs {
		got = append(got, append([]string{q.ID, q.Text}, q.Gold...))
	}
	want := [][]string{
		{"s1", "show the last 50 lines of the api container's logs", "container_logs"},
		{"s2", "fix the typo in the README", "edit_file", "git_add", "git_commit"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("queries (-want +got):\n%s", diff)
	}
}

func TestRun(t *testing.T) {
	ctx := context.Background()
	rep, err := replay.Run(ctx, newExposer(t), replay.Sessions(readFixture(t)))
	if err != nil {
		t.Fatal(err)
	}
	byTool := map[string]replay.Outcome{}
	for _, s := range rep.Sessions {
		for _, c := range s.Calls {
			byTool[c.Tool] = c
		}
	}
	for tool, want := range map[string]string{
		"container_logs": replay.UpFront, // its task names it
		"git_commit":     replay.Found,   // the README task does not; the find does
		"fax_document":   replay.Gone,    // not in the catalog
	} {
		if got := byTool[tool].Now; got != want {
			t.Errorf("call of %s now %q, want %q", tool, got, want)
		}
	}
	if c := byTool["git_commit"]; c.Then != replay.Found || c.By != "commit the change to git" {
		t.Errorf("git_commit: %+v, want found then, and by the session's find", c)
	}
	if rep.Totals.Sessions != 3 || rep.Totals.Calls[replay.Gone] != 1 || rep.Totals.Regressed < 1 {
		t.Errorf("totals %+v: want 3 sessions, 1 call gone and counted worse", rep.Totals)
	}
	if s := rep.Sessions[0]; s.TokensNow <= 0 || s.TokensThen != 310 {
		t.Errorf("session s1 tokens then %d, now %d: want 310 and some", s.TokensThen, s.TokensNow)
	}
	var buf bytes.Buffer
	if err := rep.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "report.golden")
	if *update {
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), buf.String()); diff != "" {
		t.Errorf("report (-want +got):\n%s", diff)
	}
}

// A session's find that would now lose what it found is counted lost,
// and a call exposed up front then but found now is worse.
func TestRunLost(t *testing.T) {
	recs := []trace.Record{
		{SessionID: "x", Kind: trace.KindSelect, At: at(0), Task: "qwzx vbnm"},
		{SessionID: "x", Kind: trace.KindFind, At: at(1), Query: "qwzx vbnm", Found: []string{"send_email"}},
		{SessionID: "x", Kind: trace.KindCall, At: at(2), Tool: "send_email"},
		{SessionID: "x", Kind: trace.KindCall, At: at(3), Tool: "write_file"},
	}
	rep, err := replay.Run(context.Background(), newExposer(t), replay.Sessions(recs))
	if err != nil {
		t.Fatal(err)
	}
	s := rep.Sessions[0]
	if s.Calls[0].Now != replay.Lost || s.Finds[0].Now != replay.Lost {
		t.Errorf("calls %+v, finds %+v: want the call and the find lost", s.Calls, s.Finds)
	}
	if s.Calls[1].Then != replay.UpFront || s.Calls[1].Now != replay.Lost || rep.Totals.Regressed != 2 {
		t.Errorf("call %+v, %d worse: want write_file up front then, lost now, 2 worse", s.Calls[1], rep.Totals.Regressed)
	}
}

func at(s int) time.Time { return time.Date(2026, 11, 2, 9, 0, s, 0, time.UTC) }
