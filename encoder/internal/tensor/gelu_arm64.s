#include "textflag.h"
#include "neon_arm64.h"

// GELU's constants (see gelu.go), four lanes each, in the order they are
// loaded into V16..V31.
#define K4(off, v) \
	DATA gelun<>+(off+0)(SB)/4, $v \
	DATA gelun<>+(off+4)(SB)/4, $v \
	DATA gelun<>+(off+8)(SB)/4, $v \
	DATA gelun<>+(off+12)(SB)/4, $v

K4(0, -5.7)            // V16
K4(16, 5.7)            // V17
K4(32, 0.5)            // V18
K4(48, -0.5)           // V19
K4(64, 2.1577824e-08)  // V20: P5
K4(80, 6.373649e-06)   // V21: P4
K4(96, 0.00017938516)  // V22: P3
K4(112, 0.0047407784)  // V23: P2
K4(128, 0.03494081)    // V24: P1
K4(144, 0.3989422)     // V25: P0
K4(160, 1.1648486e-06) // V26: Q5
K4(176, 7.67624e-05)   // V27: Q4
K4(192, 0.0019445107)  // V28: Q3
K4(208, 0.02926041)    // V29: Q2
K4(224, 0.2542491)     // V30: Q1
K4(240, 1.0)           // V31: Q0
GLOBL gelun<>(SB), RODATA|NOPTR, $256

// STEP2: p = p·s + k for the two halves (p at a, a+1; s at V2, V3).
#define STEP2(a, k) \
	FMUL(a, a, 2) \
	FMUL(a+1, a+1, 3) \
	FADD(a, a, k) \
	FADD(a+1, a+1, k)

// func geluNEON(x *float32, n int)
//
// gelu1 on eight values at a time (n a multiple of 8), in place: each
// step one rounded operation, in gelu1's order, so the same bits.
TEXT ·geluNEON(SB), NOSPLIT, $0-16
	MOVD x+0(FP), R0
	MOVD n+8(FP), R1
	MOVD $gelun<>(SB), R2
	VLD1.P 64(R2), [V16.S4, V17.S4, V18.S4, V19.S4]
	VLD1.P 64(R2), [V20.S4, V21.S4, V22.S4, V23.S4]
	VLD1.P 64(R2), [V24.S4, V25.S4, V26.S4, V27.S4]
	VLD1 (R2), [V28.S4, V29.S4, V30.S4, V31.S4]
	LSR $3, R1

loop:
	VLD1 (R0), [V0.S4, V1.S4]
	// t = v clamped to [-5.7, 5.7] (V4, V5); s = t·t (V2, V3)
	FMAX(4, 0, 16)
	FMAX(5, 1, 16)
	FMIN(4, 4, 17)
	FMIN(5, 5, 17)
	FMUL(2, 4, 4)
	FMUL(3, 5, 5)
	// p (V6, V7) = ((((P5·s + P4)·s + P3)·s + P2)·s + P1)·s + P0
	FMUL(6, 20, 2)
	FMUL(7, 20, 3)
	FADD(6, 6, 21)
	FADD(7, 7, 21)
	STEP2(6, 22)
	STEP2(6, 23)
	STEP2(6, 24)
	STEP2(6, 25)
	// q (V8, V9), the same with Q5..Q1 and 1
	FMUL(8, 26, 2)
	FMUL(9, 26, 3)
	FADD(8, 8, 27)
	FADD(9, 9, 27)
	STEP2(8, 28)
	STEP2(8, 29)
	STEP2(8, 30)
	STEP2(8, 31)
	// r = t·p / q clamped to [-0.5, 0.5]; v·(r + 0.5)
	FMUL(6, 4, 6)
	FMUL(7, 5, 7)
	FDIV(6, 6, 8)
	FDIV(7, 7, 9)
	FMIN(6, 6, 18)
	FMIN(7, 7, 18)
	FMAX(6, 6, 19)
	FMAX(7, 7, 19)
	FADD(6, 6, 18)
	FADD(7, 7, 18)
	FMUL(0, 0, 6)
	FMUL(1, 1, 7)
	VST1.P [V0.S4, V1.S4], 32(R0)
	SUBS $1, R1
	BNE loop
	RET
