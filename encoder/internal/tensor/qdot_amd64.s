#include "textflag.h"

// Four rows of int16 (SI, SI+R8, SI+2·R8, SI+R9 where R9 = 3·R8) times
// packed int8 weights (see Packed): per pair of inputs, each row's two
// values are broadcast and multiplied with the block's 16 outputs' two
// weights each.

// VSTEP: one pair of inputs, two blocks (Z0: block A, Z1: block B),
// accumulators Z2..Z9 (row r: Z(2+2r) block A, Z(3+2r) block B).
#define VSTEP(off) \
	VPMOVSXBW off(DI), Z0 \
	VPMOVSXBW off(DI)(R10*1), Z1 \
	VPDPWSSD.BCST (off/8)(SI), Z0, Z2 \
	VPDPWSSD.BCST (off/8)(SI), Z1, Z3 \
	VPDPWSSD.BCST (off/8)(SI)(R8*1), Z0, Z4 \
	VPDPWSSD.BCST (off/8)(SI)(R8*1), Z1, Z5 \
	VPDPWSSD.BCST (off/8)(SI)(R8*2), Z0, Z6 \
	VPDPWSSD.BCST (off/8)(SI)(R8*2), Z1, Z7 \
	VPDPWSSD.BCST (off/8)(SI)(R9*1), Z0, Z8 \
	VPDPWSSD.BCST (off/8)(SI)(R9*1), Z1, Z9

// func qdotVNNI(x *int16, xstride int, w *int8, bstride int, s *float32, sstride int, groups int, acc *[128]float32,
//	xs, bias, dst *float32, dstride, n int, add bool)
TEXT ·qdotVNNI(SB), NOSPLIT, $0-105
	MOVQ x+0(FP), SI
	MOVQ xstride+8(FP), R8
	MOVQ w+16(FP), DI
	MOVQ bstride+24(FP), R10
	MOVQ s+32(FP), DX
	MOVQ sstride+40(FP), R11
	MOVQ groups+48(FP), CX
	MOVQ acc+56(FP), AX
	LEAQ (R8)(R8*2), R9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	VPXORD Z14, Z14, Z14
	VPXORD Z15, Z15, Z15
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17

vgroup:
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	MOVQ $8, BX // 32 pairs a group of 64, 4 a pass

vstep:
	VSTEP(0)
	VSTEP(32)
	VSTEP(64)
	VSTEP(96)
	ADDQ $16, SI
	ADDQ $128, DI
	DECQ BX
	JNZ  vstep

	// The group's sums, scaled, into the float accumulators.
	VMOVUPS (DX), Z0
	VMOVUPS (DX)(R11*1), Z1
	VCVTDQ2PS Z2, Z2
	VFMADD231PS Z0, Z2, Z10
	VCVTDQ2PS Z3, Z3
	VFMADD231PS Z1, Z3, Z11
	VCVTDQ2PS Z4, Z4
	VFMADD231PS Z0, Z4, Z12
	VCVTDQ2PS Z5, Z5
	VFMADD231PS Z1, Z5, Z13
	VCVTDQ2PS Z6, Z6
	VFMADD231PS Z0, Z6, Z14
	VCVTDQ2PS Z7, Z7
	VFMADD231PS Z1, Z7, Z15
	VCVTDQ2PS Z8, Z8
	VFMADD231PS Z0, Z8, Z16
	VCVTDQ2PS Z9, Z9
	VFMADD231PS Z1, Z9, Z17
	ADDQ $64, DX
	DECQ CX
	JNZ  vgroup

	VMOVUPS Z10, 0(AX)
	VMOVUPS Z11, 64(AX)
	VMOVUPS Z12, 128(AX)
	VMOVUPS Z13, 192(AX)
	VMOVUPS Z14, 256(AX)
	VMOVUPS Z15, 320(AX)
	VMOVUPS Z16, 384(AX)
	VMOVUPS Z17, 448(AX)

	// Each row times its scale, plus the bias (plus dst), into dst.
	MOVQ xs+64(FP), R12
	MOVQ bias+72(FP), R13
	MOVQ dst+80(FP), DI
	MOVQ dstride+88(FP), R8
	MOVQ n+96(FP), CX
	MOVBQZX add+104(FP), BX
	VMOVUPS (R13), Z0
	VMOVUPS 64(R13), Z1

