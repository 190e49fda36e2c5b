package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/capbroker/capbroker/dense"
	"github.com/capbroker/capbroker/encoder"
	"github.com/capbroker/capbroker/internal/testenv"
	"github.com/capbroker/capbroker/policy"
)

// weatherTools are an upstream's tools no word of "what's it like
// outside in Lyon" names: only their meaning finds them.
const weatherTools = `[
 {"name": "get_weather_forecast", "description": "Get the weather forecast for a city: temperature, rain and wind for the next days."},
 {"name": "convert_currency", "description": "Convert an amount of money from one currency to another at today's rate."},
 {"name": "translate_text", "description": "Translate text into another language."}
]`

const meaningTask = "what's it like outside in Lyon"

// meteo is a test-binary upstream with the weather tools besides its own.
func meteo() ServerConfig {
	s := testServer("meteo")
	s.Env[testServerEnv+"_EXTRA"] = weatherTools
	return s
}

// events collects the gateway's trace events.
type events struct {
	mu  sync.Mutex
	all []Event
}

func (e *events) Record(_ context.Context, ev Event) {
	e.mu.Lock()
	e.all = append(e.all, ev)
	e.mu.Unlock()
}

// last returns the last event of kind.
func (e *events) last(kind string) (Event, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for i := len(e.all) - 1; i >= 0; i-- {
		if e.all[i].Kind == kind {
			return e.all[i], true
		}
	}
	return Event{}, false
}

// gated embeds cards with the built-in encoder once its gate is open,
// counting the texts; a single text (a task) it embeds at once.
type gated struct {
	*encoder.Encoder
	gate  chan struct{}
	texts atomic.Int64
}

func (g *gated) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 1 {
		return g.Encoder.Embed(ctx, texts) // a task
	}
	select {
	case <-g.gate:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	g.texts.Add(int64(len(texts)))
	return g.Encoder.Embed(ctx, texts)
}

func builtin(tb testing.TB) *encoder.Encoder {
	tb.Helper()
	enc, err := encoder.New(nil)
	if err != nil {
		tb.Fatal(err)
	}
	return enc
}

func openCache(tb testing.TB, path string) *dense.Cache {
	tb.Helper()
	c, err := dense.OpenCache(context.Background(), path)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	return c
}

// findOut is find_capability's answer.
type findOut struct {
	Matches []struct{ Name, Reason string } `json:"matches"`
}

func findRanked(t *testing.T, cs *mcp.ClientSession, query string) findOut {
	t.Helper()
	text, isErr := callText(t, cs, policy.HatchName, map[string]any{"query": query})
	if isErr {
		t.Fatalf("find_capability(%q): %s", query, text)
	}
	var out findOut
	if err := json.Unmarshal([]byte(text), &out); err != nil {
		t.Fatalf("find_capability output %q: %v", text, err)
	}
	return out
}

func (f findOut) names() []string {
	var n []string
	for _, m := range f.Matches {
		n = append(n, m.Name)
	}
	return n
}

