package gateway

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/capbroker/capbroker/encoder"
	"github.com/capbroker/capbroker/index"
	"github.com/capbroker/capbroker/policy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// findResult is find_capability's answer as the tests read it.
type findResult struct {
	Reason  string
	Matches []struct{ Name string }
	Held    []struct{ Name, Held, Why string }
}

func findAll(t *testing.T, cs *mcp.ClientSession, query string) findResult {
	t.Helper()
	text, isErr := callText(t, cs, policy.HatchName, map[string]any{"query": query})
	if isErr {
		t.Fatalf("find_capability(%q): %s", query, text)
	}
	var out findResult
	if err := json.Unmarshal([]byte(text), &out); err != nil {
		t.Fatalf("find_capability output %q: %v", text, err)
	}
	return out
}

// statusHeld reads /status's held tools.
func statusHeld(t *testing.T, url string) []Held {
	t.Helper()
	resp, err := http.Get(strings.TrimSuffix(url, "/mcp") + "/status")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var st struct{ Held []Held }
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatalf("/status %s: %v", b, err)
	}
	return st.Held
}

// TestHeldSaysWhy: a held-back tool never reads as absent. find_capability
// lists it under held with why and what releases it (and does not say
// "no capability matches"), a call to it says so (not "unknown tool ... no
// server offers it"), and /status lists it, in every mode, for each kind
// of hold. (The old gateway answered as if the tool did not exist.)
func TestHeldSaysWhy(t *testing.T) {
	for _, tc := range []struct {
		name  string
		opts  func(t *testing.T) *Options
		query string
		tool  string
		kind  string
		want  []string // in the reason, the call's error and /status
	}{
		{"irreversible", func(*testing.T) *Options { return &Options{} },
			"delete every record", "alpha__delete_all", HeldIrreversible,
			[]string{"irreversible", "--allow-irreversible", `"allowIrreversible": true on server "alpha"`}},
		{"new, with hold-new", func(t *testing.T) *Options {
			ix, err := index.Open(t.TempDir(), &index.Options{HoldNew: true})
			if err != nil {
				t.Fatal(err)
			}
			return &Options{Pins: ix}
		}, "echo the text back", "alpha__echo", HeldNew,
			[]string{"never seen before", "capbroker approve alpha__echo"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.opts(t)
			o.Family = policy.General
			g := startGateway(t, []ServerConfig{testServer("alpha")}, o)
			url := serveHTTP(t, g, nil)
			check := func(where, text string) {
				t.Helper()
				for _, w := range tc.want {
					if !strings.Contains(text, w) {
						t.Errorf("%s lacks %q: %s", where, w, text)
					}
				}
				for _, bad := range []string{"no server offers it", "unknown tool", "no capability matches"} {
					if strings.Contains(text, bad) {
						t.Errorf("%s reads as absent (%q): %s", where, bad, text)
					}
				}
			}
			for _, mode := range []Mode{ModeAll, ModeSearch, ModeCall, ModeAuto} {
				cs := connect(t, url, nil, map[string]string{ModeHeader: string(mode)})
				if mode != ModeAll {
					f := findAll(t, cs, tc.query)
					i := slices.IndexFunc(f.Held, func(h struct{ Name, Held, Why string }) bool { return h.Name == tc.tool })
					if i < 0 || f.Held[i].Held != tc.kind {
						t.Fatalf("%s: find_capability(%q) held %+v, want %s (%s)", mode, tc.query, f.Held, tc.tool, tc.kind)
					}
					if slices.ContainsFunc(f.Matches, func(m struct{ Name string }) bool { return m.Name == tc.tool }) {
						t.Errorf("%s: the held tool is among the matches", mode)
					}
					check(string(mode)+" find reason", f.Reason+" "+f.Held[i].Why)
				}
				name, args := tc.tool, any(map[string]any{"text": "x"})
				if mode == ModeCall || mode == ModeAuto {
					name, args = CallName, map[string]any{"name": tc.tool, "arguments": map[string]any{"text": "x"}}
				}
				text, isErr := callText(t, cs, name, args)
				if !isErr {
					t.Fatalf("%s: calling the held tool ran: %s", mode, text)
				}
				check(string(mode)+" call", text)
			}
			held := statusHeld(t, url)
			i := slices.IndexFunc(held, func(h Held) bool { return h.Name == tc.tool })
			if i < 0 || held[i].Kind != tc.kind || held[i].Release == "" {
				t.Fatalf("/status held %+v, want %s (%s) with what releases it", held, tc.tool, tc.kind)
			}
			check("/status", held[i].Why)
		})
	}
}

