package learn

import (
	"context"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/eval"
	"github.com/capbroker/capbroker/rank"
	"github.com/capbroker/capbroker/source/toolfile"
	"github.com/capbroker/capbroker/store"
	_ "github.com/capbroker/capbroker/store/sqlite"
	"github.com/capbroker/capbroker/trace"
)

var now = time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)

func cards() []card.Card {
	return []card.Card{
		{Name: "deploy", Description: "Deploy a service.", Digest: "d1"},
		{Name: "notify", Description: "Post a message.", Digest: "n1"},
	}
}

func rec(sess string, k trace.Kind, at time.Time, f func(*trace.Record)) trace.Record {
	r := trace.Record{SessionID: sess, Kind: k, At: at}
	if f != nil {
		f(&r)
	}
	return r
}

func sel(sess, task string, at time.Time) trace.Record {
	return rec(sess, trace.KindSelect, at, func(r *trace.Record) { r.Task = task })
}

// call is a call that ran and returned without error, as the gateway
// records it.
func call(sess, tool string, at time.Time) trace.Record {
	return rec(sess, trace.KindCall, at, func(r *trace.Record) { r.Tool = tool; r.Detail = []byte(`{"outcome":"ok"}`) })
}

func TestFromTraces(t *testing.T) {
	day := 24 * time.Hour
	for _, tt := range []struct {
		name string
		recs []trace.Record
		opts *Options
		want rank.Usage
	}{
		{"empty", nil, nil, rank.Usage{}},
		{"task then call", []trace.Record{sel("s1", "ship the build", now), call("s1", "deploy", now)}, nil,
			rank.Usage{"deploy": {{Phrase: "ship the build", Sessions: 1, Weight: 1}}}},
		{"a session counts once however often it calls", []trace.Record{
			sel("s1", "ship the build", now), call("s1", "deploy", now), call("s1", "deploy", now), call("s1", "deploy", now)}, nil,
			rank.Usage{"deploy": {{Phrase: "ship the build", Sessions: 1, Weight: 1}}}},
		{"sessions add up, the same phrase in other case and spacing", []trace.Record{
			sel("s1", "ship the build", now), call("s1", "deploy", now),
			sel("s2", "Ship  the build.", now), call("s2", "deploy", now)}, nil,
			rank.Usage{"deploy": {{Phrase: "ship the build", Sessions: 2, Weight: 2}}}},
		{"older evidence fades by the half-life", []trace.Record{
			sel("s1", "ship the build", now.Add(-30*day)), call("s1", "deploy", now.Add(-30*day)),
			sel("s2", "roll out", now.Add(-60*day)), call("s2", "deploy", now.Add(-60*day))}, &Options{HalfLife: 30 * day},
			rank.Usage{"deploy": {{Phrase: "ship the build", Sessions: 1, Weight: 0.5}, {Phrase: "roll out", Sessions: 1, Weight: 0.25}}}},
		{"evidence past six half-lives is dropped", []trace.Record{
			sel("s1", "ship the build", now.Add(-7*day)), call("s1", "deploy", now.Add(-7*day))}, &Options{HalfLife: day},
			rank.Usage{}},
		{"a negative half-life never fades", []trace.Record{
			sel("s1", "ship the build", now.Add(-700*day)), call("s1", "deploy", now.Add(-700*day))}, &Options{HalfLife: -1},
			rank.Usage{"deploy": {{Phrase: "ship the build", Sessions: 1, Weight: 1}}}},
		{"a find that found the card, and the task", []trace.Record{
			sel("s1", "tell the team", now),
			rec("s1", trace.KindFind, now, func(r *trace.Record) { r.Query = "post to slack"; r.Found = []string{"notify"} }),
			rec("s1", trace.KindFind, now, func(r *trace.Record) { r.Query = "unrelated"; r.Found = []string{"deploy"} }),
			call("s1", "notify", now)}, nil,
			rank.Usage{"notify": {{Phrase: "post to slack", Sessions: 1, Weight: 1}, {Phrase: "tell the team", Sessions: 1, Weight: 1}}}},
		{"the gateway: its name for sessions without a task is no phrase", []trace.Record{
			rec("s1", trace.KindSelect, now, func(r *trace.Record) {
				r.Task = "capbroker gateway (auto mode)"
				r.Detail = []byte(`{"gateway":true,"no_task":true}`)
			}),
			call("s1", "deploy", now)}, nil,
			rank.Usage{}},
		{"the gateway: a find that returned a card exposed before (matched, not found)", []trace.Record{
			rec("s1", trace.KindFind, now, func(r *trace.Record) {
				r.Query = "post to slack"
				r.Detail = []byte(`{"gateway":true,"matched":["notify"]}`)
			}),
			call("s1", "notify", now)}, nil,
			rank.Usage{"notify": {{Phrase: "post to slack", Sessions: 1, Weight: 1}}}},
		{"the gateway: a call that timed out or errored demotes, one cancelled teaches nothing", []trace.Record{
			sel("s0", "ship the build", now), call("s0", "deploy", now), call("s0", "notify", now),
			sel("s1", "ship the build", now),
			rec("s1", trace.KindCall, now, func(r *trace.Record) { r.Tool = "deploy"; r.Detail = []byte(`{"gateway":true,"outcome":"timeout"}`) }),
			rec("s1", trace.KindCall, now, func(r *trace.Record) { r.Tool = "notify"; r.Detail = []byte(`{"gateway":true,"outcome":"cancelled"}`) })}, nil,
			rank.Usage{"notify": {{Phrase: "ship the build", Sessions: 1, Weight: 1}}}},
		{"an errored call demotes: two sessions that went through and one that errored", []trace.Record{
			sel("s1", "ship the build", now), call("s1", "deploy", now),
			sel("s2", "ship the build", now), call("s2", "deploy", now),
			sel("s3", "ship the build", now),
			rec("s3", trace.KindCall, now, func(r *trace.Record) { r.Tool = "deploy"; r.Detail = []byte(`{"gateway":true,"outcome":"tool_error"}`) })}, nil,
			rank.Usage{"deploy": {{Phrase: "ship the build", Sessions: 2, Weight: 1}}}},
		{"a refusal at elicitation demotes", []trace.Record{
			sel("s1", "ship the build", now), call("s1", "deploy", now),
			sel("s2", "ship the build", now),
			rec("s2", trace.KindCall, now, func(r *trace.Record) { r.Tool = "deploy"; r.Detail = []byte(`{"gateway":true,"outcome":"denied"}`) })}, nil,
			rank.Usage{}},
		{"a call abandoned for another card the same find returned demotes", []trace.Record{
			rec("s1", trace.KindFind, now, func(r *trace.Record) { r.Query = "post to slack"; r.Found = []string{"deploy", "notify"} }),
			call("s1", "deploy", now),
			rec("s2", trace.KindFind, now, func(r *trace.Record) { r.Query = "post to slack"; r.Found = []string{"deploy", "notify"} }),
			rec("s2", trace.KindCall, now, func(r *trace.Record) { r.Tool = "deploy"; r.Detail = []byte(`{"gateway":true,"outcome":"cancelled"}`) }),
			call("s2", "notify", now.Add(time.Second))}, nil,
			rank.Usage{"notify": {{Phrase: "post to slack", Sessions: 1, Weight: 1}}}},
		{"a task completed with the card counts more than one left unfinished", []trace.Record{
			sel("s1", "ship the build", now), call("s1", "deploy", now),
			rec("s1", trace.KindCall, now.Add(time.Second), func(r *trace.Record) { r.Tool = "notify"; r.Detail = []byte(`{"gateway":true,"outcome":"error"}`) }),
			sel("s2", "roll out", now), call("s2", "deploy", now)}, nil,
			rank.Usage{"deploy": {{Phrase: "roll out", Sessions: 1, Weight: Completed}, {Phrase: "ship the build", Sessions: 1, Weight: Unfinished}}}},
		{"a failed call, a removed card and a one-off select teach nothing", []trace.Record{
			sel("s1", "ship the build", now),
			rec("s1", trace.KindCall, now, func(r *trace.Record) {
				r.Tool = "deploy"
				r.Failures = []trace.Failure{{Tier: trace.TierExposure, Message: "not exposed"}}
			}),
			call("s1", "removed_tool", now),
			sel("", "ship the build", now), call("", "deploy", now)}, nil,
			rank.Usage{}},
		{"a card that changed since the call", []trace.Record{
			sel("s1", "ship the build", now),
			rec("s1", trace.KindCall, now, func(r *trace.Record) { r.Tool = "deploy"; r.ToolDigest = "old"; r.Detail = []byte(`{"outcome":"ok"}`) }),
			sel("s2", "roll out", now),
			rec("s2", trace.KindCall, now, func(r *trace.Record) { r.Tool = "deploy"; r.ToolDigest = "d1"; r.Detail = []byte(`{"outcome":"ok"}`) })}, nil,
			rank.Usage{"deploy": {{Phrase: "roll out", Sessions: 1, Weight: 1}}}},
		{"caps: the strongest phrases", []trace.Record{
			sel("s1", "a", now), call("s1", "deploy", now),
			sel("s2", "b", now), call("s2", "deploy", now),
			sel("s3", "b", now), call("s3", "deploy", now),
			sel("s4", "c", now.Add(-time.Hour)), call("s4", "deploy", now.Add(-time.Hour))}, &Options{MaxPhrases: 2},
			rank.Usage{"deploy": {{Phrase: "b", Sessions: 2, Weight: 2}, {Phrase: "a", Sessions: 1, Weight: 1}}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := Options{Now: now}
			if tt.opts != nil {
				o = *tt.opts
				o.Now = now
			}
			got := FromTraces(tt.recs, cards(), &o)
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateApprox(0, 1e-9), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("usage (-want +got):\n%s", diff)
			}
		})
	}
}

