//go:build !arm64

package tensor

// HaveNEON is false off arm64.
const HaveNEON = false

func scoresNEON(dst, q, kt *float32, tp int) { panic("unreachable") }

func mixNEON(dst, p, v *float32, vstride, t int) { panic("unreachable") }

func quant8NEON(u *uint8, x *float32, groups int, qp *uint32, levels float32) { panic("unreachable") }

func geluNEON(x *float32, n int) { panic("unreachable") }
