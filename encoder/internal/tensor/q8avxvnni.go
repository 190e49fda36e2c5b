package tensor

// The 8-bit product on AVX-VNNI. Intel's client CPUs since Alder Lake
// (and Sierra Forest, and AMD's Zen 5) have VPDPBUSD and VPDPWSSD on ymm
// registers in a VEX encoding (AVX-VNNI) but no AVX-512. There the
// 8-bit kernel of q8.go runs 256 bits at a time: qdot8AVXVNNI, one
// Packed8 block of 16 outputs (two ymm) times four rows a call, the
// same packing, rounding (quant8AVX2), zero points and outlier columns,
// and the same operations on each output in the same order as
// qdot8VNNI, so the two give the same bits (TestPacked8Spec) and the
// same vectors. The instructions are written as bytes
// (q8avxvnni_amd64.s): Go's assembler encodes them with EVEX only.
//
// Where AVX-512 is there too the zmm kernel (or AMX) runs instead; the
// tests and benchmarks simulate a CPU with AVX-VNNI alone by turning
// UseVNNI off and UseAVXVNNI on, which also turns off every other
// AVX-512 kernel (see avx512).

// UseAVXVNNI turns the AVX-VNNI kernel on where the CPU has it (and
// UseVNNI is off, or the layer is run with it off); tests turn it on
// with UseVNNI off to simulate a CPU without AVX-512.
var UseAVXVNNI = HaveAVXVNNI

// avx512 reports whether the AVX-512 kernels run: where the AVX-512
// VNNI kernel does (UseVNNI stands for the AVX-512 family the kernels
// use: F, BW and VNNI). AVX-VNNI (UseAVXVNNI) is not AVX-512.
func avx512() bool { return UseVNNI && UseAVX2 }
