#include "textflag.h"

// The 8-bit product on AVX-VNNI (see q8avxvnni.go): qdot8VNNI's
// arithmetic on ymm registers, for CPUs with VPDPBUSD and VPDPWSSD in
// their VEX form but no AVX-512. Four rows of 8-bit inputs (SI, SI+R8,
// SI+2·R8, SI+R9 where R9 = 3·R8) times one Packed8 block of 16 outputs:
// per quad of inputs, each row's four values are broadcast and
// multiplied with the block's 16 outputs' four weights each (Y8:
// outputs 0-7, Y9: 8-15).
//
// Go's assembler spells VPDPBUSD and VPDPWSSD only in their EVEX
// (AVX512_VNNI, AVX512VL) encoding, which faults on a CPU with AVX-VNNI
// alone, so the two are written out as bytes below, in their VEX form
// (register operands only): a three-byte VEX prefix (C4), map 0F38,
// prefix 66, W0, L1 (256 bits), then the opcode and a ModRM byte of
// mod 11. Registers are given by number (0-15 for Y0-Y15), in Go's
// operand order: the signed source (r/m), the other source (VEX.vvvv),
// the accumulator (ModRM.reg).
//
//	byte 1: C4
//	byte 2: R̄ X̄ B̄ 00010, R̄ = not bit 3 of acc, X̄ = 1, B̄ = not bit 3 of rm
//	byte 3: W0, vvvv = not src, L1, pp 01 (66)
//	byte 4: the opcode, 50 (VPDPBUSD) or 52 (VPDPWSSD)
//	byte 5: 11, acc's low three bits, rm's low three bits
//
// TestAVXVNNIEncoding disassembles this file's function with GNU
// objdump and checks each is the VEX form, with no EVEX instruction
// anywhere in it (the bytes equal GNU as's for "{vex} vpdpbusd").
#define VEX3_0F38_66_256(op, rm, src, acc) \
	BYTE $0xC4; \
	BYTE $(0xE2 ^ (((acc)>>3)<<7) ^ (((rm)>>3)<<5)); \
	BYTE $(0x05 | ((15-(src))<<3)); \
	BYTE $(op); \
	BYTE $(0xC0 | (((acc)&7)<<3) | ((rm)&7))

// VPDPBUSDY(w, u, acc): acc (int32 lanes) += the sum of each lane's four
// products of u's unsigned bytes and w's signed bytes (Y registers by
// number).
#define VPDPBUSDY(w, u, acc) VEX3_0F38_66_256(0x50, w, u, acc)

// VPDPWSSDY(a, b, acc): acc (int32 lanes) += the sum of each lane's two
// products of a's and b's signed words (Y registers by number).
#define VPDPWSSDY(a, b, acc) VEX3_0F38_66_256(0x52, a, b, acc)

// AVXVSTEP: one quad of inputs, accumulators Y0..Y7 (row r: Y(2r)
// outputs 0-7, Y(2r+1) outputs 8-15); each line of weights prefetches
// the one R14 bytes on into L2 (PREFETCHT1: 2-3 % less CPU a pass than
// T0 in BenchmarkTask and BenchmarkTaskCold; 8 blocks on instead of 4
// measured the same).
#define AVXVSTEP(off) \
	VMOVDQU off(DI), Y8 \
	VMOVDQU (off+32)(DI), Y9 \
	PREFETCHT1 off(DI)(R14*1) \
	VPBROADCASTD (off/16)(SI), Y10 \
	VPBROADCASTD (off/16)(SI)(R8*1), Y11 \
	VPBROADCASTD (off/16)(SI)(R8*2), Y12 \
	VPBROADCASTD (off/16)(SI)(R9*1), Y13 \
	VPDPBUSDY(8, 10, 0) \
	VPDPBUSDY(9, 10, 1) \
	VPDPBUSDY(8, 11, 2) \
	VPDPBUSDY(9, 11, 3) \
	VPDPBUSDY(8, 12, 4) \
	VPDPBUSDY(9, 12, 5) \
	VPDPBUSDY(8, 13, 6) \
	VPDPBUSDY(9, 13, 7)

// AVXVSTEP2 is AVXVSTEP for rows 0 and 1 alone: a call of one or two
// rows (the rows past a multiple of four) multiplies only theirs
// (BenchmarkLinear8 384×1536, 17 and 18 rows: 5-6 % less time).
#define AVXVSTEP2(off) \
	VMOVDQU off(DI), Y8 \
	VMOVDQU (off+32)(DI), Y9 \
	PREFETCHT1 off(DI)(R14*1) \
	VPBROADCASTD (off/16)(SI), Y10 \
	VPBROADCASTD (off/16)(SI)(R8*1), Y11 \
	VPDPBUSDY(8, 10, 0) \
	VPDPBUSDY(9, 10, 1) \
	VPDPBUSDY(8, 11, 2) \
	VPDPBUSDY(9, 11, 3)

// AVXVFLUSH: a row's group sums (a0, a1: Y registers; n0, n1: their
// numbers) corrected by −z·Σw (the weight sums in Y8, Y9; −z at qz, the
// low half of a dword whose high half is 0, so whatever the high halves
// of the weight sums hold adds nothing), times the weight scales (Y14,
// Y15) times the row's step (at qs), added with one fused multiply-add
// to its float sums at off(SP).
#define AVXVFLUSH(qs, qz, n0, n1, a0, a1, off) \
	VPBROADCASTD qz, Y10 \
	VPDPWSSDY(8, 10, n0) \
	VPDPWSSDY(9, 10, n1) \
	VBROADCASTSS qs, Y11 \
	VMULPS Y14, Y11, Y12 \
	VMULPS Y15, Y11, Y13 \
	VCVTDQ2PS a0, a0 \
	VCVTDQ2PS a1, a1 \
	VFMADD213PS off(SP), Y12, a0 \
	VFMADD213PS (off+32)(SP), Y13, a1 \
	VMOVUPS a0, off(SP) \
	VMOVUPS a1, (off+32)(SP)

