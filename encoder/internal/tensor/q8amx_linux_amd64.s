#include "textflag.h"

// The 8-bit product on AMX (see q8amx.go). Go's assembler has no AMX
// mnemonics, so the instructions are spelled in bytes; each macro names
// its operands. Tiles: T2 a group's weights (B: a Packed8 block's group,
// 16 quads of 64 bytes, at DI); T1 and T4 the inputs of rows 0..15 and
// 16..27 (A: a row's 64 inputs of the group, R8 bytes apart, at SI and
// R11); T0 and T3 their sums (C), stored at R14 and R14+1024 and read
// back (by FROW) at R10.
#define LDTILECFG_R11 BYTE $0xc4; BYTE $0xc2; BYTE $0x78; BYTE $0x49; BYTE $0x03
#define TILERELEASE BYTE $0xc4; BYTE $0xe2; BYTE $0x78; BYTE $0x49; BYTE $0xc0
#define TILEZERO_T0 BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x49; BYTE $0xc0
#define TILEZERO_T3 BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x49; BYTE $0xd8
// TILELOADD T1, (SI)(R8*1); T4, (R11)(R8*1); T2, (DI)(R9*1)
#define TILELOADD_T1 BYTE $0xc4; BYTE $0xa2; BYTE $0x7b; BYTE $0x4b; BYTE $0x0c; BYTE $0x06
#define TILELOADD_T4 BYTE $0xc4; BYTE $0x82; BYTE $0x7b; BYTE $0x4b; BYTE $0x24; BYTE $0x03
#define TILELOADD_T2 BYTE $0xc4; BYTE $0xa2; BYTE $0x7b; BYTE $0x4b; BYTE $0x14; BYTE $0x0f
// TDPBUSD T0, T1, T2 and T3, T4, T2: C += A·B, unsigned 8-bit × signed
// 8-bit, four products summed into each int32.
#define TDPBUSD_T0 BYTE $0xc4; BYTE $0xe2; BYTE $0x69; BYTE $0x5e; BYTE $0xc1
#define TDPBUSD_T3 BYTE $0xc4; BYTE $0xe2; BYTE $0x69; BYTE $0x5e; BYTE $0xdc
// TILESTORED (R14)(R9*1), T0 and 1024(R14)(R9*1), T3
#define TILESTORED_T0 BYTE $0xc4; BYTE $0x82; BYTE $0x7a; BYTE $0x4b; BYTE $0x04; BYTE $0x0e
#define TILESTORED_T3 BYTE $0xc4; BYTE $0x82; BYTE $0x7a; BYTE $0x4b; BYTE $0x9c; BYTE $0x0e; BYTE $0x00; BYTE $0x04; BYTE $0x00; BYTE $0x00

// PREFETCHB: the weights twelve groups on (12 KB) into L2, a line at a
// time. A query's pass reads 10.6 MB of weights that a server's idle
// gaps leave in memory, not in cache: BenchmarkTaskIdle (20 ms between
// passes) 1.38-1.40 ms a pass 4 KB on, 1.29-1.37 at 8 KB, 1.26-1.28 at
// 12 KB, 1.45-1.55 at 32 KB; without, 1.6-2.0. Past a matrix's end the
// lines are the next one's, packed after it in the same arena.
#define PREFETCHB \
	PREFETCHT1 12288(DI) \
	PREFETCHT1 12352(DI) \
	PREFETCHT1 12416(DI) \
	PREFETCHT1 12480(DI) \
	PREFETCHT1 12544(DI) \
	PREFETCHT1 12608(DI) \
	PREFETCHT1 12672(DI) \
	PREFETCHT1 12736(DI) \
	PREFETCHT1 12800(DI) \
	PREFETCHT1 12864(DI) \
	PREFETCHT1 12928(DI) \
	PREFETCHT1 12992(DI) \
	PREFETCHT1 13056(DI) \
	PREFETCHT1 13120(DI) \
	PREFETCHT1 13184(DI) \
	PREFETCHT1 13248(DI)