// A long task is kept clipped, with a mark, so a reason quoting it stays
// short.
func TestClip(t *testing.T) {
	long := strings.Repeat("word ", 100)
	got := clip(long)
	if len(got) > MaxPhraseBytes || !strings.HasSuffix(got, "…") || strings.Contains(got, "  ") {
		t.Errorf("clip: %d bytes %q", len(got), got)
	}
	if clip("short one") != "short one" {
		t.Errorf("clip changed a short phrase")
	}
}

// Load reads a real store: empty, it teaches nothing; with a session, the
// card learns its task.
func TestLoad(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "capbroker.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	u, err := Load(ctx, st, cards(), &Options{Now: now})
	if err != nil || len(u) != 0 {
		t.Fatalf("empty store: usage %v, error %v", u, err)
	}
	if err := st.AppendTraces(ctx, sel("s1", "ship the build", now), call("s1", "deploy", now)); err != nil {
		t.Fatal(err)
	}
	u, err = Load(ctx, st, cards(), &Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(rank.Usage{"deploy": {{Phrase: "ship the build", Sessions: 1, Weight: 1}}}, u); diff != "" {
		t.Errorf("usage (-want +got):\n%s", diff)
	}
}

// The time split over a fixture, computed by hand: the past (p1, p2)
// teaches beta_run "ship build" and alpha_run "nightly report", both "run
// job". t1 ("run a job to ship the build") ties without learning, alpha
// first by name, so beta is second (NDCG 1/log2 3); with learning beta is
// first (NDCG 1). t2 ("run a job") ties both ways. So top-1 goes from 0
// to 0.5 and NDCG@10 from 0.6309 to (1+0.6309)/2.
func TestEvalSplitFixture(t *testing.T) {
	tools, err := toolfile.Load(filepath.Join("testdata", "tools.json"))
	if err != nil {
		t.Fatal(err)
	}
	qs, err := eval.LoadQueries(filepath.Join("testdata", "queries.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	build := func(u rank.Usage) eval.BuildFunc { return eval.BuildRank(&rank.Options{Usage: u}) }
	rep, err := EvalSplit(context.Background(), build, tools, qs, 0.5, &eval.Options{Ks: []int{1, 10}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ndcg2 := 1 / math.Log2(3)
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"past", float64(rep.Past), 2},
		{"learnt", float64(rep.Learnt), 2},
		{"test queries", float64(rep.With.Queries), 2},
		{"top1 without", rep.Without.Top1, 0},
		{"top1 with", rep.With.Top1, 0.5},
		{"ndcg@10 without", rep.Without.NDCG[10], ndcg2},
		{"ndcg@10 with", rep.With.NDCG[10], (1 + ndcg2) / 2},
	} {
		if math.Abs(c.got-c.want) > 1e-9 {
			t.Errorf("%s: %v, want %v", c.name, c.got, c.want)
		}
	}
	var b strings.Builder
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "top1         0.0000   0.5000  +0.5000") {
		t.Errorf("report lacks the top1 row:\n%s", b.String())
	}
	for _, frac := range []float64{0, 1, 0.1} {
		if _, err := EvalSplit(context.Background(), build, tools, qs, frac, nil, nil); err == nil {
			t.Errorf("split %v of 4 queries: no error", frac)
		}
	}
}
