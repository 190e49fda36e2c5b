package dense

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/capbroker/capbroker/encoder"
	"github.com/capbroker/capbroker/rank"
)

// TestQueryParts: a task of several steps is embedded as its steps
// (steps.Split), anything else as written.
func TestQueryParts(t *testing.T) {
	tests := []struct {
		query string
		want  []string
	}{
		{"send an email to bob", []string{"send an email to bob"}},
		{"send an email to bob.", []string{"send an email to bob."}},
		{"Find the budget for 2023. Then open the valve!", []string{"Find the budget for 2023", "open the valve"}},
		{"read config.yaml, then post a summary to slack", []string{"read config.yaml", "post a summary to slack"}},
		{"first line\nsecond line", []string{"first line", "second line"}},
		{"heat to 50.0 degrees and call api.example.com", []string{"heat to 50.0 degrees", "call api.example.com"}},
		// A step too short to stand alone joins the one before it.
		{"Is it raining? Book a table?", []string{"Is it raining? Book a table?"}},
		{"  ", []string{"  "}},
		{"trailing space. ", []string{"trailing space. "}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, QueryParts(tt.query)); diff != "" {
			t.Errorf("QueryParts(%q) (-want +got):\n%s", tt.query, diff)
		}
	}
	if got := len(QueryParts(strings.Repeat("open the file of the project. ", 12))); got != MaxQueryParts {
		t.Errorf("12 steps: %d parts, want %d", got, MaxQueryParts)
	}
}