// FROW: one row's group sums (a row of a stored tile at off(R10)),
// corrected by −z·Σw (Z16), scaled by the weight scales (Z17) times the
// row's step (qp at R15), into the row's float accumulator F; R15 moves
// to the next row's qp. The same instructions as the VNNI kernel's
// Q8FLUSH, so the same bits.
#define FROW(off, F) \
	VMOVDQU32 off(R10), Z18 \
	VPDPWSSD.BCST 4(R15), Z16, Z18 \
	VMULPS.BCST (R15), Z17, Z19 \
	VCVTDQ2PS Z18, Z18 \
	VFMADD231PS Z19, Z18, F \
	ADDQ R12, R15

// SROW: a row's sums plus the bias (Z18), plus dst when add is set, plus
// its outlier values (at AX) times their weights (rows of R11 bytes at
// R12, R12+R11; Z16, Z17) when ncols is not 0, stored at R15; R15 moves
// to the next row (R11 bytes on). The VNNI kernel's Q8STORE.
#define SROW(F) \
	VADDPS Z18, F, F \
	CMPB add+136(FP), $0 \
	JEQ  2(PC) \
	VADDPS (R15), F, F \
	CMPQ ncols+128(FP), $0 \
	JEQ  10(PC) \
	VBROADCASTSS 0(AX), Z19 \
	VFMADD231PS (R12), Z19, F \
	VBROADCASTSS 4(AX), Z19 \
	VFMADD231PS (R12)(R11*1), Z19, F \
	VBROADCASTSS 8(AX), Z19 \
	VFMADD231PS Z16, Z19, F \
	VBROADCASTSS 12(AX), Z19 \
	VFMADD231PS Z17, Z19, F \
	ADDQ $16, AX \
	VMOVUPS F, (R15) \
	ADDQ R11, R15

// func qdot8AMX(cfg, scratch *byte, u *uint8, in int, w *int8, blocks int, s *float32, ws *int32,
//	groups int, qp *uint32, bias, dst *float32, out, n int, xo, wt *float32, ncols int, add bool)
//
// The groups run in a pipeline: the tiles multiply the next group
// (issue, into one half of the scratch) while the vector units scale and
// add the group before it (FROW, from the other half); the next block's
// first group is issued while the block's last is added. Locals: 0(SP)
// the groups left in the block, 8(SP) the groups left in all, 16(SP) the
// end of a row of inputs.
TEXT ·qdot8AMX(SB), NOSPLIT, $24-137
	MOVQ cfg+0(FP), R11
	LDTILECFG_R11
	MOVQ u+16(FP), SI
	MOVQ in+24(FP), R8
	MOVQ w+32(FP), DI
	MOVQ s+48(FP), DX
	MOVQ ws+56(FP), BX
	MOVQ groups+64(FP), R12
	MOVQ R12, 0(SP)
	MOVQ R12, AX
	SHLQ $6, AX
	ADDQ SI, AX
	MOVQ AX, 16(SP)
	IMULQ blocks+40(FP), R12
	MOVQ R12, 8(SP)
	MOVQ groups+64(FP), R12
	SHLQ $3, R12 // a row of qp
	MOVQ n+104(FP), CX
	MOVQ $64, R9
	MOVQ blocks+40(FP), R13
	MOVQ scratch+8(FP), R14
	LEAQ 2048(R14), R10

	// The first group.
	PREFETCHB
	TILELOADD_T2
	TILELOADD_T1
	TILEZERO_T0
	TDPBUSD_T0
	TILESTORED_T0
	CMPQ CX, $16
	JLE  amxone0
	MOVQ R8, R11
	SHLQ $4, R11
	ADDQ SI, R11
	TILELOADD_T4
	TILEZERO_T3
	TDPBUSD_T3
	TILESTORED_T3

