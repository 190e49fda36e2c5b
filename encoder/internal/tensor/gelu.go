package tensor

// GELU's Φ(x) = (1 + erf(x/√2))/2 is 1/2 + R(t), t = x clamped to
// [-geluClamp, geluClamp], R(t) = t·P(t²)/Q(t²) clamped to [-1/2, 1/2]:
// a rational approximation of erf(t/√2)/2 of degree 5 over 5 in t²,
// fitted (linearized least squares, then Lawson's reweighting towards
// the least maximum error) on [0, 5.7], where it errs by 1.2e-8 before
// rounding. Evaluated in float32, GELU is within 2.7e-7·|x| of x·Φ(x)
// (every float32 of ±[1e-4, 12] checked once: 2.65e-7 at 4.27;
// TestGELUError checks a grid). The table it replaced, Φ at knots 1/512
// apart read with AVX2 gathers, was within 5e-7 and 3.5 times slower. R reaches 1/2 at the clamp, so GELU is exactly 0
// below -5.7 (Φ < 6e-9 there) and exactly x above 5.7.
const geluClamp = 5.7

// The coefficients, as float32 (the assembly's DATA holds the same).
const (
	geluP0 = 0.3989422
	geluP1 = 0.03494081
	geluP2 = 0.0047407784
	geluP3 = 0.00017938516
	geluP4 = 6.373649e-06
	geluP5 = 2.1577824e-08
	geluQ1 = 0.2542491
	geluQ2 = 0.02926041
	geluQ3 = 0.0019445107
	geluQ4 = 7.67624e-05
	geluQ5 = 1.1648486e-06
)

// GELU sets each x[i] to x[i]·Φ(x[i]), the exact (erf) GELU, within
// 2.7e-7·|x[i]| (see geluClamp). Every step is one float32 operation
// rounded on its own (no fused multiply-add), so the assembly loops and
// the Go loop give the same bits, on every CPU: on amd64 16 values at a
// time with AVX-512 where the VNNI kernel runs (UseVNNI; 25 % faster
// than AVX2's 8 on the test machine's Zen 4, BenchmarkGELU), then 8 with
// AVX2; on arm64 8 at a time with NEON.
func GELU(x []float32) {
	n := 0
	if avx512() && len(x) >= 32 {
		n = len(x) &^ 31
		geluAVX512(&x[0], n)
		x = x[n:]
		n = 0
	}
	if UseAVX2 && len(x) >= 8 {
		n = len(x) &^ 7
		geluAVX2(&x[0], n)
	}
	if UseNEON && len(x) >= 8 {
		n = len(x) &^ 7
		geluNEON(&x[0], n)
	}
	for i := n; i < len(x); i++ {
		x[i] = gelu1(x[i])
	}
}

// gelu1 is GELU of one value, the operations of geluAVX2 in its order.
func gelu1(v float32) float32 {
	t := v
	if t < -geluClamp {
		t = -geluClamp
	}
	if t > geluClamp {
		t = geluClamp
	}
	s := t * t
	// float32(a*b) + c: an explicit rounding, so no compiler fuses them.
	p := float32(geluP5*s) + geluP4
	p = float32(p*s) + geluP3
	p = float32(p*s) + geluP2
	p = float32(p*s) + geluP1
	p = float32(p*s) + geluP0
	q := float32(geluQ5*s) + geluQ4
	q = float32(q*s) + geluQ3
	q = float32(q*s) + geluQ2
	q = float32(q*s) + geluQ1
	q = float32(q*s) + 1
	r := float32(t*p) / q
	if r > 0.5 {
		r = 0.5
	}
	if r < -0.5 {
		r = -0.5
	}
	return v * (r + 0.5)
}
