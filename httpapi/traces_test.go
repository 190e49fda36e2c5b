package httpapi_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/capbroker/capbroker/httpapi"
	"github.com/capbroker/capbroker/trace"
)

func TestTraces(t *testing.T) {
	st := newStore(t)
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var recs []trace.Record
	for i, k := range []trace.Kind{trace.KindSelect, trace.KindFind, trace.KindCall, trace.KindFind, trace.KindRoute} {
		sid := "s1"
		if i == 4 {
			sid = ""
		}
		recs = append(recs, trace.Record{SessionID: sid, Kind: k, At: at.Add(time.Duration(i) * time.Second), Task: "task", CapabilityReason: string(k)})
	}
	if err := st.AppendTraces(context.Background(), recs...); err != nil {
		t.Fatal(err)
	}
	ts := newTestServer(t, &httpapi.Options{Traces: st})
	list := func(t *testing.T, query string) []trace.Record {
		t.Helper()
		status, body := do(t, ts, "GET", "/v1/traces"+query, "", nil)
		if status != 200 {
			t.Fatalf("status %d: %s", status, body)
		}
		var out []trace.Record
		strict(t, body, &out)
		return out
	}
	reasons := func(rs []trace.Record) []string {
		out := []string{}
		for _, r := range rs {
			out = append(out, r.CapabilityReason)
		}
		return out
	}
	for _, tt := range []struct {
		query string
		want  []string
	}{
		{"", []string{"select", "find", "call", "find", "route"}},
		{"?session=s1", []string{"select", "find", "call", "find"}},
		{"?kind=find", []string{"find", "find"}},
		{"?session=s1&kind=call", []string{"call"}},
		{"?limit=2", []string{"select", "find"}},
		{"?session=none", []string{}},
	} {
		t.Run(tt.query, func(t *testing.T) {
			if d := cmp.Diff(tt.want, reasons(list(t, tt.query))); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
	// Paging with after: the next page starts after the last ID seen.
	page := list(t, "?limit=3")
	next := list(t, "?limit=3&after="+jsonNumber(page[2].ID))
	if d := cmp.Diff([]string{"find", "route"}, reasons(next)); d != "" {
		t.Errorf("second page (-want +got):\n%s", d)
	}
	if page[0].SessionID != "s1" || !page[0].At.Equal(at) || page[0].Version != trace.Version {
		t.Errorf("first record: %+v", page[0])
	}
	// An empty list is [], never null.
	if _, body := do(t, ts, "GET", "/v1/traces?session=none", "", nil); string(body) != "[]\n" {
		t.Errorf("empty list: %q", body)
	}

	for _, tt := range []struct {
		name, method, path string
		status             int
		code, msg          string
	}{
		{"bad kind", "GET", "/v1/traces?kind=sing", 400, "invalid", `unknown trace kind "sing"`},
		{"bad limit", "GET", "/v1/traces?limit=0", 400, "invalid", "limit"},
		{"huge limit", "GET", "/v1/traces?limit=100000", 400, "invalid", "want 1 to 10000"},
		{"bad after", "GET", "/v1/traces?after=x", 400, "invalid", "after"},
		{"wrong method", "POST", "/v1/traces", 405, "method_not_allowed", "use GET"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			status, body := do(t, ts, tt.method, tt.path, "", nil)
			checkError(t, status, body, tt.status, tt.code, tt.msg)
		})
	}

	ts = newTestServer(t, nil)
	status, body := do(t, ts, "GET", "/v1/traces", "", nil)
	checkError(t, status, body, 501, "not_configured", "traces are not configured")
}

func jsonNumber(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}