func status(t *testing.T, url string) RankingStatus {
	t.Helper()
	res, err := http.Get(strings.TrimSuffix(url, "/mcp") + "/status")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var st struct {
		Ranking RankingStatus `json:"ranking"`
	}
	if err := json.NewDecoder(res.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	return st.Ranking
}

// TestHybridFindsByMeaning: with the built-in encoder, the gateway ranks
// lexically while its cards are embedded in the background (saying so in
// /status, the metrics and the trace), then finds by meaning a tool no
// word of the task names, explained by its similarity; the vectors are
// cached, so the next gateway ranks by meaning at once without embedding.
// Without an embedder the same task finds nothing.
func TestHybridFindsByMeaning(t *testing.T) {
	const tool = "meteo__get_weather_forecast"
	cachePath := filepath.Join(t.TempDir(), "capbroker.db")
	enc := builtin(t)
	emb := &gated{Encoder: enc, gate: make(chan struct{})}
	var evs events
	g := startGateway(t, []ServerConfig{meteo()}, &Options{Mode: ModeAuto, Family: policy.General,
		Embedder: emb, EmbedCache: openCache(t, cachePath), Trace: &evs})
	url := serveHTTP(t, g, nil)
	cs := connect(t, url, nil, nil)

	// Before the vectors: words only, and said so.
	if got := findRanked(t, cs, meaningTask).names(); slices.Contains(got, tool) {
		t.Fatalf("found %s by words: %v", tool, got)
	}
	st := status(t, url)
	if st.Ranker != dense.KindHybrid || st.ByMeaning || !strings.Contains(st.Why, "background") || st.Fallbacks == 0 {
		t.Errorf("status before the vectors: %+v", st)
	}
	if ev, ok := evs.last("find"); !ok || !strings.Contains(ev.Ranking, "background") {
		t.Errorf("find event before the vectors: %+v", ev)
	}
	m := g.Metrics()
	if n := counterValue(t, m, "cards"); n == 0 {
		t.Error("no fallback counted in capbroker_gateway_rank_fallbacks_total{why=cards}")
	}
	if v := gaugeValue(t, m, "capbroker_gateway_ranking_by_meaning"); v != 0 {
		t.Errorf("ranking_by_meaning %v before the vectors", v)
	}

	close(emb.gate)
	eventually(t, "the card vectors are in use", func() bool { return g.Ranking().ByMeaning })
	out := findRanked(t, cs, meaningTask)
	if len(out.Matches) == 0 || out.Matches[0].Name != tool || !strings.Contains(out.Matches[0].Reason, "similarity 0.") {
		t.Fatalf("find by meaning: %+v", out)
	}
	if ev, ok := evs.last("find"); !ok || ev.Ranking != "" || !slices.Contains(ev.Names, tool) {
		t.Errorf("find event by meaning: %+v", ev)
	}
	if st := status(t, url); !st.ByMeaning || st.Why != "" || st.Embedded == 0 || st.Model != enc.Model() {
		t.Errorf("status by meaning: %+v", st)
	}
	if v := gaugeValue(t, m, "capbroker_gateway_ranking_by_meaning"); v != 1 {
		t.Errorf("ranking_by_meaning %v by meaning", v)
	}
	if text, isErr := callText(t, cs, tool, map[string]any{}); isErr || text != "get_weather_forecast: ok" {
		t.Errorf("calling the found tool: %v %q", isErr, text)
	}

	// A second gateway over the same cache: by meaning at once, nothing
	// embedded (its gate never opens).
	again := &gated{Encoder: enc, gate: make(chan struct{})}
	g2 := startGateway(t, []ServerConfig{meteo()}, &Options{Mode: ModeAuto, Family: policy.General,
		Embedder: again, EmbedCache: openCache(t, cachePath)})
	eventually(t, "the cached vectors are in use", func() bool { return g2.Ranking().ByMeaning })
	if st := g2.Ranking(); st.Embedded != 0 || st.Cached != st.Cards || again.texts.Load() != 0 {
		t.Errorf("warm start: %+v, %d texts embedded", st, again.texts.Load())
	}
	cs2 := connect(t, serveHTTP(t, g2, nil), nil, nil)
	if got := findRanked(t, cs2, meaningTask).names(); len(got) == 0 || got[0] != tool {
		t.Errorf("warm start find: %v", got)
	}

	// Lexical: nothing shares a word with the task.
	g3 := startGateway(t, []ServerConfig{meteo()}, &Options{Mode: ModeAuto, Family: policy.General})
	cs3 := connect(t, serveHTTP(t, g3, nil), nil, nil)
	if got := findRanked(t, cs3, meaningTask).names(); slices.Contains(got, tool) {
		t.Errorf("lexical find found %s: %v", tool, got)
	}
	if st := g3.Ranking(); st.Ranker != dense.KindLexical || st.ByMeaning {
		t.Errorf("lexical status: %+v", st)
	}
}

// TestHybridTask: a gateway started with --task selects by meaning at
// session start once the vectors are ready.
func TestHybridTask(t *testing.T) {
	g := startGateway(t, []ServerConfig{meteo()}, &Options{Mode: ModeCall, Family: policy.General, Task: meaningTask,
		Embedder: builtin(t)})
	eventually(t, "the card vectors are in use", func() bool { return g.Ranking().ByMeaning })
	cs := connect(t, serveHTTP(t, g, nil), nil, nil)
	if got := listNames(t, cs); !slices.Contains(got, "meteo__get_weather_forecast") {
		t.Errorf("selected for %q: %v", meaningTask, got)
	}
}

// TestHybridLateTools: a tool an upstream adds at run time (list_changed)
// is embedded alone, in the background, and found by meaning.
func TestHybridLateTools(t *testing.T) {
	cache := openCache(t, filepath.Join(t.TempDir(), "capbroker.db"))
	g := startGateway(t, []ServerConfig{meteo()}, &Options{Mode: ModeAuto, Family: policy.General,
		Embedder: builtin(t), EmbedCache: cache})
	eventually(t, "the card vectors are in use", func() bool { return g.Ranking().ByMeaning })
	before := g.Ranking().Cards
	cs := connect(t, serveHTTP(t, g, nil), nil, map[string]string{ModeHeader: "all"})
	if text, isErr := callText(t, cs, "meteo__grow", map[string]any{}); isErr {
		t.Fatal(text)
	}
	eventually(t, "the grown tool is offered", func() bool { return slices.Contains(g.Tools(), "meteo__grown") })
	eventually(t, "the grown tool's vector is in use", func() bool {
		st := g.Ranking()
		return st.Cards == before+1 && st.ByMeaning
	})
	if st := g.Ranking(); st.Embedded != 1 || st.Cached != before {
		t.Errorf("after list_changed: %+v (want 1 embedded, %d cached)", st, before)
	}
	// A tool whose description changes has a new digest: embedded again,
	// alone.
	if text, isErr := callText(t, cs, "meteo__reword", map[string]any{"text": "Tell a joke that makes people laugh."}); isErr {
		t.Fatal(text)
	}
	eventually(t, "the changed tool's vector is in use", func() bool {
		st := g.Ranking()
		return st.ByMeaning && st.Embedded == 1 && st.Cached == before
	})
}

// embeddingEndpoint is a real OpenAI-style embeddings endpoint in front
// of the built-in encoder; down makes it answer 503.
type embeddingEndpoint struct {
	enc  *encoder.Encoder
	down atomic.Bool
	srv  *httptest.Server
}

func newEndpoint(t *testing.T) *embeddingEndpoint {
	e := &embeddingEndpoint{enc: builtin(t)}
	e.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if e.down.Load() {
			http.Error(w, `{"error":{"message":"overloaded","type":"server_error"}}`, http.StatusServiceUnavailable)
			return
		}
		var req struct {
			Input []string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		vs, err := e.enc.Embed(r.Context(), req.Input)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		type datum struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		out := struct {
			Data []datum `json:"data"`
		}{}
		for i, v := range vs {
			out.Data = append(out.Data, datum{i, v})
		}
		json.NewEncoder(w).Encode(out)
	}))
	t.Cleanup(e.srv.Close)
	return e
}

