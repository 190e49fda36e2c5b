package tensor

// The portable products sum each row in one order, whichever function
// takes it: one accumulator, k ascending. So a row gives the same bits
// whether Apply takes it in a group of four (dot4Go) or alone (dot1Go),
// and a text's vector does not depend on the batch it is embedded in
// (TestPortableRowsAlone). A lone row's single chain of additions is
// slower than the four partial sums dot1Go had (a 17-piece pass on the
// go kernel, BenchmarkTask: 57.6 → 63.3 ms), but two accumulators a row
// made dot4Go slower still (76 ms).

// dot4Go returns the dot products of four rows with w.
func dot4Go(x0, x1, x2, x3, w []float32) (s0, s1, s2, s3 float32) {
	n := len(w)
	x0, x1, x2, x3 = x0[:n], x1[:n], x2[:n], x3[:n]
	for k, wk := range w {
		s0 += x0[k] * wk
		s1 += x1[k] * wk
		s2 += x2[k] * wk
		s3 += x3[k] * wk
	}
	return
}

// dot1Go returns the dot product of x and w, in dot4Go's order.
func dot1Go(x, w []float32) float32 {
	x = x[:len(w)]
	var s float32
	for k, wk := range w {
		s += x[k] * wk
	}
	return s
}
