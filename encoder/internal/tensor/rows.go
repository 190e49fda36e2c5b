package tensor

// Row arithmetic for a model's glue around its layers: its embeddings'
// sum and its mean over a sequence's rows. Each runs 8 floats at a time
// on AVX2 (the rest in Go); every operation is one rounding lane by lane,
// so the assembly and the Go loop give the same bits.

// Add3 sets dst[i] = (a[i] + b[i]) + c[i] (a token's word, position and
// type embeddings).
func Add3(dst, a, b, c []float32) {
	n := len(dst)
	a, b, c = a[:n], b[:n], c[:n]
	k := 0
	if UseAVX2 && n >= 8 {
		k = n &^ 7
		add3AVX2(&dst[0], &a[0], &b[0], &c[0], k)
	}
	for i := k; i < n; i++ {
		dst[i] = a[i] + b[i] + c[i]
	}
}

// AddF64 adds each x[i] to acc[i] in float64 (a sum over rows).
func AddF64(acc []float64, x []float32) {
	n := len(acc)
	x = x[:n]
	k := 0
	if UseAVX2 && n >= 8 {
		k = n &^ 7
		addF64AVX2(&acc[0], &x[0], k)
	}
	for i := k; i < n; i++ {
		acc[i] += float64(x[i])
	}
}

// ScaleF64 sets dst[i] = float32(src[i]·s).
func ScaleF64(dst []float32, src []float64, s float64) {
	n := len(dst)
	src = src[:n]
	k := 0
	if UseAVX2 && n >= 8 {
		k = n &^ 7
		scaleF64AVX2(&dst[0], &src[0], k, s)
	}
	for i := k; i < n; i++ {
		dst[i] = float32(src[i] * s)
	}
}
