#include "textflag.h"

DATA expc<>+0(SB)/4, $1.44269504088896341   // log2(e)
DATA expc<>+4(SB)/4, $0.693359375           // ln2, high part
DATA expc<>+8(SB)/4, $-2.12194440e-4        // ln2, low part
DATA expc<>+12(SB)/4, $1.9875691500e-4
DATA expc<>+16(SB)/4, $1.3981999507e-3
DATA expc<>+20(SB)/4, $8.3334519073e-3
DATA expc<>+24(SB)/4, $4.1665795894e-2
DATA expc<>+28(SB)/4, $1.6666665459e-1
DATA expc<>+32(SB)/4, $5.0000001201e-1
DATA expc<>+36(SB)/4, $1.0
DATA expc<>+40(SB)/4, $-87.0
DATA expc<>+44(SB)/4, $0.0
GLOBL expc<>(SB), RODATA|NOPTR, $48

// EXP8: e^(x − Y15) of the 8 values at (ptr), into (ptr), added to the
// sum Y9 (expAVX2's step: x < −87 gives 0; constants ln2 hi, lo in Y13,
// Y12, log2 e in Y14, 1 in Y10, −87 in Y11; clobbers Y0..Y5, Y8).
#define EXP8(ptr) \
	VMOVUPS (ptr), Y0 \
	VSUBPS Y15, Y0, Y0 \
	VCMPPS $0x11, Y11, Y0, Y8 \
	VMAXPS Y11, Y0, Y0 \
	VMULPS Y14, Y0, Y1 \
	VROUNDPS $0, Y1, Y1 \
	VFNMADD231PS Y13, Y1, Y0 \
	VFNMADD231PS Y12, Y1, Y0 \
	VBROADCASTSS expc<>+12(SB), Y2 \
	VBROADCASTSS expc<>+16(SB), Y3 \
	VFMADD213PS Y3, Y0, Y2 \
	VBROADCASTSS expc<>+20(SB), Y3 \
	VFMADD213PS Y3, Y0, Y2 \
	VBROADCASTSS expc<>+24(SB), Y3 \
	VFMADD213PS Y3, Y0, Y2 \
	VBROADCASTSS expc<>+28(SB), Y3 \
	VFMADD213PS Y3, Y0, Y2 \
	VBROADCASTSS expc<>+32(SB), Y3 \
	VFMADD213PS Y3, Y0, Y2 \
	VMULPS Y0, Y0, Y4 \
	VADDPS Y10, Y0, Y5 \
	VFMADD231PS Y4, Y2, Y5 \
	VCVTPS2DQ Y1, Y1 \
	VPSLLD $23, Y1, Y1 \
	VPADDD Y1, Y5, Y5 \
	VANDNPS Y5, Y8, Y5 \
	VADDPS Y5, Y9, Y9 \
	VMOVUPS Y5, (ptr)

// func expAVX2(x *float32, n int, sub float32) float32
// x[i] = e^(x[i]-sub) for n values (a multiple of 8), each x[i]-sub <= 0;
// returns their sum. Below -87 the result is 0. The exponential is
// Cephes' expf: x = k·ln2 + r, |r| <= ln2/2, e^r by a degree-6
// polynomial, times 2^k through the exponent bits: within 2 ulp.
TEXT ·expAVX2(SB), NOSPLIT, $0-28
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	VBROADCASTSS sub+16(FP), Y15
	VBROADCASTSS expc<>+0(SB), Y14
	VBROADCASTSS expc<>+4(SB), Y13
	VBROADCASTSS expc<>+8(SB), Y12
	VBROADCASTSS expc<>+40(SB), Y11
	VBROADCASTSS expc<>+36(SB), Y10
	VXORPS Y9, Y9, Y9 // the sum

eloop:
	EXP8(SI)
	ADDQ $32, SI
	SUBQ $8, CX
	JNZ  eloop
	VEXTRACTF128 $1, Y9, X1
	VADDPS X1, X9, X9
	VHADDPS X9, X9, X9
	VHADDPS X9, X9, X9
	MOVSS X9, ret+24(FP)
	VZEROUPPER
	RET

