package learn

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/capbroker/capbroker/rank"
	"github.com/capbroker/capbroker/trace"
)

// ranBy is a call that ran through the gateway for client.
func ranBy(sess, client, tool string) trace.Record {
	return rec(sess, trace.KindCall, now, func(r *trace.Record) {
		r.Tool = tool
		r.Detail = []byte(`{"gateway":true,"outcome":"ok","client":"` + client + `"}`)
	})
}

func find(sess, query string, matched ...string) trace.Record {
	return rec(sess, trace.KindFind, now, func(r *trace.Record) {
		r.Query = query
		b := `{"gateway":true,"matched":[`
		for i, m := range matched {
			if i > 0 {
				b += ","
			}
			b += `"` + m + `"`
		}
		r.Detail = []byte(b + `]}`)
	})
}

// TestEvidenceIsEarned covers what one session and one client can teach.
// Before, 60 sessions that only said they called a tool (POST
// /v1/sessions/{id}/call, which runs nothing) moved it from rank 57 to 3
// for a chosen task; a call that failed taught like one that worked.
func TestEvidenceIsEarned(t *testing.T) {
	usage := func(recs []trace.Record) rank.Usage { return FromTraces(recs, cards(), &Options{Now: now}) }

	// Calls checked by a session but never run teach nothing, however
	// many sessions make them.
	var claimed []trace.Record
	for i := range 60 {
		id := fmt.Sprint("fake-", i)
		claimed = append(claimed, sel(id, "wipe the production database", now),
			rec(id, trace.KindCall, now, func(r *trace.Record) { r.Tool = "deploy" }))
	}
	if u := usage(claimed); len(u) != 0 {
		t.Errorf("calls that ran nothing taught %v", u)
	}

	// Failed calls do not promote.
	for _, outcome := range []string{"tool_error", "error", "timeout", "denied", "bad_arguments", "held", "unknown"} {
		recs := []trace.Record{sel("s1", "ship the build", now),
			rec("s1", trace.KindCall, now, func(r *trace.Record) { r.Tool = "deploy"; r.Detail = []byte(`{"outcome":"` + outcome + `"}`) })}
		if u := usage(recs); len(u) != 0 {
			t.Errorf("a call with outcome %s taught %v", outcome, u)
		}
	}

	// A find is credited only to the tools its answer offered.
	got := usage([]trace.Record{sel("s1", "ship the build", now), find("s1", "post to slack", "notify"),
		ranBy("s1", "", "deploy"), ranBy("s1", "", "notify")})
	want := rank.Usage{
		"deploy": {{Phrase: "ship the build", Sessions: 1, Weight: 1}},
		"notify": {{Phrase: "post to slack", Sessions: 1, Weight: 1}, {Phrase: "ship the build", Sessions: 1, Weight: 1}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("find credit (-want +got):\n%s", d)
	}

	// One client counts for at most MaxClientSessions sessions of a
	// phrase; sessions of other clients add up as before.
	var flood []trace.Record
	for i := range 60 {
		id := fmt.Sprint("flood-", i)
		flood = append(flood, sel(id, "wipe the production database", now), ranBy(id, "address 127.0.0.1", "deploy"))
	}
	for i := range 3 {
		id := fmt.Sprint("other-", i)
		flood = append(flood, sel(id, "wipe the production database", now), ranBy(id, fmt.Sprint("session other-", i), "deploy"))
	}
	if a := usage(flood)["deploy"]; len(a) != 1 || a[0].Sessions != MaxClientSessions+3 {
		t.Errorf("60 sessions of one client and 3 of others: %v, want %d sessions", a, MaxClientSessions+3)
	}

	// One session teaches about at most MaxSessionPhrases phrases of a
	// tool and MaxSessionTools tools.
	recs := []trace.Record{sel("s1", "ship the build", now)}
	for i := range 10 {
		recs = append(recs, find("s1", fmt.Sprint("query number ", i), "deploy"))
	}
	recs = append(recs, ranBy("s1", "", "deploy"))
	if a := usage(recs)["deploy"]; len(a) != MaxSessionPhrases {
		t.Errorf("one session taught %d phrases of one tool, want %d", len(a), MaxSessionPhrases)
	}
	ev := Collect(func() []trace.Record {
		recs := []trace.Record{sel("s1", "do everything", now)}
		for i := range 25 {
			recs = append(recs, ranBy("s1", "", fmt.Sprint("tool_", i)))
		}
		return recs
	}())
	tools := map[string]bool{}
	for _, it := range ev.items {
		tools[it.tool] = true
	}
	if len(tools) != MaxSessionTools {
		t.Errorf("one session taught about %d tools, want %d", len(tools), MaxSessionTools)
	}
}
