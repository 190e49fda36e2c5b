package rank

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"math/rand/v2"
	"strings"
	"testing"
)

func vectorOf(t testing.TB, tab *wordVectors, w string) []float32 {
	t.Helper()
	id, ok := tab.ids[w]
	if !ok {
		t.Fatalf("no vector for %q", w)
	}
	return tab.appendVector(nil, id)
}

func TestEmbeddedVectors(t *testing.T) {
	tab, err := loadVectors()
	if err != nil {
		t.Fatal(err)
	}
	if len(tab.ids) < 40000 || tab.dims != 64 {
		t.Errorf("table has %d words × %d dims, want at least 40000 × 64", len(tab.ids), tab.dims)
	}
	// Words of tools that 2014's news and Wikipedia rank low are there,
	// kept for being one token of o200k.
	for _, w := range []string{"json", "github", "timezone", "screenshot", "yaml", "oauth"} {
		if _, ok := tab.ids[w]; !ok {
			t.Errorf("no vector for %q", w)
		}
	}
	cos := func(a, b string) float64 { return float64(dot(vectorOf(t, tab, a), vectorOf(t, tab, b))) }
	if got := cos("movie", "movie"); got < 0.99 || got > 1.01 {
		t.Errorf("cos(movie, movie) = %.3f, want 1 (unit vectors)", got)
	}
	// Words of like meaning are closer than unrelated ones, and above
	// the floor the third stage uses.
	for _, tt := range []struct{ a, b, far string }{
		{"movie", "film", "tax"},
		{"music", "songs", "invoice"},
		{"weather", "forecast", "compiler"},
		{"delete", "remove", "weather"},
		{"hotel", "accommodation", "python"},
	} {
		near, far := cos(tt.a, tt.b), cos(tt.a, tt.far)
		if near < similarFloor || near <= far {
			t.Errorf("cos(%s, %s) = %.2f, cos(%s, %s) = %.2f: want the first above %.2f and the second", tt.a, tt.b, near, tt.a, tt.far, far, similarFloor)
		}
	}
	// Frequent words weigh less than rare ones.
	if w1, w2 := tab.weight(tab.ids["the"]), tab.weight(tab.ids["forecast"]); w1 >= w2 {
		t.Errorf("weight(the) = %.3f >= weight(forecast) = %.3f", w1, w2)
	}
	// A word missing as written is found by its stem.
	if _, ok := tab.id("zzzsearching", "search"); !ok {
		t.Error("id: the stem was not tried")
	}
}

func TestDecodeVectorsErrors(t *testing.T) {
	table := func(header string, body []byte) []byte {
		var raw bytes.Buffer
		raw.WriteString(header)
		raw.Write(body)
		var gz bytes.Buffer
		zw := gzip.NewWriter(&gz)
		zw.Write(raw.Bytes())
		zw.Close()
		return gz.Bytes()
	}
	counts := func(n uint32, dims uint16) []byte {
		b := binary.LittleEndian.AppendUint32(nil, n)
		return binary.LittleEndian.AppendUint16(b, dims)
	}
	good := append(counts(1, 2), 2, 'a', 'b', 1, 2)
	if _, err := decodeVectors(table(wordvecMagic, good)); err != nil {
		t.Fatalf("a good table: %v", err)
	}
	for _, tt := range []struct {
		name string
		gz   []byte
		want string
	}{
		{"not gzip", []byte("plain text"), "word vectors"},
		{"wrong magic", table("capbroker-wordvec/9\n", good), "not a capbroker-wordvec/1 table"},
		{"no header", table(wordvecMagic, []byte{1, 0}), "truncated header"},
		{"zero dims", table(wordvecMagic, counts(1, 0)), "zero dimensions"},
		{"short word", table(wordvecMagic, append(counts(1, 2), 5, 'a')), "truncated at word 0"},
		{"short vectors", table(wordvecMagic, append(counts(1, 2), 2, 'a', 'b', 1)), "1 bytes of vectors, want 2"},
	} {
		_, err := decodeVectors(tt.gz)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want it to say %q", tt.name, err, tt.want)
		}
	}
}

// BenchmarkDot measures one similarity of two 64-dimension vectors, the
// third stage's unit of work.
func BenchmarkDot(b *testing.B) {
	tab, err := loadVectors()
	if err != nil {
		b.Fatal(err)
	}
	var arena []float32
	for id := range int32(4000) {
		arena = tab.appendVector(arena, id)
	}
	d := tab.dims
	var s float32
	i := 0
	for b.Loop() {
		x, y := i%1000, 1000+i%3000
		s += dot(arena[x*d:(x+1)*d], arena[y*d:(y+1)*d])
		i++
	}
	_ = s
}

// BenchmarkLoadVectors measures the one-time decoding of the embedded
// table, paid by the first index of a process.
func BenchmarkLoadVectors(b *testing.B) {
	for b.Loop() {
		if _, err := decodeVectors(wordvecGz); err != nil {
			b.Fatal(err)
		}
	}
}

// TestDot2: dot2 sums each product exactly as dot does, so the third
// stage's similarities do not depend on which it used.
func TestDot2(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	vec := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		return v
	}
	for n := range 70 {
		for range 20 {
			a, c, b := vec(n), vec(n), vec(n)
			x, y := dot2(a, c, b)
			if x != dot(a, b) || y != dot(c, b) {
				t.Fatalf("n=%d: dot2 = %v, %v; dot = %v, %v", n, x, y, dot(a, b), dot(c, b))
			}
		}
	}
}