// KEYROW loads into r the row of the key DX points to, or of the last
// key (R9) past it, at byte offset off, and steps DX a row (R8 bytes).
#define KEYROW(off, r) \
	MOVQ DX, AX \
	CMPQ AX, R9 \
	CMOVQHI R9, AX \
	VMOVUPS off(AX), r \
	ADDQ R8, DX

// KEYBLOCK transposes 8 keys (BX: the first's row) × 8 channels (from
// byte offset off of their rows) into 8 rows of kt: channel c's 8 values
// at R12 + c·R10; R12 ends 8 rows on.
#define KEYBLOCK(off) \
	MOVQ BX, DX \
	KEYROW(off, Y0) \
	KEYROW(off, Y1) \
	KEYROW(off, Y2) \
	KEYROW(off, Y3) \
	KEYROW(off, Y4) \
	KEYROW(off, Y5) \
	KEYROW(off, Y6) \
	KEYROW(off, Y7) \
	VUNPCKLPS Y1, Y0, Y8 \
	VUNPCKHPS Y1, Y0, Y9 \
	VUNPCKLPS Y3, Y2, Y10 \
	VUNPCKHPS Y3, Y2, Y11 \
	VUNPCKLPS Y5, Y4, Y12 \
	VUNPCKHPS Y5, Y4, Y13 \
	VUNPCKLPS Y7, Y6, Y14 \
	VUNPCKHPS Y7, Y6, Y15 \
	VSHUFPS $0x44, Y10, Y8, Y0 \
	VSHUFPS $0xee, Y10, Y8, Y1 \
	VSHUFPS $0x44, Y11, Y9, Y2 \
	VSHUFPS $0xee, Y11, Y9, Y3 \
	VSHUFPS $0x44, Y14, Y12, Y4 \
	VSHUFPS $0xee, Y14, Y12, Y5 \
	VSHUFPS $0x44, Y15, Y13, Y6 \
	VSHUFPS $0xee, Y15, Y13, Y7 \
	VPERM2F128 $0x20, Y4, Y0, Y8 \
	VPERM2F128 $0x20, Y5, Y1, Y9 \
	VPERM2F128 $0x20, Y6, Y2, Y10 \
	VPERM2F128 $0x20, Y7, Y3, Y11 \
	VPERM2F128 $0x31, Y4, Y0, Y12 \
	VPERM2F128 $0x31, Y5, Y1, Y13 \
	VPERM2F128 $0x31, Y6, Y2, Y14 \
	VPERM2F128 $0x31, Y7, Y3, Y15 \
	VMOVUPS Y8, (R12) \
	VMOVUPS Y9, (R12)(R10*1) \
	VMOVUPS Y10, (R12)(R10*2) \
	VMOVUPS Y11, (R12)(R13*1) \
	LEAQ (R12)(R10*4), R12 \
	VMOVUPS Y12, (R12) \
	VMOVUPS Y13, (R12)(R10*1) \
	VMOVUPS Y14, (R12)(R10*2) \
	VMOVUPS Y15, (R12)(R13*1) \
	LEAQ (R12)(R10*4), R12

// SCORE4: four channels (c .. c+3, byte offset off of the query at SI)
// of a chunk of 8 keys (AX: channel c's row of kt, stepped R10 a row).
#define SCORE4(off) \
	VBROADCASTSS (off)(SI), Y4 \
	VFMADD231PS (AX), Y4, Y0 \
	ADDQ R10, AX \
	VBROADCASTSS (off+4)(SI), Y5 \
	VFMADD231PS (AX), Y5, Y1 \
	ADDQ R10, AX \
	VBROADCASTSS (off+8)(SI), Y6 \
	VFMADD231PS (AX), Y6, Y2 \
	ADDQ R10, AX \
	VBROADCASTSS (off+12)(SI), Y7 \
	VFMADD231PS (AX), Y7, Y3 \
	ADDQ R10, AX

