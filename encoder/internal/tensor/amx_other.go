//go:build !(linux && amd64)

package tensor

// HaveAMX is false but on Linux on amd64 (see amx_linux_amd64.go).
const HaveAMX = false

func qdot8AMX(cfg, scratch *byte, u *uint8, in int, w *int8, blocks int, s *float32, ws *int32,
	groups int, qp *uint32, bias, dst *float32, out, n int, xo, wt *float32, ncols int, add bool) {
	panic("unreachable")
}
