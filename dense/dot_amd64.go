package dense

import "golang.org/x/sys/cpu"

// haveAVX2 reports whether dotsAVX2 runs here; tests turn it off to
// check the Go loop against it.
var haveAVX2 = cpu.X86.HasAVX2

// dotsAVX2 is dotsF32 over n vectors of d floats at m.
//
//go:noescape
func dotsAVX2(out, q, m *float32, d, n int)
