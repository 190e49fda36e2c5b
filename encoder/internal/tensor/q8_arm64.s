#include "textflag.h"
#include "neon_arm64.h"

// The 8-bit product on arm64 (see q8_arm64.go): four rows of 8-bit
// inputs (R0, R19, R20, R21) times one packed block of 16 outputs (R2):
// per quad of inputs, SDOT multiplies the block's 64 weights (V0..V3:
// outputs 4j..4j+3, four weights each) by each row's quad (a 4-byte
// element of V4..V7) into the row's int32 sums, V16+4r..V19+4r.

// QUAD: the next quad of the block's weights times quad q of each row's
// 16 inputs in hand, prefetching the line pf (R17) bytes on.
#define QUAD(q) \
	ADD R17, R2, R16 \
	PRFM (R16), PLDL2KEEP \
	VLD1.P 64(R2), [V0.B16, V1.B16, V2.B16, V3.B16] \
	SDOT(16, 0, 4, q) \
	SDOT(17, 1, 4, q) \
	SDOT(18, 2, 4, q) \
	SDOT(19, 3, 4, q) \
	SDOT(20, 0, 5, q) \
	SDOT(21, 1, 5, q) \
	SDOT(22, 2, 5, q) \
	SDOT(23, 3, 5, q) \
	SDOT(24, 0, 6, q) \
	SDOT(25, 1, 6, q) \
	SDOT(26, 2, 6, q) \
	SDOT(27, 3, 6, q) \
	SDOT(28, 0, 7, q) \
	SDOT(29, 1, 7, q) \
	SDOT(30, 2, 7, q) \
	SDOT(31, 3, 7, q)

// CHUNK: each row's next 16 inputs, made signed (u XOR 0x80 = u − 128),
// times the block's next four quads.
#define CHUNK \
	VLD1.P 16(R0), [V4.B16] \
	VLD1.P 16(R19), [V5.B16] \
	VLD1.P 16(R20), [V6.B16] \
	VLD1.P 16(R21), [V7.B16] \
	VEOR V8.B16, V4.B16, V4.B16 \
	VEOR V8.B16, V5.B16, V5.B16 \
	VEOR V8.B16, V6.B16, V6.B16 \
	VEOR V8.B16, V7.B16, V7.B16 \
	QUAD(0) \
	QUAD(1) \
	QUAD(2) \
	QUAD(3)

// ROWQ: row r's step (qp at R10) into V14.S[r], 128 − z into V13.S[r].
#define ROWQ(r) \
	MOVWU (R10), R8 \
	MOVH 4(R10), R9 \
	ADD $128, R9 \
	VMOV R8, V14.S[r] \
	VMOV R9, V13.S[r] \
	ADD R22, R10

// CORRECT: row r's sums plus (128 − z)·Σw (Σw in V0..V3).
#define CORRECT(r) \
	MLA(16+4*r, 0, 13, r) \
	MLA(17+4*r, 1, 13, r) \
	MLA(18+4*r, 2, 13, r) \
	MLA(19+4*r, 3, 13, r) \
	SCVTF(16+4*r, 16+4*r) \
	SCVTF(17+4*r, 17+4*r) \
	SCVTF(18+4*r, 18+4*r) \
	SCVTF(19+4*r, 19+4*r)

// SCALE: row r's sums, now float32, times the weight scales (V0..V3)
// times the row's step, added to its accumulators (64 bytes at R16,
// which moves on to the next row's).
#define SCALE(r) \
	FMULE(4, 0, 14, r) \
	FMULE(5, 1, 14, r) \
	FMULE(6, 2, 14, r) \
	FMULE(7, 3, 14, r) \
	VLD1 (R16), [V9.S4, V10.S4, V11.S4, V12.S4] \
	FMLA(9, 16+4*r, 4) \
	FMLA(10, 17+4*r, 5) \
	FMLA(11, 18+4*r, 6) \
	FMLA(12, 19+4*r, 7) \
	VST1.P [V9.S4, V10.S4, V11.S4, V12.S4], 64(R16)

// OUTLIER: outlier k's value of the row (V13.S[k]) times its weights
// (V16+4k..V19+4k) added to the row's results V9..V12.
#define OUTLIER(k) \
	FMLAE(9, 16+4*k, 13, k) \
	FMLAE(10, 17+4*k, 13, k) \
	FMLAE(11, 18+4*k, 13, k) \
	FMLAE(12, 19+4*k, 13, k)

