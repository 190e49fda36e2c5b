package tensor

import (
	"bytes"
	"debug/elf"
	"debug/gosym"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/capbroker/capbroker/internal/testenv"
)

// TestAVXVNNIEncoding checks what a test on this machine cannot run: a
// CPU with AVX-VNNI but no AVX-512 faults on any EVEX-encoded
// instruction (Go's assembler writes VPDPBUSD and VPDPWSSD that way even
// on ymm registers), and this machine has both. So the kernels such a
// CPU runs (every function of the package's assembly but the AVX-512,
// VNNI and AMX ones) are read from the test binary (where the function
// table, .gopclntab, puts them) and disassembled with GNU objdump: none
// may hold an EVEX instruction (prefix 62) or name a zmm or mask
// register, and qdot8AVXVNNI's products must be the VEX forms ("{vex}
// vpdpbusd", "{vex} vpdpwssd"). GNU as then assembles the products
// objdump read, and its bytes must be the kernel's. Without binutils it
// skips (fails under CI=true: scripts/setup.d/70-kernels.sh installs
// them).
func TestAVXVNNIEncoding(t *testing.T) {
	objdump, err := exec.LookPath("objdump")
	if err != nil {
		testenv.Missing(t, "objdump (Debian's binutils)")
	}
	// The assembly's functions, from its source.
	asm := map[string]bool{}
	files, err := filepath.Glob("*_amd64.s")
	if err != nil || len(files) == 0 {
		t.Fatal("no assembly files", err)
	}
	textRE := regexp.MustCompile(`(?m)^TEXT\s+(?:·(\w+)|(\w+)<>)\(SB\)`)
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range textRE.FindAllStringSubmatch(string(b), -1) {
			asm[m[1]+m[2]] = true
		}
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	text, pcln := f.Section(".text"), f.Section(".gopclntab")
	if text == nil || pcln == nil {
		t.Fatal("the test binary has no .text or .gopclntab")
	}
	data, err := pcln.Data()
	if err != nil {
		t.Fatal(err)
	}
	tab, err := gosym.NewTable(nil, gosym.NewLineTable(data, text.Addr))
	if err != nil {
		t.Fatal(err)
	}
	const pkg = "github.com/capbroker/capbroker/encoder/internal/tensor."
	isAVX512 := func(name string) bool {
		return strings.Contains(name, "AVX512") || strings.Contains(name, "AMX") ||
			strings.HasSuffix(name, "VNNI") && !strings.HasSuffix(name, "AVXVNNI")
	}
	dir := t.TempDir()
	checked := map[string]bool{}
	var products []insn // qdot8AVXVNNI's VPDPBUSD and VPDPWSSD
	var dp [2]int       // their numbers
	for _, fn := range tab.Funcs {
		// A function called from Go as a value has a wrapper of the same
		// name: both are checked.
		name := strings.TrimPrefix(fn.Name, pkg)
		if !asm[name] || isAVX512(name) {
			continue
		}
		if fn.Entry < text.Addr || fn.End > text.Addr+text.Size || fn.End <= fn.Entry {
			t.Fatalf("%s: %#x..%#x, outside .text", fn.Name, fn.Entry, fn.End)
		}
		code := make([]byte, fn.End-fn.Entry) // with the padding to the next function
		if _, err := text.ReadAt(code, int64(fn.Entry-text.Addr)); err != nil {
			t.Fatal(err)
		}
		lines := disassemble(t, objdump, dir, code)
		for _, l := range lines {
			raw, insn := l.raw, l.text
			op := raw
			for len(op) > 0 && (op[0] == 0x66 || op[0] == 0xf2 || op[0] == 0xf3) {
				op = op[1:]
			}
			if len(op) > 0 && op[0] == 0x62 || strings.Contains(insn, "zmm") || strings.Contains(insn, "%k") ||
				strings.Contains(insn, "(bad)") {
				t.Errorf("%s: % x\t%s: not an AVX2 (VEX) instruction", name, raw, insn)
			}
			for i, m := range []string{"vpdpbusd", "vpdpwssd"} {
				if !strings.Contains(insn, m) {
					continue
				}
				if name == "qdot8AVXVNNI" {
					dp[i]++
				}
				if !strings.HasPrefix(insn, "{vex} ") || len(raw) != 5 || raw[0] != 0xc4 {
					t.Errorf("%s: % x\t%s: not the VEX form", name, raw, insn)
				}
				if name == "qdot8AVXVNNI" {
					products = append(products, l)
				}
			}
		}
		checked[name] = true
	}
	if dp[0] == 0 || dp[1] == 0 {
		t.Errorf("qdot8AVXVNNI: %d VPDPBUSD and %d VPDPWSSD, want some of each", dp[0], dp[1])
	}
	for _, want := range []string{"keysT", "qdot8AVXVNNI", "quant8AVX2", "layerNormAVX2", "attendAVX2", "geluAVX2"} {
		if !checked[want] {
			t.Errorf("%s not found in the test binary's symbols", want)
		}
	}
	t.Logf("%d functions checked (%v), %d products of qdot8AVXVNNI", len(checked), slices.Sorted(maps.Keys(checked)), len(products))

	if len(products) == 0 {
		t.Fatal("no products of qdot8AVXVNNI found")
	}
	as, err := exec.LookPath("as")
	if err != nil {
		testenv.Missing(t, "as (Debian's binutils)")
	}
	var src strings.Builder
	src.WriteString(".text\n")
	for _, p := range products {
		src.WriteString(p.text + "\n")
	}
	s, o := filepath.Join(dir, "p.s"), filepath.Join(dir, "p.o")
	if err := os.WriteFile(s, []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(as, "--64", "-o", o, s).CombinedOutput(); err != nil {
		t.Fatalf("as: %v\n%s", err, out)
	}
	obj, err := elf.Open(o)
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	assembled, err := obj.Section(".text").Data()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range products {
		if !bytes.HasPrefix(assembled, p.raw) {
			t.Fatalf("%s: qdot8AVXVNNI has % x, GNU as % x", p.text, p.raw, assembled[:min(len(p.raw), len(assembled))])
		}
		assembled = assembled[len(p.raw):]
	}
	if len(assembled) > 0 {
		t.Fatalf("GNU as assembled %d bytes more than qdot8AVXVNNI's products", len(assembled))
	}
}

// insn is an instruction: its bytes and GNU objdump's text for it.
type insn struct {
	raw  []byte
	text string
}

// disassemble returns each instruction of code (x86-64) as GNU objdump
// reads it.
func disassemble(t *testing.T, objdump, dir string, code []byte) []insn {
	t.Helper()
	bin := filepath.Join(dir, "code.bin")
	if err := os.WriteFile(bin, code, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(objdump, "-D", "-b", "binary", "-m", "i386:x86-64", "--insn-width=16", bin).CombinedOutput()
	if err != nil {
		t.Fatalf("objdump: %v\n%s", err, out)
	}
	var lines []insn
	n := 0
	for l := range strings.Lines(string(out)) {
		// "   1f:\tc4 e2 75 50 d0       \t{vex} vpdpbusd %ymm0,%ymm1,%ymm2"
		f := strings.Split(strings.TrimRight(l, "\n"), "\t")
		if len(f) < 3 || !strings.HasSuffix(strings.TrimSpace(f[0]), ":") {
			continue
		}
		var raw []byte
		for _, h := range strings.Fields(f[1]) {
			var b byte
			for _, c := range h {
				b = b<<4 | byte(strings.IndexRune("0123456789abcdef", c))
			}
			raw = append(raw, b)
		}
		n += len(raw)
		lines = append(lines, insn{raw, strings.Join(strings.Fields(strings.Join(f[2:], " ")), " ")})
	}
	if n != len(code) {
		t.Fatalf("objdump read %d of %d bytes", n, len(code))
	}
	return lines
}
