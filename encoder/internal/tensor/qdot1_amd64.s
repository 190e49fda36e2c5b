#include "textflag.h"

// One row of int16 (SI) times one packed block of 16 outputs (see
// Packed): the rows past a multiple of four of a product (a text of 17
// pieces is four rows and one), which the four-row kernel (qdotAVX2)
// would compute alongside three rows of zeros.

// A1STEP: one pair of inputs into Y0 (outputs 0-7) and Y1 (8-15).
#define A1STEP(off) \
	VPMOVSXBW off(DI), Y8 \
	VPMOVSXBW (off+16)(DI), Y9 \
	VPBROADCASTD (off/8)(SI), Y10 \
	VPMADDWD Y8, Y10, Y8 \
	VPMADDWD Y9, Y10, Y9 \
	VPADDD Y8, Y0, Y0 \
	VPADDD Y9, Y1, Y1

// func qdot1AVX2(x *int16, w *int8, s *float32, groups int, xs, bias, dst *float32, add bool, pf int)
// The sums build in Y2, Y3 in the order of qdotAVX2's, so the two agree
// bit for bit; each line of weights read prefetches the one pf bytes on.
TEXT ·qdot1AVX2(SB), NOSPLIT, $0-72
	MOVQ x+0(FP), SI
	MOVQ w+8(FP), DI
	MOVQ s+16(FP), DX
	MOVQ groups+24(FP), CX
	MOVQ pf+64(FP), R11
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3

a1group:
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	MOVQ $8, BX // 32 pairs a group, 4 a pass

a1step:
	A1STEP(0)
	A1STEP(32)
	A1STEP(64)
	A1STEP(96)
	PREFETCHT0 (DI)(R11*1)
	PREFETCHT0 64(DI)(R11*1)
	ADDQ $16, SI
	ADDQ $128, DI
	DECQ BX
	JNZ  a1step

	VMOVUPS (DX), Y8
	VMOVUPS 32(DX), Y9
	VCVTDQ2PS Y0, Y0
	VFMADD231PS Y8, Y0, Y2
	VCVTDQ2PS Y1, Y1
	VFMADD231PS Y9, Y1, Y3
	ADDQ $64, DX
	DECQ CX
	JNZ  a1group

	// The sums times the row's scale, plus the bias (plus dst), into dst.
	MOVQ xs+32(FP), R12
	MOVQ bias+40(FP), R13
	MOVQ dst+48(FP), DI
	MOVBQZX add+56(FP), BX
	VMOVUPS (R13), Y0
	VMOVUPS 32(R13), Y1
	VBROADCASTSS (R12), Y4
	VFMADD213PS Y0, Y4, Y2
	VFMADD213PS Y1, Y4, Y3
	TESTQ BX, BX
	JZ    a1store
	VADDPS (DI), Y2, Y2
	VADDPS 32(DI), Y3, Y3

a1store:
	VMOVUPS Y2, (DI)
	VMOVUPS Y3, 32(DI)
	VZEROUPPER
	RET
