#include "textflag.h"
#include "neon_arm64.h"

// Attention's two products on arm64 (see attn_arm64.go), with FMLA: one
// rounding a step, as fma32.

// SROW: row c = 4·r + i of the transposed keys (eight keys at R8, the
// pointer then a row on) times q[c] (V(r).S[i]) into accumulator i
// (V16+2i: keys j..j+3, V17+2i: j+4..j+7).
#define SROW(r, i) \
	VLD1.P (R8)(R4), [V24.S4, V25.S4] \
	FMLAE(16+2*(i), 24, r, i) \
	FMLAE(17+2*(i), 25, r, i)

#define SROW4(r) \
	SROW(r, 0) \
	SROW(r, 1) \
	SROW(r, 2) \
	SROW(r, 3)

// func scoresNEON(dst, q, kt *float32, tp int)
TEXT ·scoresNEON(SB), NOSPLIT, $0-32
	MOVD dst+0(FP), R0
	MOVD q+8(FP), R1
	MOVD kt+16(FP), R2
	MOVD tp+24(FP), R3
	VLD1.P 64(R1), [V0.S4, V1.S4, V2.S4, V3.S4]
	VLD1 (R1), [V4.S4, V5.S4, V6.S4, V7.S4]
	LSL $2, R3, R4 // a row of kt
	LSR $3, R3, R7 // eight keys a step

keys:
	ZERO8(16)
	MOVD R2, R8
	SROW4(0)
	SROW4(1)
	SROW4(2)
	SROW4(3)
	SROW4(4)
	SROW4(5)
	SROW4(6)
	SROW4(7)
	FADD(16, 16, 18)
	FADD(20, 20, 22)
	FADD(16, 16, 20)
	FADD(17, 17, 19)
	FADD(21, 21, 23)
	FADD(17, 17, 21)
	VST1.P [V16.S4, V17.S4], 32(R0)
	ADD $32, R2
	SUBS $1, R7
	BNE keys
	RET

// MROW: value row j (32 floats at R2, the pointer then a row on, R3
// bytes) times p[j] (R1, then the next) into the accumulators at a
// (V(a)..V(a+7)).
#define MROW(a) \
	VLD1R.P 4(R1), [V8.S4] \
	VLD1 (R2), [V0.S4, V1.S4, V2.S4, V3.S4] \
	ADD $64, R2, R6 \
	VLD1 (R6), [V4.S4, V5.S4, V6.S4, V7.S4] \
	ADD R3, R2 \
	FMLA(a, 0, 8) \
	FMLA(a+1, 1, 8) \
	FMLA(a+2, 2, 8) \
	FMLA(a+3, 3, 8) \
	FMLA(a+4, 4, 8) \
	FMLA(a+5, 5, 8) \
	FMLA(a+6, 6, 8) \
	FMLA(a+7, 7, 8)

// func mixNEON(dst, p, v *float32, vstride, t int)
TEXT ·mixNEON(SB), NOSPLIT, $0-40
	MOVD dst+0(FP), R0
	MOVD p+8(FP), R1
	MOVD v+16(FP), R2
	MOVD vstride+24(FP), R3
	MOVD t+32(FP), R4
	LSL $2, R3
	ZERO8(16)
	ZERO8(24)
	LSR $1, R4, R5 // pairs of rows: even into V16.., odd into V24..
	CBZ R5, last

pairs:
	MROW(16)
	MROW(24)
	SUBS $1, R5
	BNE pairs

last:
	TBZ $0, R4, sum
	MROW(16)

sum:
	FADD(16, 16, 24)
	FADD(17, 17, 25)
	FADD(18, 18, 26)
	FADD(19, 19, 27)
	FADD(20, 20, 28)
	FADD(21, 21, 29)
	FADD(22, 22, 30)
	FADD(23, 23, 31)
	VST1.P [V16.S4, V17.S4, V18.S4, V19.S4], 64(R0)
	VST1 [V20.S4, V21.S4, V22.S4, V23.S4], (R0)
	RET
