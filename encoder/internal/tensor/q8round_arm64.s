#include "textflag.h"
#include "neon_arm64.h"

// ROUND4: four registers of a group (a..a+3) times inv (V20.S[0]),
// rounded to the nearest integer (ties to even), to int32, plus z (V22),
// saturated to 0..255 and narrowed into the 16 bytes of register a.
#define ROUND4(a) \
	FMULE(a, a, 20, 0) \
	FMULE(a+1, a+1, 20, 0) \
	FMULE(a+2, a+2, 20, 0) \
	FMULE(a+3, a+3, 20, 0) \
	FRINTN(a, a) \
	FRINTN(a+1, a+1) \
	FRINTN(a+2, a+2) \
	FRINTN(a+3, a+3) \
	FCVTZS(a, a) \
	FCVTZS(a+1, a+1) \
	FCVTZS(a+2, a+2) \
	FCVTZS(a+3, a+3) \
	ADD4(a, a, 22) \
	ADD4(a+1, a+1, 22) \
	ADD4(a+2, a+2, 22) \
	ADD4(a+3, a+3, 22) \
	SQXTUN(a, a) \
	SQXTUN2(a, a+1) \
	SQXTUN(a+2, a+2) \
	SQXTUN2(a+2, a+3) \
	UQXTN(a, a) \
	UQXTN2(a, a+2)

// func quant8NEON(u *uint8, x *float32, groups int, qp *uint32, levels float32)
//
// quantGroup8 a group of 64 floats at a time: the range in a tree of
// FMIN and FMAX, the step and its inverse by two divisions, then each
// value's rounding, clamp and narrowing four lanes at a time (SQXTUN and
// UQXTN saturate to 0..255, UMIN with the levels does the rest of the
// clamp).
TEXT ·quant8NEON(SB), NOSPLIT, $0-36
	MOVD u+0(FP), R0
	MOVD x+8(FP), R1
	MOVD groups+16(FP), R2
	MOVD qp+24(FP), R3
	FMOVS levels+32(FP), F30
	FCVTZSSW F30, R6
	VDUP R6, V23.B16
	FMOVS ZR, F29

group:
	VLD1.P 64(R1), [V0.S4, V1.S4, V2.S4, V3.S4]
	VLD1.P 64(R1), [V4.S4, V5.S4, V6.S4, V7.S4]
	VLD1.P 64(R1), [V8.S4, V9.S4, V10.S4, V11.S4]
	VLD1.P 64(R1), [V12.S4, V13.S4, V14.S4, V15.S4]
	FMIN(16, 0, 1)
	FMIN(17, 2, 3)
	FMIN(18, 4, 5)
	FMIN(19, 6, 7)
	FMIN(24, 8, 9)
	FMIN(25, 10, 11)
	FMIN(26, 12, 13)
	FMIN(27, 14, 15)
	FMIN(16, 16, 17)
	FMIN(18, 18, 19)
	FMIN(24, 24, 25)
	FMIN(26, 26, 27)
	FMIN(16, 16, 18)
	FMIN(24, 24, 26)
	FMIN(16, 16, 24)
	FMAX(17, 0, 1)
	FMAX(18, 2, 3)
	FMAX(19, 4, 5)
	FMAX(20, 6, 7)
	FMAX(21, 8, 9)
	FMAX(24, 10, 11)
	FMAX(25, 12, 13)
	FMAX(26, 14, 15)
	FMAX(17, 17, 18)
	FMAX(19, 19, 20)
	FMAX(21, 21, 24)
	FMAX(25, 25, 26)
	FMAX(17, 17, 19)
	FMAX(21, 21, 25)
	FMAX(17, 17, 21)
	FMINV(16, 16)
	FMAXV(17, 17)
	FMINS F29, F16, F16 // lo, zero included
	FMAXS F29, F17, F17 // hi
	FSUBS F16, F17, F18 // d = hi − lo
	FMOVS F29, F19 // step
	FMOVS F29, F20 // inv
	FCMPS F29, F18
	BEQ rounded
	FDIVS F30, F18, F19 // d/levels
	FDIVS F18, F30, F20 // levels/d

rounded:
	FSUBS F16, F29, F21 // 0 − lo
	FMULS F20, F21, F21
	FRINTNS F21, F21
	FCVTZSSW F21, R4 // z
	VDUP R4, V22.S4
	ROUND4(0)
	VUMIN V23.B16, V0.B16, V0.B16
	VST1.P [V0.B16], 16(R0)
	ROUND4(4)
	VUMIN V23.B16, V4.B16, V4.B16
	VST1.P [V4.B16], 16(R0)
	ROUND4(8)
	VUMIN V23.B16, V8.B16, V8.B16
	VST1.P [V8.B16], 16(R0)
	ROUND4(12)
	VUMIN V23.B16, V12.B16, V12.B16
	VST1.P [V12.B16], 16(R0)
	FMOVS F19, (R3)
	NEG R4, R5
	AND $0xffff, R5
	MOVW R5, 4(R3)
	ADD $8, R3
	SUBS $1, R2
	BNE group
	RET