// TestPinsDeletedWhileRunning: pins.json deleted while the gateway runs
// holds every tool until re-approved (the old gateway re-pinned them all
// as approved), saying the file was deleted and naming capbroker approve
// --all; approving brings the tools back by themselves.
func TestPinsDeletedWhileRunning(t *testing.T) {
	dir := t.TempDir()
	ix, err := index.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	g := startGateway(t, []ServerConfig{testServer("alpha")}, &Options{Mode: ModeAll, Pins: ix, PinsInterval: 20 * time.Millisecond})
	cs := connect(t, serveHTTP(t, g, nil), nil, nil)
	if text, isErr := callText(t, cs, "alpha__echo", map[string]any{"text": "hi"}); isErr {
		t.Fatalf("before: %s", text)
	}
	if err := os.Remove(filepath.Join(dir, index.PinsName)); err != nil {
		t.Fatal(err)
	}
	eventually(t, "every tool is held", func() bool { return len(g.Tools()) == 0 })
	text, isErr := callText(t, cs, "alpha__echo", map[string]any{"text": "hi"})
	if !isErr || !strings.Contains(text, "was deleted") || !strings.Contains(text, "capbroker approve --all") {
		t.Fatalf("calling a tool after the pins were deleted: isError=%v %q", isErr, text)
	}
	other, err := index.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.ApproveAll(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the tools are back", func() bool { return slices.Contains(g.Tools(), "alpha__echo") })
	if text, isErr := callText(t, cs, "alpha__echo", map[string]any{"text": "back"}); isErr || text != "alpha: back" {
		t.Errorf("after approve --all: %v %q", isErr, text)
	}
}

// TestHeldFoundByMeaning: the held-back tools are ranked as the catalog
// is, so one that only the task's meaning finds is listed under held, not
// reported absent ("what's it like outside in Lyon" shares no word with
// get_weather_forecast).
func TestHeldFoundByMeaning(t *testing.T) {
	for _, tc := range []struct {
		name     string
		embedder bool
		want     bool
	}{
		{"hybrid", true, true},
		{"lexical", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ix, err := index.Open(t.TempDir(), &index.Options{HoldNew: true})
			if err != nil {
				t.Fatal(err)
			}
			o := &Options{Mode: ModeSearch, Family: policy.General, Pins: ix}
			if tc.embedder {
				o.Embedder = builtin(t)
			}
			g := startGateway(t, []ServerConfig{meteo()}, o)
			cs := connect(t, serveHTTP(t, g, nil), nil, nil)
			heldNames := func() []string {
				var n []string
				for _, h := range findAll(t, cs, meaningTask).Held {
					n = append(n, h.Name)
				}
				return n
			}
			const tool = "meteo__get_weather_forecast"
			if !tc.want {
				if got := heldNames(); slices.Contains(got, tool) {
					t.Errorf("held %v: lexically, %s shares no word with %q", got, tool, meaningTask)
				}
				return
			}
			eventually(t, "the held weather tool found by meaning", func() bool { return slices.Contains(heldNames(), tool) })
		})
	}
}

// queryCounter is the built-in encoder counting the query texts it
// embeds: every text of EmbedQueries, and those of Embed calls of a few.
type queryCounter struct {
	*encoder.Encoder
	texts atomic.Int64
}

func (c *queryCounter) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) <= 2 {
		c.texts.Add(int64(len(texts)))
	}
	return c.Encoder.Embed(ctx, texts)
}

// EmbedQueries counts every text: queries are embedded here.
func (c *queryCounter) EmbedQueries(ctx context.Context, texts []string) ([][]float32, error) {
	c.texts.Add(int64(len(texts)))
	return c.Encoder.EmbedQueries(ctx, texts)
}

// TestFindEmbedsQueryOnce: a query's vector is remembered, so a find of a
// query seen lately embeds nothing (find_capability ranks the catalog and
// the held-back tools with the same query: BenchmarkRanking's find p50
// went from 13.2 to 6.9 ms with it).
func TestFindEmbedsQueryOnce(t *testing.T) {
	ix, err := index.Open(t.TempDir(), &index.Options{HoldNew: true})
	if err != nil {
		t.Fatal(err)
	}
	qc := &queryCounter{Encoder: builtin(t)}
	g := startGateway(t, []ServerConfig{meteo()}, &Options{Mode: ModeSearch, Family: policy.General, Pins: ix, Embedder: qc})
	// Every tool is new, so held back: the catalog ranks the hatch alone,
	// the held-back tools by meaning.
	cs := connect(t, serveHTTP(t, g, nil), nil, nil)
	const tool = "meteo__get_weather_forecast"
	eventually(t, "the held weather tool found by meaning", func() bool {
		for _, h := range findAll(t, cs, meaningTask).Held {
			if h.Name == tool {
				return true
			}
		}
		return false
	})
	before := qc.texts.Load()
	findAll(t, cs, "will I need an umbrella in Lyon tomorrow")
	if n := qc.texts.Load() - before; n != 1 {
		t.Errorf("a find embedded %d query texts, want 1 (the catalog and the held-back tools share it)", n)
	}
	before = qc.texts.Load()
	findAll(t, cs, "will I need an umbrella in Lyon tomorrow")
	if n := qc.texts.Load() - before; n != 0 {
		t.Errorf("the same find again embedded %d query texts, want 0", n)
	}
}
