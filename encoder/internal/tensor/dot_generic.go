package tensor

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

// dot1Go returns the dot product of x and w.
func dot1Go(x, w []float32) float32 {
	x = x[:len(w)]
	var s0, s1, s2, s3 float32
	k := 0
	for ; k+4 <= len(w); k += 4 {
		s0 += x[k] * w[k]
		s1 += x[k+1] * w[k+1]
		s2 += x[k+2] * w[k+2]
		s3 += x[k+3] * w[k+3]
	}
	for ; k < len(w); k++ {
		s0 += x[k] * w[k]
	}
	return s0 + s1 + s2 + s3
}
