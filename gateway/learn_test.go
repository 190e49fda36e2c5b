package gateway

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/capbroker/capbroker/policy"
	"github.com/capbroker/capbroker/store"
	"github.com/capbroker/capbroker/store/sqlite"
)

// learningGateway starts a lexical gateway whose sessions and traces go
// to st, learning from st unless noLearn, as capbroker gateway does
// without --task.
func learningGateway(t *testing.T, st store.Store, noLearn bool, every time.Duration) (*Gateway, string) {
	t.Helper()
	ss := NewStoreSessions(st, &StoreOptions{Task: "capbroker gateway (auto mode)", NoTask: true})
	t.Cleanup(func() { ss.Close() })
	o := &Options{Mode: ModeAuto, Family: policy.General, Store: ss, Trace: ss, LearnEvery: every}
	if !noLearn {
		o.Learn = st
	}
	g := startGateway(t, []ServerConfig{meteo()}, o)
	return g, serveHTTP(t, g, nil)
}

// reasonOf returns the reason find_capability gave for tool, "" if it was
// not found.
func reasonOf(out findOut, tool string) string {
	for _, m := range out.Matches {
		if m.Name == tool {
			return m.Reason
		}
	}
	return ""
}

// TestGatewayLearns: what a gateway session asked for before calling a
// tool teaches the next gateway over the same store (and the running one,
// at its next reading): a word only that session used finds the tool,
// explained as asked for. The gateway's own name for sessions started
// without a task is no phrase anyone asked for, and --no-learn turns it
// off.
func TestGatewayLearns(t *testing.T) {
	const weather, money = "meteo__get_weather_forecast", "meteo__convert_currency"
	path := filepath.Join(t.TempDir(), "capbroker.db")
	st, err := sqlite.Open(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })

	// A past session: found the forecast tool by one of its words, called it.
	g1, url1 := learningGateway(t, st, false, time.Hour)
	cs := connect(t, url1, nil, map[string]string{SessionHeader: "past"})
	if r := reasonOf(findRanked(t, cs, "splorch forecast"), weather); r == "" {
		t.Fatal("the forecast tool was not found by its word")
	}
	if text, isErr := callText(t, cs, weather, map[string]any{}); isErr {
		t.Fatal(text)
	}
	if r := reasonOf(findRanked(t, cs, "splorch"), weather); r != "" {
		t.Fatalf("learnt before the store was read again: %s", r)
	}
	cs.Close()
	g1.Close()

	// The next gateway learns it at start.
	g2, url2 := learningGateway(t, st, false, 100*time.Millisecond)
	eventually(t, "the gateway learnt from the store", func() bool {
		l := g2.Ranking().Learning
		return l != nil && l.Cards > 0
	})
	cs2 := connect(t, url2, nil, map[string]string{SessionHeader: "next"})
	r := reasonOf(findRanked(t, cs2, "splorch"), weather)
	if !strings.Contains(r, `"splorch forecast"`) {
		t.Errorf("find by a learnt word: reason %q", r)
	}
	if out := findRanked(t, cs2, "capbroker gateway auto mode"); slices.ContainsFunc(out.Matches, func(m struct{ Name, Reason string }) bool {
		return strings.Contains(m.Reason, "capbroker gateway")
	}) {
		t.Errorf("learnt the gateway's name for sessions as a task: %+v", out)
	}

	// While it runs: a session of this gateway teaches it at the next reading.
	if r := reasonOf(findRanked(t, cs2, "blorp currency"), money); r == "" {
		t.Fatal("the currency tool was not found by its word")
	}
	if text, isErr := callText(t, cs2, money, map[string]any{}); isErr {
		t.Fatal(text)
	}
	eventually(t, "the running gateway learnt from its own session", func() bool {
		return strings.Contains(reasonOf(findRanked(t, cs2, "blorp"), money), `"blorp currency"`)
	})

	// --no-learn.
	_, url3 := learningGateway(t, st, true, time.Hour)
	cs3 := connect(t, url3, nil, nil)
	if r := reasonOf(findRanked(t, cs3, "splorch"), weather); r != "" {
		t.Errorf("learnt with learning off: %s", r)
	}
}
