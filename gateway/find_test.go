package gateway

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/capbroker/capbroker/policy"
)

// bulkServer is a test server of 500 look-up tools and a few others.
func bulkServer() ServerConfig {
	s := testServer("bulk")
	s.Env[testServerEnv+"_TOOLS"] = "500"
	s.Env[testServerEnv+"_EXTRA"] = `[{"name":"send_email","description":"Send an email message to a recipient, with a subject and a body."},
		{"name":"create_calendar_event","description":"Create an event in the user's calendar at a date and time."},
		{"name":"weather_forecast","description":"Get the weather forecast for a city."}]`
	return s
}

// TestFindWholeTaskCompact: one find of a task of three steps answers
// each step, in compact JSON within the token budget on a catalog of
// over 500 tools; schemas come only with confident matches, and only
// those join the session's list.
func TestFindWholeTaskCompact(t *testing.T) {
	g := startGateway(t, []ServerConfig{testServer("alpha"), bulkServer()}, &Options{Mode: ModeSearch, Family: policy.General})
	url := serveHTTP(t, g, nil)
	cs := connect(t, url, nil, nil)
	if n := len(g.catalog().names); n < 500 {
		t.Fatalf("catalog of %d tools", n)
	}
	query := "echo the text back, then send an email to Bob about it, then create a calendar event for Friday at 3pm"
	text, isErr := callText(t, cs, policy.HatchName, map[string]any{"query": query})
	if isErr {
		t.Fatal(text)
	}
	if strings.Contains(text, "\n") {
		t.Errorf("the answer is indented: %s", text)
	}
	if n := countText(text); n > DefaultFindBudget {
		t.Errorf("the answer takes %d tokens, more than %d: %s", n, DefaultFindBudget, text)
	}
	var out struct {
		Matches []struct {
			Name, Description, Confidence string
			InputSchema                   json.RawMessage `json:"input_schema"`
		}
		Held []struct{ Name, Held, Why string }
	}
	if err := json.Unmarshal([]byte(text), &out); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range out.Matches {
		names = append(names, m.Name)
		if m.Confidence == policy.Low && len(m.InputSchema) > 0 {
			t.Errorf("%s, a low match, comes with its schema", m.Name)
		}
		if strings.Contains(m.Description, "\n") {
			t.Errorf("%s: a description of several lines: %q", m.Name, m.Description)
		}
	}
	for _, h := range out.Held {
		names = append(names, h.Name) // send_email is irreversible: held
		if !strings.Contains(h.Why, "--allow-irreversible") {
			t.Errorf("held %s: %q does not say what releases it", h.Name, h.Why)
		}
	}
	for _, want := range []string{"alpha__echo", "bulk__send_email", "bulk__create_calendar_event"} {
		if !slices.Contains(names, want) {
			t.Errorf("the find answered %v, without %s (a step of the task): %s", names, want, text)
		}
	}
	listed := listNames(t, cs)
	for _, m := range out.Matches {
		if in := slices.Contains(listed, m.Name); in != (m.Confidence != policy.Low) {
			t.Errorf("%s (%s) listed: %v; want only confident matches listed", m.Name, m.Confidence, in)
		}
	}
}
