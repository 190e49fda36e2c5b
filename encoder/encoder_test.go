package encoder

import (
	"bufio"
	"context"
	"encoding/json"
	"math"
	"os"
	"slices"
	"testing"
)

type golden struct {
	Text   string    `json:"text"`
	Tokens []int32   `json:"tokens"`
	Vector []float32 `json:"vector"`
}

// goldenFiles names each model's reference vectors, which its JavaScript
// reference computed from the published weights (MiniLM: candle in
// WebAssembly; USE-lite: TensorFlow.js, with the reference's pieces too);
// regenerate them with scripts/encoder-reference.sh.
var goldenFiles = map[string]string{MiniLM: "testdata/golden_minilm.jsonl", USELite: "testdata/golden.jsonl"}

func readGolden(t testing.TB, model string) []golden {
	t.Helper()
	f, err := os.Open(goldenFiles[model])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var gs []golden
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var g golden
		if err := json.Unmarshal(sc.Bytes(), &g); err != nil {
			t.Fatalf("golden.jsonl line %d: %v", len(gs)+1, err)
		}
		gs = append(gs, g)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return gs
}

func cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return dot / math.Sqrt(na*nb)
}

// TestGolden compares each built-in model (int8 weights) with its
// JavaScript reference on every golden input: a vector at cosine ≥ 0.999
// (and, where the reference gives them, the same pieces), batched and
// alone.
func TestGolden(t *testing.T) {
	for _, model := range []string{MiniLM, USELite} {
		t.Run(model, func(t *testing.T) { testGolden(t, model) })
	}
}

func testGolden(t *testing.T, model string) {
	gs := readGolden(t, model)
	if len(gs) < 50 {
		t.Fatalf("%s has %d inputs, want ≥ 50", goldenFiles[model], len(gs))
	}
	e, err := New(&Options{Model: model})
	if err != nil {
		t.Fatal(err)
	}
	texts := make([]string, len(gs))
	for i, g := range gs {
		texts[i] = g.Text
	}
	// Once in one batch (as cards are embedded), once alone (as tasks).
	batch, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	worst := 1.0
	for i, g := range gs {
		if got := e.Tokens(g.Text); g.Tokens != nil && !slices.Equal(got, g.Tokens) {
			t.Errorf("%q: pieces %v, reference %v", g.Text, got, g.Tokens)
		}
		alone, err := e.Embed(context.Background(), []string{g.Text})
		if err != nil {
			t.Fatal(err)
		}
		if g.Vector == nil {
			for _, v := range batch[i] {
				if v != 0 {
					t.Errorf("%q has no pieces but a nonzero vector", g.Text)
					break
				}
			}
			continue
		}
		c := cosine(batch[i], g.Vector)
		worst = min(worst, c)
		if c < 0.999 {
			t.Errorf("%q: cosine with the reference %.5f < 0.999", g.Text, c)
		}
		if d := cosine(batch[i], alone[0]); d < 0.99999 {
			t.Errorf("%q: batched and alone differ (cosine %.6f)", g.Text, d)
		}
	}
	t.Logf("worst cosine with the JS reference over %d inputs: %.5f", len(gs), worst)
}