func client(t *testing.T, base string) *dense.Client {
	c, err := dense.NewClient(&dense.ClientOptions{BaseURL: base, Model: "remote-test", MaxRetries: -1, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestRankingFallbacks: every way the meaning can be missing leaves
// find_capability answering by words, never failing, and is recorded in
// /status, the metrics and the trace.
func TestRankingFallbacks(t *testing.T) {
	const words = "echo the text back"
	t.Run("broken cache", func(t *testing.T) {
		cache := openCache(t, filepath.Join(t.TempDir(), "capbroker.db"))
		cache.Close() // every read and write now fails
		g := startGateway(t, []ServerConfig{meteo()}, &Options{Mode: ModeAuto, Family: policy.General,
			Embedder: builtin(t), EmbedCache: cache})
		eventually(t, "the card vectors are in use", func() bool { return g.Ranking().ByMeaning })
		st := g.Ranking()
		if !slices.ContainsFunc(st.Notes, func(n string) bool { return strings.Contains(n, "cache cannot be read") }) {
			t.Errorf("notes %q: want the unreadable cache", st.Notes)
		}
		cs := connect(t, serveHTTP(t, g, nil), nil, nil)
		if got := findRanked(t, cs, meaningTask).names(); len(got) == 0 || got[0] != "meteo__get_weather_forecast" {
			t.Errorf("find: %v", got)
		}
	})

	t.Run("endpoint down while embedding cards, then up", func(t *testing.T) {
		ep := newEndpoint(t)
		ep.down.Store(true)
		var evs events
		g := startGateway(t, []ServerConfig{meteo()}, &Options{Mode: ModeAuto, Family: policy.General,
			Embedder: client(t, ep.srv.URL+"/v1"), RankRetry: 200 * time.Millisecond, Trace: &evs})
		url := serveHTTP(t, g, nil)
		eventually(t, "the failure is noted", func() bool { return strings.Contains(g.Ranking().Why, "503") })
		cs := connect(t, url, nil, nil)
		if got := findRanked(t, cs, words).names(); len(got) == 0 || got[0] != "meteo__echo" {
			t.Errorf("find by words: %v", got)
		}
		if ev, _ := evs.last("find"); !strings.Contains(ev.Ranking, "503") {
			t.Errorf("find event: ranking %q", ev.Ranking)
		}
		if st := status(t, url); st.ByMeaning || st.Fallbacks == 0 {
			t.Errorf("status: %+v", st)
		}
		ep.down.Store(false) // the gateway tries again by itself
		eventually(t, "the card vectors are in use after the retry", func() bool { return g.Ranking().ByMeaning })
		if got := findRanked(t, cs, meaningTask).names(); len(got) == 0 || got[0] != "meteo__get_weather_forecast" {
			t.Errorf("find by meaning after the retry: %v", got)
		}
	})

	t.Run("endpoint down when a task is embedded", func(t *testing.T) {
		ep := newEndpoint(t)
		var evs events
		g := startGateway(t, []ServerConfig{meteo()}, &Options{Mode: ModeAuto, Family: policy.General,
			Embedder: client(t, ep.srv.URL+"/v1"), Trace: &evs})
		eventually(t, "the card vectors are in use", func() bool { return g.Ranking().ByMeaning })
		ep.down.Store(true)
		cs := connect(t, serveHTTP(t, g, nil), nil, nil)
		if got := findRanked(t, cs, words).names(); len(got) == 0 || got[0] != "meteo__echo" {
			t.Errorf("find by words: %v", got)
		}
		if ev, _ := evs.last("find"); !strings.Contains(ev.Ranking, "could not be embedded") {
			t.Errorf("find event: ranking %q", ev.Ranking)
		}
		if n := counterValue(t, g.Metrics(), "query"); n == 0 {
			t.Error("no fallback counted in capbroker_gateway_rank_fallbacks_total{why=query}")
		}
	})

	t.Run("endpoint unreachable", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close() // nothing listens there now
		g := startGateway(t, []ServerConfig{meteo()}, &Options{Mode: ModeAuto, Family: policy.General,
			Embedder: client(t, "http://"+addr+"/v1")})
		eventually(t, "the failure is noted", func() bool { return strings.Contains(g.Ranking().Why, "ranking lexically") })
		cs := connect(t, serveHTTP(t, g, nil), nil, nil)
		if got := findRanked(t, cs, words).names(); len(got) == 0 || got[0] != "meteo__echo" {
			t.Errorf("find by words: %v", got)
		}
	})
}

func gaugeValue(t *testing.T, m *Metrics, name string) float64 {
	t.Helper()
	mfs, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.Metric) > 0 {
			return mf.Metric[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}

// TestSharedEmbedder: texts being embedded for one catalog are waited for,
// not embedded again, by another; a failure reaches both.
func TestSharedEmbedder(t *testing.T) {
	ctx := context.Background()
	inner := &gated{Encoder: builtin(t), gate: make(chan struct{})}
	s := &sharedEmbedder{e: inner, inflight: map[textKey]*flight{}}
	var wg sync.WaitGroup
	res := make([][][]float32, 2)
	errs := make([]error, 2)
	wg.Add(2)
	go func() { defer wg.Done(); res[0], errs[0] = s.Embed(ctx, []string{"a b", "c d", "e f"}) }()
	eventually(t, "the first call is in flight", func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return len(s.inflight) == 3
	})
	go func() { defer wg.Done(); res[1], errs[1] = s.Embed(ctx, []string{"c d", "g h", "i j"}) }()
	eventually(t, "the second call is in flight", func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return len(s.inflight) == 5
	})
	close(inner.gate)
	wg.Wait()
	if errs[0] != nil || errs[1] != nil {
		t.Fatal(errs)
	}
	if n := inner.texts.Load(); n != 5 {
		t.Errorf("%d texts embedded, want 5 (c d once)", n)
	}
	if !slices.Equal(res[0][1], res[1][0]) || len(res[1][1]) == 0 {
		t.Error("the shared text's vector differs")
	}
	failing := &sharedEmbedder{e: failEmbedder{}, inflight: map[textKey]*flight{}}
	if _, err := failing.Embed(ctx, []string{"x", "y"}); err == nil || len(failing.inflight) != 0 {
		t.Errorf("failure: %v, %d left in flight", err, len(failing.inflight))
	}
}

// TestSharedEmbedderQueries: a query is embedded as the encoder embeds
// queries (without its fillers), a card text whole, and the same text as
// both keeps two vectors in memory.
func TestSharedEmbedderQueries(t *testing.T) {
	ctx := context.Background()
	enc := builtin(t)
	s := &sharedEmbedder{e: enc, inflight: map[textKey]*flight{}}
	const text = "could you please read the file"
	asCard, err := s.Embed(ctx, []string{text})
	if err != nil {
		t.Fatal(err)
	}
	asQuery, err := s.EmbedQueries(ctx, []string{text})
	if err != nil {
		t.Fatal(err)
	}
	wantCard, _ := enc.Embed(ctx, []string{text})
	wantQuery, _ := enc.EmbedQueries(ctx, []string{text})
	if !slices.Equal(asCard[0], wantCard[0]) || !slices.Equal(asQuery[0], wantQuery[0]) {
		t.Fatal("a vector differs from the encoder's")
	}
	if slices.Equal(asCard[0], asQuery[0]) {
		t.Fatal("the query was embedded as a card")
	}
	again, err := s.EmbedQueries(ctx, []string{text})
	if err != nil || !slices.Equal(again[0], wantQuery[0]) {
		t.Fatalf("the query again: %v", err)
	}
	// An embedder without EmbedQueries embeds queries with Embed.
	plain := &sharedEmbedder{e: failEmbedder{}, inflight: map[textKey]*flight{}}
	if _, err := plain.EmbedQueries(ctx, []string{text}); err == nil || err.Error() != "connection refused" {
		t.Errorf("plain embedder: %v", err)
	}
}

type failEmbedder struct{}

func (failEmbedder) Model() string { return "fail" }
func (failEmbedder) Embed(context.Context, []string) ([][]float32, error) {
	return nil, errors.New("connection refused")
}

// counterValue reads capbroker_gateway_rank_fallbacks_total{why}.
func counterValue(t *testing.T, m *Metrics, why string) float64 {
	t.Helper()
	mfs, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "capbroker_gateway_rank_fallbacks_total" {
			continue
		}
		for _, mt := range mf.Metric {
			for _, l := range mt.Label {
				if l.GetName() == "why" && l.GetValue() == why {
					return mt.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

// TestRankingOutageLoggedOnce: an endpoint down across many retries is
// logged when the outage starts and when it ends, not at every retry.
func TestRankingOutageLoggedOnce(t *testing.T) {
	ep := newEndpoint(t)
	ep.down.Store(true)
	var log testenv.Buffer
	g := startGateway(t, []ServerConfig{meteo()}, &Options{Mode: ModeAuto, Family: policy.General,
		Embedder: client(t, ep.srv.URL+"/v1"), RankRetry: 20 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelInfo}))})
	eventually(t, "several retries", func() bool { return g.ranking.down.Load() >= 4 })
	ep.down.Store(false)
	eventually(t, "the card vectors are in use after the retries", func() bool { return g.Ranking().ByMeaning })
	eventually(t, "the end of the outage is logged", func() bool { return strings.Contains(log.String(), "after_failed_tries") })
	out := log.String()
	if n := strings.Count(out, "trying again to embed"); n != 1 {
		t.Errorf("%d lines about trying again, want 1:\n%s", n, out)
	}
	if n := strings.Count(out, "level=WARN"); n != 1 {
		t.Errorf("%d warnings, want 1 (the failure, once):\n%s", n, out)
	}
}