// keysT transposes the keys into kt, 8×8 at a time, for attendAVX2
// and attendAVX512: keys j0 .. j0+7 (BX: key j0, R8 bytes a row; keys
// past the last, R9, read as it), channels 0..31, into kt columns
// j0 .. j0+7 (R11, R10 bytes a row, R13 three rows), CX keys in all (tp,
// a multiple of 8). It clobbers AX, BX, CX, DX, R11, R12 and Y0..Y15.
TEXT keysT<>(SB), NOSPLIT|NOFRAME, $0-0
keysloop:
	MOVQ R11, R12
	KEYBLOCK(0)
	KEYBLOCK(32)
	KEYBLOCK(64)
	KEYBLOCK(96)
	LEAQ (BX)(R8*8), BX
	ADDQ $32, R11
	SUBQ $8, CX
	JNZ  keysloop
	RET

// func attendAVX2(dst *float32, dstride int, q, k, v *float32, stride, t, tp int, scale float32, kt, sc *float32)
// Attend (attn.go) for t > 0: the keys transposed into kt 8×8 at a time
// (keys t..tp-1 copies of key t-1), then for each query the very
// instructions of scoresAVX2, Softmax's AVX2 path (scaleMaxAVX2,
// expAVX2, mulAVX2) and mixAVX2, in their order.
TEXT ·attendAVX2(SB), NOSPLIT, $0-88
	MOVQ stride+40(FP), R8
	SHLQ $2, R8 // a row of q, k, v
	MOVQ tp+56(FP), CX
	LEAQ (CX*4), R10 // a row of kt
	LEAQ (R10)(R10*2), R13
	MOVQ k+24(FP), BX
	MOVQ t+48(FP), AX
	DECQ AX
	IMULQ R8, AX
	LEAQ (BX)(AX*1), R9 // the last key
	MOVQ kt+72(FP), R11

	CALL keysT<>(SB)

	// Softmax's exponential's constants (as expAVX2).
	VBROADCASTSS expc<>+0(SB), Y14
	VBROADCASTSS expc<>+4(SB), Y13
	VBROADCASTSS expc<>+8(SB), Y12
	VBROADCASTSS expc<>+40(SB), Y11
	VBROADCASTSS expc<>+36(SB), Y10
	MOVQ q+16(FP), SI
	MOVQ dst+0(FP), DI
	MOVQ sc+80(FP), R12
	MOVQ t+48(FP), R11

aquery:
	// Scores (scoresAVX2) into sc.
	MOVQ kt+72(FP), DX
	MOVQ R12, BX
	MOVQ tp+56(FP), CX

ascchunk:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	MOVQ DX, AX
	SCORE4(0)
	SCORE4(16)
	SCORE4(32)
	SCORE4(48)
	SCORE4(64)
	SCORE4(80)
	SCORE4(96)
	SCORE4(112)
	VADDPS Y1, Y0, Y0
	VADDPS Y3, Y2, Y2
	VADDPS Y2, Y0, Y0
	VMOVUPS Y0, (BX)
	ADDQ $32, BX
	ADDQ $32, DX
	SUBQ $8, CX
	JNZ  ascchunk

	// Softmax: the padding past t is -MaxFloat32.
	MOVQ t+48(FP), AX
	MOVQ tp+56(FP), CX

apad:
	CMPQ AX, CX
	JGE  apadded
	MOVL $0xff7fffff, (R12)(AX*4)
	INCQ AX
	JMP  apad

apadded:
	// scaleMaxAVX2
	VBROADCASTSS scale+64(FP), Y1
	MOVL $0xff7fffff, AX // -MaxFloat32
	VMOVD AX, X0
	VBROADCASTSS X0, Y0
	MOVQ R12, BX