// func qdot8AVXVNNI(u *uint8, ustride int, w *int8, s *float32, ws *int32, groups int, qp *uint32, acc *[64]float32,
//	bias, dst *float32, dstride, n int, xo, wt *float32, ncols int, add bool, pf int)
// The float sums of the four rows (4 × 16) are in the frame. With n <= 2
// only rows 0 and 1 are multiplied.
TEXT ·qdot8AVXVNNI(SB), NOSPLIT, $256-136
	MOVQ u+0(FP), SI
	MOVQ ustride+8(FP), R8
	MOVQ w+16(FP), DI
	MOVQ s+24(FP), DX
	MOVQ ws+32(FP), BX
	MOVQ groups+40(FP), CX
	MOVQ qp+48(FP), AX
	MOVQ pf+128(FP), R14
	LEAQ (R8)(R8*2), R9
	LEAQ (CX*8), R12 // a row of qp
	LEAQ (R12)(R12*2), R13
	VPXOR Y0, Y0, Y0
	VMOVUPS Y0, 0(SP)
	VMOVUPS Y0, 32(SP)
	VMOVUPS Y0, 64(SP)
	VMOVUPS Y0, 96(SP)
	VMOVUPS Y0, 128(SP)
	VMOVUPS Y0, 160(SP)
	VMOVUPS Y0, 192(SP)
	VMOVUPS Y0, 224(SP)
	CMPQ n+88(FP), $2
	JLE  avxvgroup2

avxvgroup:
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	VPXOR Y2, Y2, Y2
	VPXOR Y3, Y3, Y3
	VPXOR Y4, Y4, Y4
	VPXOR Y5, Y5, Y5
	VPXOR Y6, Y6, Y6
	VPXOR Y7, Y7, Y7
	AVXVSTEP(0)
	AVXVSTEP(64)
	AVXVSTEP(128)
	AVXVSTEP(192)
	AVXVSTEP(256)
	AVXVSTEP(320)
	AVXVSTEP(384)
	AVXVSTEP(448)
	AVXVSTEP(512)
	AVXVSTEP(576)
	AVXVSTEP(640)
	AVXVSTEP(704)
	AVXVSTEP(768)
	AVXVSTEP(832)
	AVXVSTEP(896)
	AVXVSTEP(960)
	ADDQ $64, SI
	ADDQ $1024, DI

	VMOVDQU (BX), Y8
	VMOVDQU 32(BX), Y9
	VMOVUPS (DX), Y14
	VMOVUPS 32(DX), Y15
	AVXVFLUSH((AX), 4(AX), 0, 1, Y0, Y1, 0)
	AVXVFLUSH((AX)(R12*1), 4(AX)(R12*1), 2, 3, Y2, Y3, 64)
	AVXVFLUSH((AX)(R12*2), 4(AX)(R12*2), 4, 5, Y4, Y5, 128)
	AVXVFLUSH((AX)(R13*1), 4(AX)(R13*1), 6, 7, Y6, Y7, 192)
	ADDQ $64, DX
	ADDQ $64, BX
	ADDQ $8, AX
	DECQ CX
	JNZ  avxvgroup
	JMP  avxvsums

	// One or two rows: only theirs.
avxvgroup2:
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	VPXOR Y2, Y2, Y2
	VPXOR Y3, Y3, Y3
	AVXVSTEP2(0)
	AVXVSTEP2(64)
	AVXVSTEP2(128)
	AVXVSTEP2(192)
	AVXVSTEP2(256)
	AVXVSTEP2(320)
	AVXVSTEP2(384)
	AVXVSTEP2(448)
	AVXVSTEP2(512)
	AVXVSTEP2(576)
	AVXVSTEP2(640)
	AVXVSTEP2(704)
	AVXVSTEP2(768)
	AVXVSTEP2(832)
	AVXVSTEP2(896)
	AVXVSTEP2(960)
	ADDQ $64, SI
	ADDQ $1024, DI

	VMOVDQU (BX), Y8
	VMOVDQU 32(BX), Y9
	VMOVUPS (DX), Y14
	VMOVUPS 32(DX), Y15
	AVXVFLUSH((AX), 4(AX), 0, 1, Y0, Y1, 0)
	AVXVFLUSH((AX)(R12*1), 4(AX)(R12*1), 2, 3, Y2, Y3, 64)
	ADDQ $64, DX
	ADDQ $64, BX
	ADDQ $8, AX
	DECQ CX
	JNZ  avxvgroup2

avxvsums:
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
	MOVQ SP, R10
	TESTQ R12, R12
	JZ    avxvstore
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

avxvstore:
	VMOVUPS (R10), Y12
	VMOVUPS 32(R10), Y13
	VADDPS Y8, Y12, Y12
	VADDPS Y9, Y13, Y13
	TESTQ BX, BX
	JZ    avxvnoadd
	VADDPS (DI), Y12, Y12
	VADDPS 32(DI), Y13, Y13

avxvnoadd:
	TESTQ R12, R12
	JZ    avxvput
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

avxvput:
	VMOVUPS Y12, (DI)
	VMOVUPS Y13, 32(DI)
	ADDQ $64, R10
	ADDQ R8, DI
	DECQ CX
	JNZ  avxvstore
	VZEROUPPER
	RET