amxone0:
	ADDQ $64, SI
	ADDQ $1024, DI
	CMPQ SI, 16(SP)
	JNE  amxwrap0
	MOVQ u+16(FP), SI

amxwrap0:
	XCHGQ R10, R14

amxblock:
	MOVQ qp+72(FP), AX

	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	VPXORD Z14, Z14, Z14
	VPXORD Z15, Z15, Z15
	VPXORD Z20, Z20, Z20
	VPXORD Z21, Z21, Z21
	VPXORD Z22, Z22, Z22
	VPXORD Z23, Z23, Z23
	VPXORD Z24, Z24, Z24
	VPXORD Z25, Z25, Z25
	VPXORD Z26, Z26, Z26
	VPXORD Z27, Z27, Z27
	VPXORD Z28, Z28, Z28
	VPXORD Z29, Z29, Z29
	VPXORD Z30, Z30, Z30
	VPXORD Z31, Z31, Z31

amxgroup:
	DECQ 8(SP)
	JZ   amxlast
	PREFETCHB
	TILELOADD_T2
	TILELOADD_T1
	TILEZERO_T0
	TDPBUSD_T0
	TILESTORED_T0
	CMPQ CX, $16
	JLE  amxone1
	MOVQ R8, R11
	SHLQ $4, R11
	ADDQ SI, R11
	TILELOADD_T4
	TILEZERO_T3
	TDPBUSD_T3
	TILESTORED_T3

amxone1:
	ADDQ $64, SI
	ADDQ $1024, DI
	CMPQ SI, 16(SP)
	JNE  amxwrap1
	MOVQ u+16(FP), SI

amxwrap1:

amxlast:
	VMOVDQU32 (BX), Z16
	VMOVUPS (DX), Z17
	MOVQ AX, R15
	FROW(0, Z0)
	CMPQ CX, $1
	JEQ  amxflushed
	FROW(64, Z1)
	CMPQ CX, $2
	JEQ  amxflushed
	FROW(128, Z2)
	CMPQ CX, $3
	JEQ  amxflushed
	FROW(192, Z3)
	CMPQ CX, $4
	JEQ  amxflushed
	FROW(256, Z4)
	CMPQ CX, $5
	JEQ  amxflushed
	FROW(320, Z5)
	CMPQ CX, $6
	JEQ  amxflushed
	FROW(384, Z6)
	CMPQ CX, $7
	JEQ  amxflushed
	FROW(448, Z7)
	CMPQ CX, $8
	JEQ  amxflushed
	FROW(512, Z8)
	CMPQ CX, $9
	JEQ  amxflushed
	FROW(576, Z9)
	CMPQ CX, $10
	JEQ  amxflushed
	FROW(640, Z10)
	CMPQ CX, $11
	JEQ  amxflushed
	FROW(704, Z11)
	CMPQ CX, $12
	JEQ  amxflushed
	FROW(768, Z12)
	CMPQ CX, $13
	JEQ  amxflushed
	FROW(832, Z13)
	CMPQ CX, $14
	JEQ  amxflushed
	FROW(896, Z14)
	CMPQ CX, $15
	JEQ  amxflushed
	FROW(960, Z15)
	CMPQ CX, $16
	JEQ  amxflushed
	FROW(1024, Z20)
	CMPQ CX, $17
	JEQ  amxflushed
	FROW(1088, Z21)
	CMPQ CX, $18
	JEQ  amxflushed
	FROW(1152, Z22)
	CMPQ CX, $19
	JEQ  amxflushed
	FROW(1216, Z23)
	CMPQ CX, $20
	JEQ  amxflushed
	FROW(1280, Z24)
	CMPQ CX, $21
	JEQ  amxflushed
	FROW(1344, Z25)
	CMPQ CX, $22
	JEQ  amxflushed
	FROW(1408, Z26)
	CMPQ CX, $23
	JEQ  amxflushed
	FROW(1472, Z27)
	CMPQ CX, $24
	JEQ  amxflushed
	FROW(1536, Z28)
	CMPQ CX, $25
	JEQ  amxflushed
	FROW(1600, Z29)
	CMPQ CX, $26
	JEQ  amxflushed
	FROW(1664, Z30)
	CMPQ CX, $27
	JEQ  amxflushed
	FROW(1728, Z31)

