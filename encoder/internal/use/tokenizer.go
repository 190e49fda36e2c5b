package use

import (
	"strings"
	"unicode/utf16"

	"golang.org/x/text/unicode/norm"
)

// Piece is one entry of the SentencePiece vocabulary: its text ("▁" marks
// a word start) and its log-probability.
type Piece struct {
	Text  string
	Score float64
}

// reserved is the number of vocabulary entries (unknown, <s>, </s> and three
// spare ids) that never come out of the tokenizer except the unknown id 0.
const reserved = 6

// wordStart is SentencePiece's space marker.
const wordStart = '▁'

// Tokenizer splits text into vocabulary ids exactly as the reference
// implementation (@energetic-ai/embeddings, a port of TensorFlow.js's
// universal-sentence-encoder tokenizer) does: NFKC, spaces to "▁", a "▁"
// in front, then the most probable segmentation over the unigram
// vocabulary (Viterbi), with a character no piece starts with as the
// unknown id 0 and runs of unknowns merged into one.
//
// It reproduces the reference's quirks on purpose, since the model was
// run on its output: ties go to the later, shorter piece, a position with
// a best score of exactly 0 takes any piece, and backtracking steps by the
// piece's length in UTF-16 code units.
type Tokenizer struct {
	pieces []Piece
	// trie: node 0 is the root; edges maps node<<21|rune to the child.
	edges map[uint64]int32
	nodes []trieNode
	// units is each piece's length in UTF-16 code units.
	units []int32
}

type trieNode struct {
	end   bool
	depth int32
	score float64
	index int32
}

// NewTokenizer builds the tokenizer of a vocabulary.
func NewTokenizer(pieces []Piece) *Tokenizer {
	t := &Tokenizer{
		pieces: pieces,
		edges:  make(map[uint64]int32, len(pieces)*3),
		nodes:  []trieNode{{}},
		units:  make([]int32, len(pieces)),
	}
	for i, p := range pieces {
		t.units[i] = int32(len(utf16.Encode([]rune(p.Text))))
		if i < reserved {
			continue
		}
		node := int32(0)
		rs := []rune(p.Text)
		for d, r := range rs {
			key := uint64(node)<<21 | uint64(r)
			child, ok := t.edges[key]
			if !ok {
				child = int32(len(t.nodes))
				t.nodes = append(t.nodes, trieNode{depth: int32(d + 1)})
				t.edges[key] = child
			}
			node = child
		}
		if len(rs) > 0 {
			n := &t.nodes[node]
			n.end, n.score, n.index = true, p.Score, int32(i)
		}
	}
	return t
}

// Len is the vocabulary size.
func (t *Tokenizer) Len() int { return len(t.pieces) }

// Piece returns the text of id.
func (t *Tokenizer) Piece(id int32) string { return t.pieces[id].Text }

type candidate struct {
	start int32
	score float64
	index int32
}

// Encode returns the ids of text.
func (t *Tokenizer) Encode(text string) []int32 {
	text = strings.ToValidUTF8(text, "\uFFFD")
	text = norm.NFKC.String(text)
	if text == "" {
		return nil
	}
	syms := make([]rune, 0, len(text)+1)
	syms = append(syms, wordStart)
	for _, r := range text {
		if r == ' ' {
			r = wordStart
		}
		syms = append(syms, r)
	}
	n := len(syms)
	ends := make([][]candidate, n+1)
	for i := 0; i < n; i++ {
		found := false
		node := int32(0)
		for j := i; j < n; j++ {
			child, ok := t.edges[uint64(node)<<21|uint64(syms[j])]
			if !ok {
				break
			}
			node = child
			if nd := &t.nodes[node]; nd.end {
				ends[j+1] = append(ends[j+1], candidate{start: int32(i), score: nd.score, index: nd.index})
				found = true
			}
		}
		if !found {
			ends[i+1] = append(ends[i+1], candidate{start: int32(i), score: 0, index: 0})
		}
	}
	// Pieces ending at a position were appended in ascending start
	// order, which is the order the reference visits them in.
	best := make([]float64, n+1)
	words := make([]int32, n+1)
	for end := 0; end <= n; end++ {
		for _, c := range ends[end] {
			s := c.score + best[c.start]
			if best[end] == 0 || s >= best[end] {
				best[end] = s
				words[end] = c.index
			}
		}
	}
	var rev []int32
	for it := n; it > 0; it -= int(t.units[words[it]]) {
		rev = append(rev, words[it])
	}
	out := make([]int32, 0, len(rev))
	prevUnk := false
	for _, id := range rev {
		if !(prevUnk && id == 0) {
			out = append(out, id)
		}
		prevUnk = id == 0
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}
