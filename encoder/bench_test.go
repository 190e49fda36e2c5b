package encoder

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/capbroker/capbroker/encoder/internal/bert"
	"github.com/capbroker/capbroker/encoder/internal/tensor"

	"github.com/capbroker/capbroker/internal/testenv"
)

// task20 is a task of 20 sentence pieces.
const task20 = "find the open pull requests on the payments repository and summarize what each one changes"

// kernels are the matrix kernels this CPU runs, best first, each with
// a function that turns it on for packing and one for running (see
// internal/tensor): amx (8-bit inputs, TDPBUSD, the same bits as
// vnni), vnni (8-bit inputs, VPDPBUSD on zmm), avxvnni (8-bit inputs,
// VPDPBUSD on ymm, VEX-encoded: the same bits again; AVX-512 off, as on
// a CPU with AVX-VNNI but no AVX-512), vnni16 (int16 inputs, VPDPWSSD:
// the layers packed for the int16 kernels, run with VNNI on), avx2
// (int16 inputs), avx2u7 (7-bit inputs, VPMADDUBSW: off by default, see
// tensor's q7.go), go (the portable float loops).
func kernels() []struct {
	name      string
	pack, run func()
} {
	type k = struct {
		name      string
		pack, run func()
	}
	set := func(vnni, avx, u7 bool) func() {
		return func() {
			tensor.UseAMX, tensor.UseVNNI, tensor.UseAVXVNNI, tensor.UseAVX2, tensor.UseU7 = false, vnni, false, avx, u7
			tensor.UseSDOT, tensor.UseNEON = false, false
		}
	}
	var ks []k
	if tensor.HaveAMX {
		amx := func() {
			tensor.UseAMX, tensor.UseVNNI, tensor.UseAVXVNNI, tensor.UseAVX2, tensor.UseU7 = true, true, false, true, false
		}
		ks = append(ks, k{"amx", amx, amx})
	}
	if tensor.HaveVNNI {
		ks = append(ks, k{"vnni", set(true, true, false), set(true, true, false)})
	}
	if tensor.HaveAVXVNNI {
		avxvnni := func() {
			tensor.UseAMX, tensor.UseVNNI, tensor.UseAVXVNNI, tensor.UseAVX2, tensor.UseU7 = false, false, true, true, false
		}
		ks = append(ks, k{"avxvnni", avxvnni, avxvnni})
	}
	if tensor.HaveVNNI {
		ks = append(ks, k{"vnni16", set(false, true, false), set(true, true, false)})
	}
	if tensor.HaveAVX2 {
		ks = append(ks, k{"avx2", set(false, true, false), set(false, true, false)},
			k{"avx2u7", set(false, true, true), set(false, true, false)})
	}
	if tensor.HaveSDOT {
		sdot := func() { restoreKernels(); tensor.UseSDOT = true }
		ks = append(ks, k{"sdot", sdot, sdot})
	}
	return append(ks, k{"go", set(false, false, false), set(false, false, false)})
}

// restoreKernels turns this CPU's default kernels back on.
func restoreKernels() {
	tensor.UseAMX, tensor.UseVNNI, tensor.UseAVXVNNI, tensor.UseAVX2, tensor.UseU7 =
		tensor.HaveAMX, tensor.HaveVNNI, tensor.HaveAVXVNNI, tensor.HaveAVX2, false
	tensor.UseSDOT, tensor.UseNEON = tensor.HaveSDOT, tensor.HaveNEON
}

// fresh returns an encoder of one worker over a model of its own, its
// layers packed for the kernels pack turns on.
func fresh(tb testing.TB, pack func()) *Encoder {
	m, err := bert.ReadTable(table)
	if err != nil {
		tb.Fatal(err)
	}
	e := &Encoder{m: m, workers: 1}
	e.pool.New = func() any { return new(bert.Scratch) }
	pack()
	long := strings.Repeat("read the file and write it back ", 10) // packs at once
	if _, err := e.Embed(context.Background(), []string{long}); err != nil {
		tb.Fatal(err)
	}
	return e
}

// BenchmarkTask embeds a task of 17 pieces on one worker, with each
// matrix kernel this CPU runs (see kernels).
func BenchmarkTask(b *testing.B) {
	defer restoreKernels()
	ctx := context.Background()
	for _, k := range kernels() {
		e := fresh(b, k.pack)
		n := len(e.Tokens(task20))
		b.Run("kernel="+k.name, func(b *testing.B) {
			k.run()
			b.ReportAllocs()
			cpu0 := testenv.CPUTime()
			for b.Loop() {
				if _, err := e.Embed(ctx, []string{task20}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n), "tokens")
			b.ReportMetric(float64(testenv.CPUTime()-cpu0)/1e6/float64(b.N), "cpu-ms/op")
		})
	}
}