amxflushed:
	ADDQ $64, DX
	ADDQ $64, BX
	ADDQ $8, AX
	XCHGQ R10, R14
	DECQ 0(SP)
	JNZ  amxgroup

	// The block's outputs: R15 is its byte offset in a row, then the
	// row's place in dst; R12 the outliers' weights.
	MOVQ groups+64(FP), R11
	MOVQ R11, 0(SP)
	MOVQ blocks+40(FP), R15
	SUBQ R13, R15
	SHLQ $6, R15
	MOVQ out+96(FP), R11
	SHLQ $2, R11
	VPXORD Z18, Z18, Z18
	MOVQ bias+80(FP), AX
	TESTQ AX, AX
	JZ   amxnobias
	VMOVUPS (AX)(R15*1), Z18

amxnobias:
	MOVQ wt+120(FP), R12
	ADDQ R15, R12
	CMPQ ncols+128(FP), $0
	JEQ  amxnocols
	VMOVUPS (R12)(R11*2), Z16
	LEAQ (R12)(R11*2), AX
	VMOVUPS (AX)(R11*1), Z17

amxnocols:
	ADDQ dst+88(FP), R15
	MOVQ xo+112(FP), AX
	SROW(Z0)
	CMPQ CX, $1
	JEQ  amxstored
	SROW(Z1)
	CMPQ CX, $2
	JEQ  amxstored
	SROW(Z2)
	CMPQ CX, $3
	JEQ  amxstored
	SROW(Z3)
	CMPQ CX, $4
	JEQ  amxstored
	SROW(Z4)
	CMPQ CX, $5
	JEQ  amxstored
	SROW(Z5)
	CMPQ CX, $6
	JEQ  amxstored
	SROW(Z6)
	CMPQ CX, $7
	JEQ  amxstored
	SROW(Z7)
	CMPQ CX, $8
	JEQ  amxstored
	SROW(Z8)
	CMPQ CX, $9
	JEQ  amxstored
	SROW(Z9)
	CMPQ CX, $10
	JEQ  amxstored
	SROW(Z10)
	CMPQ CX, $11
	JEQ  amxstored
	SROW(Z11)
	CMPQ CX, $12
	JEQ  amxstored
	SROW(Z12)
	CMPQ CX, $13
	JEQ  amxstored
	SROW(Z13)
	CMPQ CX, $14
	JEQ  amxstored
	SROW(Z14)
	CMPQ CX, $15
	JEQ  amxstored
	SROW(Z15)
	CMPQ CX, $16
	JEQ  amxstored
	SROW(Z20)
	CMPQ CX, $17
	JEQ  amxstored
	SROW(Z21)
	CMPQ CX, $18
	JEQ  amxstored
	SROW(Z22)
	CMPQ CX, $19
	JEQ  amxstored
	SROW(Z23)
	CMPQ CX, $20
	JEQ  amxstored
	SROW(Z24)
	CMPQ CX, $21
	JEQ  amxstored
	SROW(Z25)
	CMPQ CX, $22
	JEQ  amxstored
	SROW(Z26)
	CMPQ CX, $23
	JEQ  amxstored
	SROW(Z27)
	CMPQ CX, $24
	JEQ  amxstored
	SROW(Z28)
	CMPQ CX, $25
	JEQ  amxstored
	SROW(Z29)
	CMPQ CX, $26
	JEQ  amxstored
	SROW(Z30)
	CMPQ CX, $27
	JEQ  amxstored
	SROW(Z31)

amxstored:
	MOVQ groups+64(FP), R12
	SHLQ $3, R12
	DECQ R13
	JNZ  amxblock
	TILERELEASE
	VZEROUPPER
	RET

