//go:build !amd64

package dense

// haveAVX2 is false off amd64: dotsF32 runs the Go loop.
var haveAVX2 = false

func dotsAVX2(out, q, m *float32, d, n int) { panic("unreachable") }