// TestPartScoresByHand checks a two-part query's scores on vectors whose
// similarities are easy to compute.
func TestPartScoresByHand(t *testing.T) {
	// Four unit vectors: a and b along the axes, c between them, d away.
	s := float32(math.Sqrt(0.5))
	v, err := NewVectors([]string{"a", "b", "c", "d"}, [][]float32{{1, 0, 0}, {0, 1, 0}, {s, s, 0}, {0, 0, 1}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Part 1 along a: similarities 1, 0, s, 0. Part 2 along b: 0, 1, s, 0.
	sc, err := v.scoreRows([][]float32{{1, 0, 0}, {0, 1, 0}})
	if err != nil {
		t.Fatal(err)
	}
	ps, mo := partScoresOf(sc.rows)
	sims := []float64{1, 0, float64(s), 0}
	var mean, sq float64
	for _, x := range sims {
		mean += x / 4
		sq += x * x / 4
	}
	std := math.Sqrt(sq - mean*mean)
	z := func(x float64) float64 { return (x - mean) / std }
	// Both parts have the same moments (the catalog is symmetric in a, b).
	want := []float64{z(1), z(1), z(float64(s)), z(0)}
	wantSim := []float64{1, 1, float64(s), 0}
	for i := range want {
		if math.Abs(ps.z[i]-want[i]) > 1e-6 || math.Abs(ps.sim[i]-wantSim[i]) > 1e-6 {
			t.Errorf("card %d: z %.6f sim %.6f, want %.6f and %.6f", i, ps.z[i], ps.sim[i], want[i], wantSim[i])
		}
	}
	if mo.N != 4 || math.Abs(mo.Mean-mean) > 1e-6 || math.Abs(mo.Std-std) > 1e-6 {
		t.Errorf("moments %+v, want mean %.6f std %.6f over 4", mo, mean, std)
	}
	if _, err := v.scoreRows([][]float32{{1, 0, 0}, {1, 0}}); err == nil {
		t.Error("a part of the wrong length: no error")
	}
}

// TestZScoreFusionOfParts fuses a two-part query by hand: every card's
// dense z is its best part's, and its similarity that part's.
func TestZScoreFusionOfParts(t *testing.T) {
	h := &Hybrid{o: (&Options{DenseWeight: 0.5}).resolved()}
	lex := []rank.Hit{{Name: "a", Index: 0, Score: 3}, {Name: "b", Index: 1, Score: 1}}
	ds := &denseResult{
		hits:  []Hit{{Hit: rank.Hit{Name: "c", Index: 2}, Dense: &Part{Score: 0.7}}},
		mo:    Moments{Mean: 0.3, Std: 0.2, N: 100},
		parts: &partScores{z: []float64{0, 3, 2}, sim: []float64{0.2, 0.6, 0.7}},
		rows:  [][]float32{{0.2, 0.1, 0.7}, {0.1, 0.6, 0.3}},
	}
	if err := h.lexicalSimilarities(lex, ds); err != nil {
		t.Fatal(err)
	}
	// Lexical z: a +1, b -1; c is no lexical candidate and gets -1.
	want := map[string]float64{
		"a": 0.5*1 + 0.5*0,  // 0.5
		"b": 0.5*-1 + 0.5*3, // 1
		"c": 0.5*-1 + 0.5*2, // 0.5, just below a
	}
	wantSim := map[string]float64{"a": 0.2, "b": 0.6, "c": 0.7}
	got := h.fuse(lex, ds, 0)
	if diff := cmp.Diff([]string{"b", "a", "c"}, names(got)); diff != "" {
		t.Fatalf("order (-want +got):\n%s", diff)
	}
	for _, x := range got {
		if math.Abs(x.Score-want[x.Name]) > 1e-6 || x.Similarity != wantSim[x.Name] {
			t.Errorf("%s: fused %.9f similarity %v, want %.9f and %v", x.Name, x.Score, x.Similarity, want[x.Name], wantSim[x.Name])
		}
	}
}

// TestSentencesFindEachTool ranks a task of two requests with the
// built-in encoder: the top two are the two requests' tools.
func TestSentencesFindEachTool(t *testing.T) {
	if testing.Short() {
		t.Skip("loads the built-in encoder")
	}
	enc, err := encoder.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := NewIndex(context.Background(), toolCards(), enc, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	qs, err := ix.EmbedQueryParts(context.Background(), "Will it splorch in Paris tomorrow? Then splorch the screen into a picture.")
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) != 2 {
		t.Fatalf("%d parts, want 2", len(qs))
	}
	hits, _, ps, _, err := ix.searchParts(qs, 2)
	if err != nil || ps == nil {
		t.Fatalf("searchParts: %v, parts %v", err, ps)
	}
	got := names(hits)
	for _, want := range []string{"get_weather", "take_screenshot"} {
		if !strings.Contains(strings.Join(got, " "), want) {
			t.Errorf("top 2 %v lacks %s", got, want)
		}
	}
}

// shortEmbedder embeds card texts, then answers a query of several
// texts with one vector too few.
type shortEmbedder struct{ wordEmbedder }

func (e *shortEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	vs, err := e.wordEmbedder.Embed(ctx, texts)
	if len(texts) > 1 && len(texts) <= MaxQueryParts {
		vs = vs[:len(vs)-1]
	}
	return vs, err
}

// TestHybridFallsBackOnPartsMismatch: an embedder that returns too few
// vectors for a task's sentences leaves that task lexical, counted and
// explained; a one-sentence task is fused.
func TestHybridFallsBackOnPartsMismatch(t *testing.T) {
	ctx := context.Background()
	var why []string
	h := buildHybrid(t, &shortEmbedder{}, &Options{Cooldown: -1, OnFallback: func(_ string, err error) { why = append(why, err.Error()) }})
	hits := h.Search(ctx, "Send an email to bob. Then create a github issue.", 3)
	if len(hits) == 0 || hits[0].Fallback == "" || hits[0].Dense != nil {
		t.Fatalf("two sentences: %+v, want lexical hits with a fallback", hits)
	}
	if h.Fallbacks() != 1 || len(why) != 1 || !strings.Contains(why[0], "got 1 vectors for 2 texts") {
		t.Errorf("fallbacks %d, why %q", h.Fallbacks(), why)
	}
	hits = h.Search(ctx, "send an email to bob", 3)
	if len(hits) == 0 || hits[0].Fallback != "" || hits[0].Dense == nil {
		t.Errorf("one sentence: %+v, want fused hits", hits)
	}
}

// queryRecorder is an embedder with EmbedQueries of its own: it records
// which texts each method embedded.
type queryRecorder struct {
	docs, queries []string
}

func (r *queryRecorder) Model() string { return "recorder" }
func (r *queryRecorder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	r.docs = append(r.docs, texts...)
	return r.vectors(texts), nil
}
func (r *queryRecorder) EmbedQueries(_ context.Context, texts []string) ([][]float32, error) {
	r.queries = append(r.queries, texts...)
	return r.vectors(texts), nil
}
func (r *queryRecorder) vectors(texts []string) [][]float32 {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = wordEmbed(t)
	}
	return out
}

// TestQueriesEmbeddedAsQueries: an index embeds its cards with Embed and
// every query (one, its parts, a batch) with the embedder's EmbedQueries.
func TestQueriesEmbeddedAsQueries(t *testing.T) {
	ctx := context.Background()
	r := &queryRecorder{}
	cards := toolCards()
	ix, err := NewIndex(ctx, cards, r, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.docs) != len(cards) || len(r.queries) != 0 {
		t.Fatalf("cards: %d texts embedded as documents, %d as queries; want %d and 0", len(r.docs), len(r.queries), len(cards))
	}
	if _, err := ix.Search(ctx, "take a screenshot", 3); err != nil {
		t.Fatal(err)
	}
	if _, err := ix.EmbedQueryParts(ctx, "Will it rain in Paris tomorrow? Then take a screenshot."); err != nil {
		t.Fatal(err)
	}
	if _, err := ix.EmbedQueries(ctx, []string{"send mail", "send mail", "weather"}); err != nil {
		t.Fatal(err)
	}
	want := []string{"take a screenshot", "Will it rain in Paris tomorrow", "take a screenshot", "send mail", "weather"}
	if diff := cmp.Diff(want, r.queries); diff != "" || len(r.docs) != len(cards) {
		t.Errorf("queries embedded (-want +got):\n%s\n%d document texts", diff, len(r.docs))
	}
}