vrow:
	VMOVUPS (AX), Z2
	VMOVUPS 64(AX), Z3
	VBROADCASTSS (R12), Z4
	VFMADD213PS Z0, Z4, Z2
	VFMADD213PS Z1, Z4, Z3
	TESTQ BX, BX
	JZ    vstore
	VADDPS (DI), Z2, Z2
	VADDPS 64(DI), Z3, Z3

vstore:
	VMOVUPS Z2, (DI)
	VMOVUPS Z3, 64(DI)
	ADDQ $128, AX
	ADDQ $4, R12
	ADDQ R8, DI
	DECQ CX
	JNZ  vrow
	VZEROUPPER
	RET

// ASTEP: one pair of inputs, one block as two halves (Y8: outputs 0-7,
// Y9: 8-15), accumulators Y0..Y7 (row r: Y(2r), Y(2r+1)).
#define AROW(xoff, a0, a1) \
	VPBROADCASTD xoff, Y10 \
	VPMADDWD Y8, Y10, Y11 \
	VPADDD Y11, a0, a0 \
	VPMADDWD Y9, Y10, Y12 \
	VPADDD Y12, a1, a1

#define ASTEP(off) \
	VPMOVSXBW off(DI), Y8 \
	VPMOVSXBW (off+16)(DI), Y9 \
	AROW((off/8)(SI), Y0, Y1) \
	AROW((off/8)(SI)(R8*1), Y2, Y3) \
	AROW((off/8)(SI)(R8*2), Y4, Y5) \
	AROW((off/8)(SI)(R9*1), Y6, Y7)

// ASTEP3 is ASTEP for three rows.
#define ASTEP3(off) \
	VPMOVSXBW off(DI), Y8 \
	VPMOVSXBW (off+16)(DI), Y9 \
	AROW((off/8)(SI), Y0, Y1) \
	AROW((off/8)(SI)(R8*1), Y2, Y3) \
	AROW((off/8)(SI)(R8*2), Y4, Y5)

// AFLUSH adds the group's sums of one row half (acc), scaled by sc, to
// the floats at off(AX).
#define AFLUSH(acc, sc, off) \
	VCVTDQ2PS acc, acc \
	VMOVUPS off(AX), Y10 \
	VFMADD231PS sc, acc, Y10 \
	VMOVUPS Y10, off(AX)

// func qdotAVX2(x *int16, xstride int, w *int8, s *float32, groups int, acc *[128]float32,
//	xs, bias, dst *float32, dstride, n int, add bool, pf int)
// acc's first 64 floats hold the four rows' 16 sums while they build;
// each line of weights read prefetches the one pf bytes on (R11). With
// n = 3 the fourth row is not computed (agroup3).
TEXT ·qdotAVX2(SB), NOSPLIT, $0-104
	MOVQ x+0(FP), SI
	MOVQ xstride+8(FP), R8
	MOVQ w+16(FP), DI
	MOVQ s+24(FP), DX
	MOVQ groups+32(FP), CX
	MOVQ acc+40(FP), AX
	MOVQ pf+96(FP), R11
	LEAQ (R8)(R8*2), R9
	VXORPS Y10, Y10, Y10
	MOVQ $0, BX

azero:
	VMOVUPS Y10, (AX)(BX*1)
	ADDQ $32, BX
	CMPQ BX, $256
	JLT  azero
	MOVQ n+80(FP), R10
	CMPQ R10, $3
	JEQ  agroup3

agroup:
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	VPXOR Y2, Y2, Y2
	VPXOR Y3, Y3, Y3
	VPXOR Y4, Y4, Y4
	VPXOR Y5, Y5, Y5
	VPXOR Y6, Y6, Y6
	VPXOR Y7, Y7, Y7
	MOVQ $16, BX // 32 pairs a group, 2 a pass

