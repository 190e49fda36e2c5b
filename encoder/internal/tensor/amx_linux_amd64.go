package tensor

import (
	"syscall"

	"golang.org/x/sys/cpu"
)

// HaveAMX reports whether the CPU has AMX's int8 tiles and Linux lets
// this process use them: a process must ask for the tiles' state
// (arch_prctl ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) before its first
// tile instruction, which would fault otherwise.
var HaveAMX = HaveVNNI && cpu.X86.HasAMXTile && cpu.X86.HasAMXInt8 && requestAMX()

func requestAMX() bool {
	const (
		archReqXcompPerm  = 0x1023
		xfeatureXtiledata = 18
	)
	_, _, errno := syscall.RawSyscall(syscall.SYS_ARCH_PRCTL, archReqXcompPerm, xfeatureXtiledata, 0)
	return errno == 0
}

// qdot8AMX multiplies, on AMX, n rows (n <= 28) of 8-bit inputs at u
// (in bytes apart) by every one of blocks Packed8 blocks (weights at w,
// scales at s, weight sums at ws), as qdot8VNNI does for four rows and
// two blocks: per group the exact int32 sums, corrected by −z·Σw and
// scaled by the weight scale times the row's step (qp, 2·groups values
// a row), summed in float32 with one fused multiply-add a group; then
// plus bias (nil: none), plus what is at dst when add is set, plus the
// ncols outlier values (xo, 4 a row) times their weights (wt, 4 rows of
// out), stored at dst (out floats a row). cfg is the tile configuration
// (64 bytes), scratch 4096 bytes, both 64-byte aligned.
//
//go:noescape
func qdot8AMX(cfg, scratch *byte, u *uint8, in int, w *int8, blocks int, s *float32, ws *int32,
	groups int, qp *uint32, bias, dst *float32, out, n int, xo, wt *float32, ncols int, add bool)
