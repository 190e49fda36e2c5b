package dense

// dotF32 is the dot product of equal-length a and b. The loop is shaped
// so the compiler drops bounds checks: 8 products a step, 4 sums (s_j
// adds a[j]·b[j] + a[j+4]·b[j+4], each product and sum rounded on its
// own), the tail to s0, then (s0+s1) + (s2+s3). dotsF32's assembly does
// the same operations, so both give the same bits.
func dotF32(a, b []float32) float32 {
	var s0, s1, s2, s3 float32
	for len(a) >= 8 && len(b) >= 8 {
		// float32(x*y): an explicit rounding, so no compiler fuses
		// a product into the sum (as arm64's and GOAMD64=v3's would).
		s0 += float32(a[0]*b[0]) + float32(a[4]*b[4])
		s1 += float32(a[1]*b[1]) + float32(a[5]*b[5])
		s2 += float32(a[2]*b[2]) + float32(a[6]*b[6])
		s3 += float32(a[3]*b[3]) + float32(a[7]*b[7])
		a, b = a[8:], b[8:]
	}
	for i := range min(len(a), len(b)) {
		s0 += float32(a[i] * b[i])
	}
	return (s0 + s1) + (s2 + s3)
}

// dotsF32 sets out[i] to dotF32(q, m[i·d:(i+1)·d]) for i < len(out), d =
// len(q): a query against consecutive vectors of a store. On amd64 with
// AVX2 an assembly loop scores four vectors at a time (the same bits).
func dotsF32(out, q, m []float32) {
	d := len(q)
	if len(out) == 0 || d == 0 {
		clear(out)
		return
	}
	_ = m[len(out)*d-1]
	if haveAVX2 {
		dotsAVX2(&out[0], &q[0], &m[0], d, len(out))
		return
	}
	for i := range out {
		out[i] = dotF32(q, m[i*d:(i+1)*d])
	}
}