// coldBytes is written between the passes of BenchmarkTaskCold: more
// than the last-level cache holds, as a server's other work between two
// queries evicts the weights.
var coldBytes = make([]byte, 48<<20)

// BenchmarkTaskCold is BenchmarkTask with the caches cold: 48 MB are
// written between passes (not counted), so each pass reads the packed
// weights from beyond L2. cpu-ms/op is the pass's CPU alone.
func BenchmarkTaskCold(b *testing.B) {
	benchBetween(b, func(i int) {
		for j := 0; j < len(coldBytes); j += 64 {
			coldBytes[j] += byte(i)
		}
	})
}

// BenchmarkTaskIdle is BenchmarkTask with 20 ms of sleep between
// passes (not counted), as a server waits between requests: other
// processes and machines sharing the last-level cache evict the 10.6 MB
// of packed weights, and the pass reads them from memory. cpu-ms/op is
// the pass's CPU alone (here 1.3-2× BenchmarkTask's).
func BenchmarkTaskIdle(b *testing.B) {
	benchBetween(b, func(int) { time.Sleep(20 * time.Millisecond) })
}

// benchBetween embeds task20 with each integer kernel, calling between
// (with the pass's number) before each pass, and reports the passes'
// CPU alone.
func benchBetween(b *testing.B, between func(i int)) {
	defer restoreKernels()
	ctx := context.Background()
	for _, k := range kernels() {
		if k.name == "go" {
			continue // the float loops are compute-bound
		}
		e := fresh(b, k.pack)
		b.Run("kernel="+k.name, func(b *testing.B) {
			k.run()
			var cpu time.Duration
			for i := 0; b.Loop(); i++ {
				between(i)
				c0 := testenv.CPUTime()
				if _, err := e.Embed(ctx, []string{task20}); err != nil {
					b.Fatal(err)
				}
				cpu += testenv.CPUTime() - c0
			}
			b.ReportMetric(float64(cpu)/1e6/float64(b.N), "cpu-ms/op")
		})
	}
}

// BenchmarkRows embeds texts of 12 to 56 rows (pieces plus [CLS] and
// [SEP]) on one worker, with the two fastest integer kernels this CPU
// runs: how a warm pass's CPU grows with its rows. On AMX a row costs
// about 0.032 ms and the rest of a pass about 0.27 ms; past amxRows
// (28) a second call a layer adds about 0.2 ms (docs/speed.md, round
// eight).
func BenchmarkRows(b *testing.B) {
	defer restoreKernels()
	ctx := context.Background()
	words := strings.Fields(strings.Repeat("find open pull requests payments repository summarize what each one changes ", 8))
	ks := kernels()
	for _, k := range ks[:min(2, len(ks))] {
		e := fresh(b, k.pack)
		for _, want := range []int{12, 20, 28, 29, 36, 44, 56} {
			// The shortest prefix of words with at least want rows.
			var text string
			for w := 1; w <= len(words); w++ {
				text = strings.Join(words[:w], " ")
				if len(e.Tokens(text))+2 >= want {
					break
				}
			}
			rows := len(e.Tokens(text)) + 2
			b.Run(fmt.Sprintf("kernel=%s/rows=%d", k.name, rows), func(b *testing.B) {
				k.run()
				cpu0 := testenv.CPUTime()
				for b.Loop() {
					if _, err := e.Embed(ctx, []string{text}); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(testenv.CPUTime()-cpu0)/1e6/float64(b.N), "cpu-ms/op")
			})
		}
	}
}

// BenchmarkCards embeds 64 card texts a run; tokens/s is the throughput.
func BenchmarkCards(b *testing.B) {
	texts := make([]string, 64)
	for i := range texts {
		texts[i] = fmt.Sprintf("tool %d: %s Parameters: path, content, mode.", i,
			strings.Repeat("Reads or writes a file in the workspace and reports what changed. ", 1+i%3))
	}
	for _, w := range []int{1, 2} {
		b.Run(fmt.Sprintf("workers=%d", w), func(b *testing.B) {
			e, err := New(&Options{Workers: w})
			if err != nil {
				b.Fatal(err)
			}
			tokens := 0
			for _, t := range texts {
				tokens += min(len(e.Tokens(t)), MaxTokens)
			}
			ctx := context.Background()
			b.ReportAllocs()
			cpu0 := testenv.CPUTime()
			for b.Loop() {
				if _, err := e.Embed(ctx, texts); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(tokens*b.N)/b.Elapsed().Seconds(), "tokens/s")
			b.ReportMetric(float64(tokens*b.N)/(testenv.CPUTime()-cpu0).Seconds(), "tokens/cpu-s")
		})
	}
}