asmloop:
	VMULPS (BX), Y1, Y2
	VMOVUPS Y2, (BX)
	VMAXPS Y2, Y0, Y0
	ADDQ $32, BX
	SUBQ $8, CX
	JNZ  asmloop
	VEXTRACTF128 $1, Y0, X1
	VMAXPS X1, X0, X0
	VPERMILPS $0x4e, X0, X1
	VMAXPS X1, X0, X0
	VPERMILPS $0xb1, X0, X1
	VMAXPS X1, X0, X0

	// expAVX2, less the largest
	VBROADCASTSS X0, Y15
	VXORPS Y9, Y9, Y9 // the sum
	MOVQ R12, BX
	MOVQ tp+56(FP), CX

aeloop:
	EXP8(BX)
	ADDQ $32, BX
	SUBQ $8, CX
	JNZ  aeloop
	VEXTRACTF128 $1, Y9, X1
	VADDPS X1, X9, X9
	VHADDPS X9, X9, X9
	VHADDPS X9, X9, X9

	// mulAVX2 by 1/sum
	VMOVSS expc<>+36(SB), X1
	VDIVSS X9, X1, X1
	VBROADCASTSS X1, Y1
	MOVQ R12, BX
	MOVQ tp+56(FP), CX

amuloop:
	VMULPS (BX), Y1, Y2
	VMOVUPS Y2, (BX)
	ADDQ $32, BX
	SUBQ $8, CX
	JNZ  amuloop

	// mixAVX2 into dst
	MOVQ R12, BX
	MOVQ v+32(FP), DX
	MOVQ t+48(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7

amxpair:
	CMPQ CX, $2
	JLT  amxlast
	VBROADCASTSS (BX), Y8
	VFMADD231PS (DX), Y8, Y0
	VFMADD231PS 32(DX), Y8, Y1
	VFMADD231PS 64(DX), Y8, Y2
	VFMADD231PS 96(DX), Y8, Y3
	ADDQ R8, DX
	VBROADCASTSS 4(BX), Y9
	VFMADD231PS (DX), Y9, Y4
	VFMADD231PS 32(DX), Y9, Y5
	VFMADD231PS 64(DX), Y9, Y6
	VFMADD231PS 96(DX), Y9, Y7
	ADDQ R8, DX
	ADDQ $8, BX
	SUBQ $2, CX
	JMP  amxpair

amxlast:
	TESTQ CX, CX
	JZ    amxdone
	VBROADCASTSS (BX), Y8
	VFMADD231PS (DX), Y8, Y0
	VFMADD231PS 32(DX), Y8, Y1
	VFMADD231PS 64(DX), Y8, Y2
	VFMADD231PS 96(DX), Y8, Y3

amxdone:
	VADDPS Y4, Y0, Y0
	VADDPS Y5, Y1, Y1
	VADDPS Y6, Y2, Y2
	VADDPS Y7, Y3, Y3
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)

	// The next query.
	ADDQ R8, SI
	MOVQ dstride+8(FP), AX
	LEAQ (DI)(AX*4), DI
	DECQ R11
	JNZ  aquery
	VZEROUPPER
	RET

// SCORE4Z is SCORE4 for a chunk of 16 keys (Z registers).
#define SCORE4Z(off) \
	VBROADCASTSS (off)(SI), Z4 \
	VFMADD231PS (AX), Z4, Z0 \
	ADDQ R10, AX \
	VBROADCASTSS (off+4)(SI), Z5 \
	VFMADD231PS (AX), Z5, Z1 \
	ADDQ R10, AX \
	VBROADCASTSS (off+8)(SI), Z6 \
	VFMADD231PS (AX), Z6, Z2 \
	ADDQ R10, AX \
	VBROADCASTSS (off+12)(SI), Z7 \
	VFMADD231PS (AX), Z7, Z3 \
	ADDQ R10, AX