// func qdot8SDOT(u *uint8, ustride int, w *int8, s *float32, ws *int32, groups int, qp *uint32, acc *[64]float32,
//	bias, dst *float32, dstride, n int, xo, wt *float32, ncols int, add bool, pf int)
TEXT ·qdot8SDOT(SB), NOSPLIT, $0-136
	MOVD u+0(FP), R0
	MOVD ustride+8(FP), R1
	MOVD w+16(FP), R2
	MOVD s+24(FP), R3
	MOVD ws+32(FP), R4
	MOVD groups+40(FP), R5
	MOVD qp+48(FP), R6
	MOVD acc+56(FP), R7
	MOVD pf+128(FP), R17
	ADD R1, R0, R19
	ADD R1, R19, R20
	ADD R1, R20, R21
	LSL $3, R5, R22 // a row of qp
	VMOVI $128, V8.B16
	VEOR V9.B16, V9.B16, V9.B16
	VEOR V10.B16, V10.B16, V10.B16
	VEOR V11.B16, V11.B16, V11.B16
	VEOR V12.B16, V12.B16, V12.B16
	MOVD R7, R16
	VST1.P [V9.S4, V10.S4, V11.S4, V12.S4], 64(R16)
	VST1.P [V9.S4, V10.S4, V11.S4, V12.S4], 64(R16)
	VST1.P [V9.S4, V10.S4, V11.S4, V12.S4], 64(R16)
	VST1.P [V9.S4, V10.S4, V11.S4, V12.S4], 64(R16)

group:
	ZERO8(16)
	ZERO8(24)
	CHUNK
	CHUNK
	CHUNK
	CHUNK

	// The group's sums: corrected, converted, scaled, accumulated.
	MOVD R6, R10
	ROWQ(0)
	ROWQ(1)
	ROWQ(2)
	ROWQ(3)
	ADD $8, R6
	VLD1.P 64(R4), [V0.S4, V1.S4, V2.S4, V3.S4]
	CORRECT(0)
	CORRECT(1)
	CORRECT(2)
	CORRECT(3)
	VLD1.P 64(R3), [V0.S4, V1.S4, V2.S4, V3.S4]
	MOVD R7, R16
	SCALE(0)
	SCALE(1)
	SCALE(2)
	SCALE(3)
	SUBS $1, R5
	BNE group

	// Each row's sums plus the bias (plus dst), plus its outlier values
	// times their weights, into dst.
	MOVD bias+64(FP), R8
	MOVD dst+72(FP), R9
	MOVD dstride+80(FP), R10
	MOVD n+88(FP), R11
	MOVD xo+96(FP), R12
	MOVD wt+104(FP), R13
	MOVD ncols+112(FP), R14
	MOVBU add+120(FP), R15
	VLD1 (R8), [V0.S4, V1.S4, V2.S4, V3.S4]
	CBZ R14, rows
	MOVD R13, R16
	VLD1 (R16), [V16.S4, V17.S4, V18.S4, V19.S4]
	ADD R10, R16
	VLD1 (R16), [V20.S4, V21.S4, V22.S4, V23.S4]
	ADD R10, R16
	VLD1 (R16), [V24.S4, V25.S4, V26.S4, V27.S4]
	ADD R10, R16
	VLD1 (R16), [V28.S4, V29.S4, V30.S4, V31.S4]

rows:
	VLD1.P 64(R7), [V9.S4, V10.S4, V11.S4, V12.S4]
	FADD(9, 9, 0)
	FADD(10, 10, 1)
	FADD(11, 11, 2)
	FADD(12, 12, 3)
	CBZ R15, outliers
	VLD1 (R9), [V4.S4, V5.S4, V6.S4, V7.S4]
	FADD(9, 4, 9)
	FADD(10, 5, 10)
	FADD(11, 6, 11)
	FADD(12, 7, 12)

outliers:
	CBZ R14, store
	VLD1 (R12), [V13.S4]
	OUTLIER(0)
	CMP $1, R14
	BEQ store
	OUTLIER(1)
	CMP $2, R14
	BEQ store
	OUTLIER(2)
	CMP $3, R14
	BEQ store
	OUTLIER(3)

store:
	VST1 [V9.S4, V10.S4, V11.S4, V12.S4], (R9)
	ADD R10, R9
	ADD $16, R12
	SUBS $1, R11
	BNE rows
	RET
