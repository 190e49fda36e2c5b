#include "textflag.h"

// The 7-bit product on AVX2 (see q7.go): four rows of inputs 0..127 (SI,
// SI+R8, SI+2·R8, SI+R9 where R9 = 3·R8) times one Packed8 block of 16
// outputs. Per quad of inputs, each row's four values are broadcast;
// VPMADDUBSW multiplies them with the block's weights (Y8: outputs 0-7,
// Y9: 8-15; four each) and sums adjacent pairs into int16 lanes (exact:
// |u1·w1 + u2·w2| <= 2·127·128 = 32512 < 32768), and VPMADDWD with ones
// (Y10) sums each output's two pairs into an int32 lane.

// Q7ROW: one row's quad into its accumulators a0 (outputs 0-7), a1 (8-15).
#define Q7ROW(uaddr, a0, a1) \
	VPBROADCASTD uaddr, Y11 \
	VPMADDUBSW Y8, Y11, Y12 \
	VPMADDUBSW Y9, Y11, Y13 \
	VPMADDWD Y10, Y12, Y12 \
	VPMADDWD Y10, Y13, Y13 \
	VPADDD Y12, a0, a0 \
	VPADDD Y13, a1, a1

#define Q7STEP(off) \
	VMOVDQU off(DI), Y8 \
	VMOVDQU (off+32)(DI), Y9 \
	PREFETCHT0 off(DI)(R14*1) \
	Q7ROW((off/16)(SI), Y0, Y1) \
	Q7ROW((off/16)(SI)(R8*1), Y2, Y3) \
	Q7ROW((off/16)(SI)(R8*2), Y4, Y5) \
	Q7ROW((off/16)(SI)(R9*1), Y6, Y7)

// Q7FLUSH: a row's group sums (a0, a1) corrected by −z·Σw (the weight
// sums in Y8, Y9; −z at qz, the low half of a dword), times the weight
// scales (Y14, Y15) times the row's step (at qs), added with one fused
// multiply-add to its float sums at off(R10).
#define Q7FLUSH(qs, qz, a0, a1, off) \
	VPBROADCASTD qz, Y11 \
	VPMADDWD Y8, Y11, Y12 \
	VPADDD Y12, a0, a0 \
	VPMADDWD Y9, Y11, Y13 \
	VPADDD Y13, a1, a1 \
	VBROADCASTSS qs, Y11 \
	VMULPS Y14, Y11, Y12 \
	VMULPS Y15, Y11, Y13 \
	VCVTDQ2PS a0, a0 \
	VCVTDQ2PS a1, a1 \
	VFMADD213PS off(R10), Y12, a0 \
	VFMADD213PS (off+32)(R10), Y13, a1 \
	VMOVUPS a0, off(R10) \
	VMOVUPS a1, (off+32)(R10)

// func qdot7AVX2(u *uint8, ustride int, w *int8, s *float32, ws *int32, groups int, qp *uint32, acc *[64]float32,
//	bias, dst *float32, dstride, n int, xo, wt *float32, ncols int, add bool, pf int)
// Each line of weights read prefetches the one pf bytes on (R14).
TEXT ·qdot7AVX2(SB), NOSPLIT, $0-136
	MOVQ u+0(FP), SI
	MOVQ ustride+8(FP), R8
	MOVQ w+16(FP), DI
	MOVQ s+24(FP), DX
	MOVQ ws+32(FP), BX
	MOVQ groups+40(FP), CX
	MOVQ qp+48(FP), AX
	MOVQ acc+56(FP), R10
	MOVQ pf+128(FP), R14
	LEAQ (R8)(R8*2), R9
	LEAQ (CX*8), R12 // a row of qp
	LEAQ (R12)(R12*2), R13
	VPXOR Y0, Y0, Y0
	VMOVUPS Y0, 0(R10)
	VMOVUPS Y0, 32(R10)
	VMOVUPS Y0, 64(R10)
	VMOVUPS Y0, 96(R10)
	VMOVUPS Y0, 128(R10)
	VMOVUPS Y0, 160(R10)
	VMOVUPS Y0, 192(R10)
	VMOVUPS Y0, 224(R10)
	VPCMPEQW Y10, Y10, Y10
	VPSRLW $15, Y10, Y10 // int16 ones