// SCORE4Z2 is SCORE4Z for two queries (SI, R9), each channel's row of kt
// loaded once: the first query's sums in Z0..Z3, the second's in
// Z26..Z29 (k·q, as q·k: the same product).
#define SCORE4Z2(off) \
	VMOVUPS (AX), Z4 \
	VMOVUPS (AX)(R10*1), Z5 \
	VMOVUPS (AX)(R10*2), Z6 \
	VMOVUPS (AX)(R13*1), Z7 \
	VFMADD231PS.BCST (off)(SI), Z4, Z0 \
	VFMADD231PS.BCST (off)(R9), Z4, Z26 \
	VFMADD231PS.BCST (off+4)(SI), Z5, Z1 \
	VFMADD231PS.BCST (off+4)(R9), Z5, Z27 \
	VFMADD231PS.BCST (off+8)(SI), Z6, Z2 \
	VFMADD231PS.BCST (off+8)(R9), Z6, Z28 \
	VFMADD231PS.BCST (off+12)(SI), Z7, Z3 \
	VFMADD231PS.BCST (off+12)(R9), Z7, Z29 \
	LEAQ (AX)(R10*4), AX

// func attendAVX512(dst *float32, dstride int, q, k, v *float32, stride, t, tp int, scale float32, kt, sc *float32)
// attendAVX2 16 lanes to a register (AVX-512F), tp = t rounded up to a
// multiple of 16, sc t rows of tp: the keys transposed 8×8 as attendAVX2
// does, then all the queries' scores (two queries a pass), all their
// softmaxes, all their mixes, each query with the same operations on
// each lane in the same order, so the same bits. What is not lane by
// lane: the largest score (the same whatever the order), and the sum of
// the exponentials, which attendAVX2 takes over 8 lanes a chunk of 8
// keys: here each chunk of 16 adds its two halves in turn to 8 lanes,
// and the 8 padding keys past attendAVX2's tp add exponentials of 0
// (exactly nothing).
TEXT ·attendAVX512(SB), NOSPLIT, $0-88
	MOVQ stride+40(FP), R8
	SHLQ $2, R8 // a row of q, k, v
	MOVQ tp+56(FP), CX
	LEAQ (CX*4), R10 // a row of kt
	LEAQ (R10)(R10*2), R13
	MOVQ k+24(FP), BX
	MOVQ t+48(FP), AX
	DECQ AX
	IMULQ R8, AX
	LEAQ (BX)(AX*1), R9 // the last key
	MOVQ kt+72(FP), R11

	CALL keysT<>(SB)

	// Softmax's exponential's constants (as expAVX2).
	VBROADCASTSS expc<>+0(SB), Z14
	VBROADCASTSS expc<>+4(SB), Z13
	VBROADCASTSS expc<>+8(SB), Z12
	VBROADCASTSS expc<>+40(SB), Z11
	VBROADCASTSS expc<>+36(SB), Z10
	VBROADCASTSS expc<>+12(SB), Z16
	VBROADCASTSS expc<>+16(SB), Z17
	VBROADCASTSS expc<>+20(SB), Z18
	VBROADCASTSS expc<>+24(SB), Z19
	VBROADCASTSS expc<>+28(SB), Z20
	VBROADCASTSS expc<>+32(SB), Z21
	VBROADCASTSS scale+64(FP), Z22
	MOVL $0xff7fffff, AX // -MaxFloat32
	VPBROADCASTD AX, Z23
	VMULPS Z23, Z22, Z24 // the padding, scaled
	// K2: the padding's lanes of a row's last chunk of 16.
	MOVQ t+48(FP), CX
	SUBQ tp+56(FP), CX
	ADDQ $16, CX
	MOVL $1, AX
	SHLL CX, AX
	DECL AX
	NOTL AX
	KMOVW AX, K2
	MOVQ tp+56(FP), R14
	SUBQ $16, R14
	SHLQ $2, R14 // the last chunk's offset in a row of sc

	// The queries' scores (scoresAVX2, 16 keys a chunk), row i at sc +
	// i·tp: the rows are independent, so that one's chain of additions
	// overlaps the next's (as in the softmax and mix below, each a pass
	// over the rows; a pass a row, as attendAVX2 does, waits on each
	// row's chains in turn). Two queries a pass share each load of kt.
	MOVQ q+16(FP), SI
	MOVQ sc+80(FP), R12
	MOVQ t+48(FP), R11

	// Two queries a pass while two are left (sc rows BX and BX+R10).
	CMPQ R11, $2
	JLT  zquery

