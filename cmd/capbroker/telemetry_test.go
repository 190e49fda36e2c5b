package main

import (
	"maps"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capbroker/capbroker/internal/otlptest"
)

// TestTracing runs commands with OTEL_EXPORTER_OTLP_ENDPOINT pointed at an
// in-process OTLP receiver: each sends the command's span, the root, with
// the span of the operation it ran under it.
func TestTracing(t *testing.T) {
	proj := pythonProject(t)
	plugins := routingRoot(t, "plugins")
	db := filepath.Join(t.TempDir(), "s.db")
	type attrs map[string]any
	for _, tc := range []struct {
		name  string
		env   map[string]string
		args  []string
		child string
		attrs attrs // some of the child's attributes
	}{
		{"select", nil, []string{"select", "--json", "review the diff of the last git commit and fix the bug"}, "capbroker.select",
			attrs{"capbroker.family": "coding", "capbroker.ranker": "rank.Index"}},
		{"find", nil, []string{"find", "-k", "2", "roll back the deployment"}, "capbroker.find",
			attrs{"capbroker.find.k": int64(2), "capbroker.match_count": int64(2)}},
		{"route", nil, []string{"route", "--root", plugins, "--project", proj, "--state", "none", "--cache", "none", "--phase", "VERIFY"}, "capbroker.route",
			attrs{"capbroker.route.capability": "code-review", "capbroker.route.agent": "review:code-reviewer"}},
		{"plan", map[string]string{"CAPBROKER_LLM": "replay", "CAPBROKER_LLM_REPLAY": filepath.Join(replayDir, "four-tasks-unknown.json")},
			[]string{"plan", "Prepare the launch of our budgeting app", "--out", filepath.Join(t.TempDir(), "plan.json")}, "capbroker.plan",
			attrs{"capbroker.plan.task_count": int64(4), "capbroker.plan.warning_count": int64(1)}},
		{"session start", map[string]string{"CAPBROKER_DB": db}, []string{"session", "start", "--json", "--id", "otel-run", "search the web for news"}, "capbroker.session.start",
			attrs{"capbroker.session.id": "otel-run"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rcv := otlptest.New(t)
			env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": rcv.URL, "OTEL_SERVICE_NAME": "capbroker-test"}
			maps.Copy(env, tc.env)
			_, errOut, code := runEnv(t, env, tc.args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			if strings.Contains(errOut, "tracing") {
				t.Errorf("stderr: %s", errOut)
			}
			cmdName := "capbroker " + strings.Join(tc.args[:1+boolInt(tc.args[0] == "session")], " ")
			roots := rcv.Named(cmdName)
			if len(roots) != 1 || roots[0].ParentID != "" || roots[0].Str("capbroker.command") != cmdName {
				t.Fatalf("want one root span %q: %+v", cmdName, rcv.Spans())
			}
			root := roots[0]
			if root.Resource["service.name"] != "capbroker-test" || root.Resource["service.version"] == "" {
				t.Errorf("resource %v", root.Resource)
			}
			kids := rcv.Named(tc.child)
			if len(kids) != 1 || kids[0].ParentID != root.SpanID || kids[0].TraceID != root.TraceID {
				t.Fatalf("want one %s span under %s: %+v", tc.child, cmdName, rcv.Spans())
			}
			for k, v := range tc.attrs {
				if kids[0].Attrs[k] != v {
					t.Errorf("%s: %s = %#v, want %#v", tc.child, k, kids[0].Attrs[k], v)
				}
			}
		})
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestTracingOff: without an endpoint, or with tracing turned off, or
// with a collector that is down, a command does what it does untraced;
// only what cannot be used, and a failure to send, is said (once).
func TestTracingOff(t *testing.T) {
	args := []string{"select", "--json", "post the release notes to the team slack channel"}
	plain, plainErr, code := run(t, args...)
	if code != 0 {
		t.Fatal("untraced select failed")
	}
	rcv := otlptest.New(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + ln.Addr().String()
	ln.Close()
	for _, tc := range []struct {
		name   string
		env    map[string]string
		stderr string // "" nothing
	}{
		{"no endpoint", map[string]string{"OTEL_SERVICE_NAME": "x", "OTEL_TRACES_SAMPLER": "always_on"}, ""},
		{"sdk disabled", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": rcv.URL, "OTEL_SDK_DISABLED": "true"}, ""},
		{"exporter none", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": rcv.URL, "OTEL_TRACES_EXPORTER": "none"}, ""},
		{"grpc", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": rcv.URL, "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
			"capbroker: tracing: OTEL_EXPORTER_OTLP_PROTOCOL=grpc: capbroker sends OTLP over HTTP only"},
		{"collector down", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": down},
			"capbroker: tracing: sending spans to " + down + "/v1/traces: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := runEnv(t, tc.env, args...)
			if code != 0 || out != plain {
				t.Fatalf("exit %d, output differs from the untraced run: %s", code, errOut)
			}
			var tracing, rest []string
			for _, l := range strings.SplitAfter(errOut, "\n") {
				if strings.HasPrefix(l, "capbroker: tracing:") {
					tracing = append(tracing, l)
				} else {
					rest = append(rest, l)
				}
			}
			if strings.Join(rest, "") != plainErr {
				t.Errorf("stderr %q, want the untraced run's %q and tracing lines", errOut, plainErr)
			}
			if tc.stderr == "" && len(tracing) > 0 || tc.stderr != "" && (len(tracing) != 1 || !strings.HasPrefix(tracing[0], tc.stderr)) {
				t.Errorf("tracing lines %q, want one starting %q", tracing, tc.stderr)
			}
		})
	}
	if n := len(rcv.Spans()); n > 0 {
		t.Errorf("tracing off, yet %d spans were sent", n)
	}
}