q7group:
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	VPXOR Y2, Y2, Y2
	VPXOR Y3, Y3, Y3
	VPXOR Y4, Y4, Y4
	VPXOR Y5, Y5, Y5
	VPXOR Y6, Y6, Y6
	VPXOR Y7, Y7, Y7
	Q7STEP(0)
	Q7STEP(64)
	Q7STEP(128)
	Q7STEP(192)
	Q7STEP(256)
	Q7STEP(320)
	Q7STEP(384)
	Q7STEP(448)
	Q7STEP(512)
	Q7STEP(576)
	Q7STEP(640)
	Q7STEP(704)
	Q7STEP(768)
	Q7STEP(832)
	Q7STEP(896)
	Q7STEP(960)
	ADDQ $64, SI
	ADDQ $1024, DI

	VMOVDQU (BX), Y8
	VMOVDQU 32(BX), Y9
	VMOVUPS (DX), Y14
	VMOVUPS 32(DX), Y15
	Q7FLUSH((AX), 4(AX), Y0, Y1, 0)
	Q7FLUSH((AX)(R12*1), 4(AX)(R12*1), Y2, Y3, 64)
	Q7FLUSH((AX)(R12*2), 4(AX)(R12*2), Y4, Y5, 128)
	Q7FLUSH((AX)(R13*1), 4(AX)(R13*1), Y6, Y7, 192)
	ADDQ $64, DX
	ADDQ $64, BX
	ADDQ $8, AX
	DECQ CX
	JNZ  q7group

	// Each row's sums plus the bias (plus dst), plus its outlier values
	// (4 a row at R11, when ncols is set) times their weights (Y0..Y7:
	// 4 rows of wt, dstride apart), into dst.
	MOVQ bias+64(FP), AX
	MOVQ dst+72(FP), DI
	MOVQ dstride+80(FP), R8
	MOVQ n+88(FP), CX
	MOVQ xo+96(FP), R11
	MOVQ ncols+112(FP), R12
	MOVBQZX add+120(FP), BX
	VMOVUPS (AX), Y8
	VMOVUPS 32(AX), Y9
	TESTQ R12, R12
	JZ    q7store
	MOVQ wt+104(FP), AX
	LEAQ (R8)(R8*2), R9
	VMOVUPS (AX), Y0
	VMOVUPS 32(AX), Y1
	VMOVUPS (AX)(R8*1), Y2
	VMOVUPS 32(AX)(R8*1), Y3
	VMOVUPS (AX)(R8*2), Y4
	VMOVUPS 32(AX)(R8*2), Y5
	VMOVUPS (AX)(R9*1), Y6
	VMOVUPS 32(AX)(R9*1), Y7

q7store:
	VMOVUPS (R10), Y12
	VMOVUPS 32(R10), Y13
	VADDPS Y8, Y12, Y12
	VADDPS Y9, Y13, Y13
	TESTQ BX, BX
	JZ    q7noadd
	VADDPS (DI), Y12, Y12
	VADDPS 32(DI), Y13, Y13

q7noadd:
	TESTQ R12, R12
	JZ    q7put
	VBROADCASTSS 0(R11), Y11
	VFMADD231PS Y0, Y11, Y12
	VFMADD231PS Y1, Y11, Y13
	VBROADCASTSS 4(R11), Y11
	VFMADD231PS Y2, Y11, Y12
	VFMADD231PS Y3, Y11, Y13
	VBROADCASTSS 8(R11), Y11
	VFMADD231PS Y4, Y11, Y12
	VFMADD231PS Y5, Y11, Y13
	VBROADCASTSS 12(R11), Y11
	VFMADD231PS Y6, Y11, Y12
	VFMADD231PS Y7, Y11, Y13
	ADDQ $16, R11

q7put:
	VMOVUPS Y12, (DI)
	VMOVUPS Y13, 32(DI)
	ADDQ $64, R10
	ADDQ R8, DI
	DECQ CX
	JNZ  q7store
	VZEROUPPER
	RET