zpair:
	MOVQ kt+72(FP), DX
	MOVQ R12, BX
	MOVQ tp+56(FP), CX
	LEAQ (SI)(R8*1), R9

zsc2chunk:
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z26, Z26, Z26
	VPXORD Z27, Z27, Z27
	VPXORD Z28, Z28, Z28
	VPXORD Z29, Z29, Z29
	MOVQ DX, AX
	SCORE4Z2(0)
	SCORE4Z2(16)
	SCORE4Z2(32)
	SCORE4Z2(48)
	SCORE4Z2(64)
	SCORE4Z2(80)
	SCORE4Z2(96)
	SCORE4Z2(112)
	VADDPS Z1, Z0, Z0
	VADDPS Z3, Z2, Z2
	VADDPS Z2, Z0, Z0
	VADDPS Z27, Z26, Z26
	VADDPS Z29, Z28, Z28
	VADDPS Z28, Z26, Z26
	VMOVUPS Z0, (BX)
	VMOVUPS Z26, (BX)(R10*1)
	ADDQ $64, BX
	ADDQ $64, DX
	SUBQ $16, CX
	JNZ  zsc2chunk
	LEAQ (SI)(R8*2), SI
	LEAQ (R12)(R10*2), R12
	SUBQ $2, R11
	CMPQ R11, $2
	JGE  zpair
	TESTQ R11, R11
	JZ   zscored

zquery:
	MOVQ kt+72(FP), DX
	MOVQ R12, BX
	MOVQ tp+56(FP), CX

zscchunk:
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	MOVQ DX, AX
	SCORE4Z(0)
	SCORE4Z(16)
	SCORE4Z(32)
	SCORE4Z(48)
	SCORE4Z(64)
	SCORE4Z(80)
	SCORE4Z(96)
	SCORE4Z(112)
	VADDPS Z1, Z0, Z0
	VADDPS Z3, Z2, Z2
	VADDPS Z2, Z0, Z0
	VMOVUPS Z0, (BX)
	ADDQ $64, BX
	ADDQ $64, DX
	SUBQ $16, CX
	JNZ  zscchunk
	ADDQ R8, SI
	ADDQ R10, R12
	DECQ R11
	JNZ  zquery

zscored:
	// Softmax, row by row.
	MOVQ sc+80(FP), R12
	MOVQ t+48(FP), R11

zsoft:
	// scaleMaxAVX2, the padding past t -MaxFloat32 (times scale).
	VMOVAPS Z23, Z0
	MOVQ R12, BX
	MOVQ R14, CX
	TESTQ CX, CX
	JZ   zsmlast

zsmloop:
	VMULPS (BX), Z22, Z2
	VMOVUPS Z2, (BX)
	VMAXPS Z2, Z0, Z0
	ADDQ $64, BX
	SUBQ $64, CX
	JNZ  zsmloop

zsmlast:
	VMULPS (BX), Z22, Z2
	VMOVAPS Z24, K2, Z2
	VMOVUPS Z2, (BX)
	VMAXPS Z2, Z0, Z0
	VEXTRACTF64X4 $1, Z0, Y1
	VMAXPS Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VMAXPS X1, X0, X0
	VPERMILPS $0x4e, X0, X1
	VMAXPS X1, X0, X0
	VPERMILPS $0xb1, X0, X1
	VMAXPS X1, X0, X0

	// expAVX2, less the largest
	VBROADCASTSS X0, Z15
	VXORPS Y9, Y9, Y9 // the sum, 8 lanes
	MOVQ R12, BX
	MOVQ tp+56(FP), CX

