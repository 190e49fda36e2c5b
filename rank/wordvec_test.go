package rank

import (
	"encoding/binary"
	"math/rand/v2"
	"strings"
	"testing"
)

func vectorOf(t testing.TB, tab *wordVectors, w string) []float32 {
	t.Helper()
	id, ok := tab.lookup(w)
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
	if tab.n < 40000 || tab.dims != 64 {
		t.Errorf("table has %d words × %d dims, want at least 40000 × 64", tab.n, tab.dims)
	}
	// Every word is found where the hash table says, as itself: the
	// table is read in place, so this is its only full check.
	prev := uint32(0)
	for id := range tab.n {
		w := tab.word(id)
		if lo := binary.LittleEndian.Uint32(tab.offs[4*id:]); lo != prev || w == "" {
			t.Fatalf("word %d: offset %d after %d, text %q", id, lo, prev, w)
		}
		prev += uint32(len(w))
		if got, ok := tab.lookup(w); !ok || int(got) != id {
			t.Fatalf("lookup(%q) = %d, %v; want %d", w, got, ok, id)
		}
	}
	for _, w := range []string{"", "zzzz-not-a-word", "Movie", "movies "} {
		if tab.has(w) {
			t.Errorf("has(%q) = true, want false", w)
		}
	}
	// Words of tools that 2014's news and Wikipedia rank low are there,
	// kept for being one token of o200k.
	for _, w := range []string{"json", "github", "timezone", "screenshot", "yaml", "oauth"} {
		if !tab.has(w) {
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
	if w1, w2 := tab.weight(mustID(t, tab, "the")), tab.weight(mustID(t, tab, "forecast")); w1 >= w2 {
		t.Errorf("weight(the) = %.3f >= weight(forecast) = %.3f", w1, w2)
	}
	// A word missing as written is found by its stem.
	if _, ok := tab.id("zzzsearching", "search"); !ok {
		t.Error("id: the stem was not tried")
	}
}

func mustID(t testing.TB, tab *wordVectors, w string) int32 {
	t.Helper()
	id, ok := tab.lookup(w)
	if !ok {
		t.Fatalf("no vector for %q", w)
	}
	return id
}

// TestOpenVectorsErrors: a table whose sizes do not add up is refused
// with a message that says which part is wrong; a small good one is read
// in place.
func TestOpenVectorsErrors(t *testing.T) {
	// table builds a table of the given words (each in the slot its hash
	// names, or the next free one) and vectors of dims bytes each.
	table := func(magic string, words []string, dims uint16, slots uint32, vecs []byte) []byte {
		b := []byte(magic)
		b = binary.LittleEndian.AppendUint32(b, uint32(len(words)))
		b = binary.LittleEndian.AppendUint16(b, dims)
		b = binary.LittleEndian.AppendUint16(b, 0)
		b = binary.LittleEndian.AppendUint32(b, slots)
		hash := make([]uint32, slots)
		for i, w := range words {
			h := wordHash(w) & (slots - 1)
			for hash[h] != 0 {
				h = (h + 1) & (slots - 1)
			}
			hash[h] = uint32(i + 1)
		}
		for _, v := range hash {
			b = binary.LittleEndian.AppendUint32(b, v)
		}
		off := uint32(0)
		for _, w := range words {
			b = binary.LittleEndian.AppendUint32(b, off)
			off += uint32(len(w))
		}
		b = binary.LittleEndian.AppendUint32(b, off)
		for _, w := range words {
			b = append(b, w...)
		}
		return append(b, vecs...)
	}
	good := table(wordvecMagic, []string{"ab", "cd"}, 2, 4, []byte{1, 2, 3, 4})
	tab, err := openVectors(good)
	if err != nil {
		t.Fatalf("a good table: %v", err)
	}
	if id, ok := tab.id("zz", "cd"); !ok || id != 1 || tab.vecs[2] != 3 {
		t.Errorf("id(zz, cd) = %d, %v (vector %v), want 1 [3 4]", id, ok, tab.vecs[2:])
	}
	if tab.has("abcd") || tab.has("a") {
		t.Error("a word not in the table was found")
	}
	for _, tt := range []struct {
		name string
		raw  []byte
		want string
	}{
		{"gzip'd v1", []byte("\x1f\x8b\x08plain"), "not a capbroker-wordvec/2 table"},
		{"wrong magic", table("capbroker-wordvec/1\n", []string{"ab"}, 2, 2, []byte{1, 2}), "not a capbroker-wordvec/2 table"},
		{"no header", []byte(wordvecMagic + "\x01\x00"), "truncated header"},
		{"zero dims", table(wordvecMagic, []string{"ab"}, 0, 2, nil), "zero dimensions"},
		{"slots not a power of two", table(wordvecMagic, []string{"ab"}, 2, 3, []byte{1, 2}), "3 hash slots for 1 words"},
		{"full hash table", table(wordvecMagic, []string{"ab", "cd"}, 2, 2, []byte{1, 2, 3, 4}), "2 hash slots for 2 words"},
		{"short index", good[:len(wordvecMagic)+12+4*4+4], "truncated index"},
		{"short words", good[:len(good)-4-2], "bytes of words, want 4"},
		{"short vectors", good[:len(good)-1], "3 bytes of vectors, want 4"},
	} {
		_, err := openVectors(tt.raw)
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

// BenchmarkLoadVectors measures the one-time opening of the embedded
// table, paid by the first index of a process.
func BenchmarkLoadVectors(b *testing.B) {
	for b.Loop() {
		if _, err := openVectors(wordvecBin); err != nil {
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

// TestAppendVector: the table's bytes become x/127, bit for bit.
func TestAppendVector(t *testing.T) {
	tab, err := loadVectors()
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []int32{0, 1, 777, int32(tab.n - 1)} {
		got := tab.appendVector([]float32{9}, id)
		if len(got) != 1+tab.dims || got[0] != 9 {
			t.Fatalf("appendVector(%d): %d values, first %v", id, len(got), got[0])
		}
		for i, x := range tab.vecs[int(id)*tab.dims : int(id+1)*tab.dims] {
			if want := float32(x) / 127; got[1+i] != want {
				t.Fatalf("word %d component %d: %v, want %v", id, i, got[1+i], want)
			}
		}
	}
}