astep:
	ASTEP(0)
	ASTEP(32)
	PREFETCHT1 (DI)(R11*1)
	ADDQ $8, SI
	ADDQ $64, DI
	DECQ BX
	JNZ  astep

	VMOVUPS (DX), Y8
	VMOVUPS 32(DX), Y9
	AFLUSH(Y0, Y8, 0)
	AFLUSH(Y1, Y9, 32)
	AFLUSH(Y2, Y8, 64)
	AFLUSH(Y3, Y9, 96)
	AFLUSH(Y4, Y8, 128)
	AFLUSH(Y5, Y9, 160)
	AFLUSH(Y6, Y8, 192)
	AFLUSH(Y7, Y9, 224)
	ADDQ $64, DX
	DECQ CX
	JNZ  agroup

afinish:
	MOVQ xs+48(FP), R12
	MOVQ bias+56(FP), R13
	MOVQ dst+64(FP), DI
	MOVQ dstride+72(FP), R8
	MOVQ n+80(FP), CX
	MOVBQZX add+88(FP), BX
	VMOVUPS (R13), Y0
	VMOVUPS 32(R13), Y1

arow:
	VMOVUPS (AX), Y2
	VMOVUPS 32(AX), Y3
	VBROADCASTSS (R12), Y4
	VFMADD213PS Y0, Y4, Y2
	VFMADD213PS Y1, Y4, Y3
	TESTQ BX, BX
	JZ    astore
	VADDPS (DI), Y2, Y2
	VADDPS 32(DI), Y3, Y3

astore:
	VMOVUPS Y2, (DI)
	VMOVUPS Y3, 32(DI)
	ADDQ $64, AX
	ADDQ $4, R12
	ADDQ R8, DI
	DECQ CX
	JNZ  arow
	VZEROUPPER
	RET

agroup3:
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	VPXOR Y2, Y2, Y2
	VPXOR Y3, Y3, Y3
	VPXOR Y4, Y4, Y4
	VPXOR Y5, Y5, Y5
	MOVQ $16, BX

astep3:
	ASTEP3(0)
	ASTEP3(32)
	PREFETCHT1 (DI)(R11*1)
	ADDQ $8, SI
	ADDQ $64, DI
	DECQ BX
	JNZ  astep3

	VMOVUPS (DX), Y8
	VMOVUPS 32(DX), Y9
	AFLUSH(Y0, Y8, 0)
	AFLUSH(Y1, Y9, 32)
	AFLUSH(Y2, Y8, 64)
	AFLUSH(Y3, Y9, 96)
	AFLUSH(Y4, Y8, 128)
	AFLUSH(Y5, Y9, 160)
	ADDQ $64, DX
	DECQ CX
	JNZ  agroup3
	JMP  afinish

// func absMaxAVX2(x *float32, n int) float32
// The largest |x[i]| over n floats, n a multiple of 16.
TEXT ·absMaxAVX2(SB), NOSPLIT, $0-20
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	VPCMPEQD Y3, Y3, Y3
	VPSRLD $1, Y3, Y3 // 0x7fffffff
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1

mloop:
	VANDPS (SI), Y3, Y4
	VMAXPS Y4, Y0, Y0
	VANDPS 32(SI), Y3, Y5
	VMAXPS Y5, Y1, Y1
	ADDQ $64, SI
	SUBQ $16, CX
	JNZ  mloop
	VMAXPS Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VMAXPS X1, X0, X0
	VPERMILPS $0x4e, X0, X1
	VMAXPS X1, X0, X0
	VPERMILPS $0xb1, X0, X1
	VMAXPS X1, X0, X0
	MOVSS X0, ret+16(FP)
	VZEROUPPER
	RET

// func roundAVX2(q *int16, x *float32, n int, mul float32)
// q[i] = x[i]·mul rounded to the nearest integer (ties to even), n a
// multiple of 16, |x[i]·mul| <= 32767.
TEXT ·roundAVX2(SB), NOSPLIT, $0-28
	MOVQ q+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS mul+24(FP), Y2

rloop:
	VMULPS (SI), Y2, Y0
	VMULPS 32(SI), Y2, Y1
	VCVTPS2DQ Y0, Y0
	VCVTPS2DQ Y1, Y1
	VPACKSSDW Y1, Y0, Y0
	VPERMQ $0xd8, Y0, Y0
	VMOVDQU Y0, (DI)
	ADDQ $64, SI
	ADDQ $32, DI
	SUBQ $16, CX
	JNZ  rloop
	VZEROUPPER
	RET