zeloop:
	VMOVUPS (BX), Z0
	VSUBPS Z15, Z0, Z0
	VCMPPS $0x11, Z11, Z0, K1 // x < -87: the result is 0
	VMAXPS Z11, Z0, Z0
	VMULPS Z14, Z0, Z1
	VRNDSCALEPS $0, Z1, Z1 // k = round(x·log2 e)
	VFNMADD231PS Z13, Z1, Z0 // r = x - k·ln2hi
	VFNMADD231PS Z12, Z1, Z0 // r -= k·ln2lo
	VMOVAPS Z16, Z2
	VFMADD213PS Z17, Z0, Z2 // p = p·r + c
	VFMADD213PS Z18, Z0, Z2
	VFMADD213PS Z19, Z0, Z2
	VFMADD213PS Z20, Z0, Z2
	VFMADD213PS Z21, Z0, Z2
	VMULPS Z0, Z0, Z4 // r²
	VADDPS Z10, Z0, Z5 // 1 + r
	VFMADD231PS Z4, Z2, Z5 // p·r² + r + 1
	VCVTPS2DQ Z1, Z1
	VPSLLD $23, Z1, Z1
	VPADDD Z1, Z5, Z5 // times 2^k
	VPXORD Z5, Z5, K1, Z5 // 0 where x < -87
	VEXTRACTF64X4 $1, Z5, Y6
	VADDPS Y5, Y9, Y9
	VADDPS Y6, Y9, Y9
	VMOVUPS Z5, (BX)
	ADDQ $64, BX
	SUBQ $16, CX
	JNZ  zeloop
	VEXTRACTF128 $1, Y9, X1
	VADDPS X1, X9, X9
	VHADDPS X9, X9, X9
	VHADDPS X9, X9, X9

	// mulAVX2 by 1/sum
	VMOVSS expc<>+36(SB), X1
	VDIVSS X9, X1, X1
	VBROADCASTSS X1, Z1
	MOVQ R12, BX
	MOVQ tp+56(FP), CX

zmuloop:
	VMULPS (BX), Z1, Z2
	VMOVUPS Z2, (BX)
	ADDQ $64, BX
	SUBQ $16, CX
	JNZ  zmuloop
	ADDQ R10, R12
	DECQ R11
	JNZ  zsoft

	// mixAVX2, row by row, into dst: Z0, Z1 even keys, Z2, Z3 odd.
	MOVQ sc+80(FP), R12
	MOVQ dst+0(FP), DI
	MOVQ t+48(FP), R11
	MOVQ dstride+8(FP), R9
	SHLQ $2, R9

zmix:
	MOVQ R12, BX
	MOVQ v+32(FP), DX
	MOVQ t+48(FP), CX
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3

zmxpair:
	CMPQ CX, $2
	JLT  zmxlast
	VBROADCASTSS (BX), Z8
	VFMADD231PS (DX), Z8, Z0
	VFMADD231PS 64(DX), Z8, Z1
	ADDQ R8, DX
	VBROADCASTSS 4(BX), Z9
	VFMADD231PS (DX), Z9, Z2
	VFMADD231PS 64(DX), Z9, Z3
	ADDQ R8, DX
	ADDQ $8, BX
	SUBQ $2, CX
	JMP  zmxpair

zmxlast:
	TESTQ CX, CX
	JZ    zmxdone
	VBROADCASTSS (BX), Z8
	VFMADD231PS (DX), Z8, Z0
	VFMADD231PS 64(DX), Z8, Z1

zmxdone:
	VADDPS Z2, Z0, Z0
	VADDPS Z3, Z1, Z1
	VMOVUPS Z0, (DI)
	VMOVUPS Z1, 64(DI)
	ADDQ R10, R12
	ADDQ R9, DI
	DECQ R11
	JNZ  zmix
	VZEROUPPER
	RET
