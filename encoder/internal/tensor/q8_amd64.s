#include "textflag.h"

// The 8-bit product (see q8.go): four rows of 8-bit inputs (SI,
// SI+R8, SI+2·R8, SI+R9 where R9 = 3·R8) times packed int8 weights (see
// Packed8): per quad of inputs, each row's four values are broadcast and
// multiplied with the block's 16 outputs' four weights each (VPDPBUSD:
// unsigned inputs, signed weights).

// Q8STEP: one quad of inputs, two blocks (Z0: block A, Z1: block B),
// accumulators Z2..Z9 (row r: Z(2+2r) block A, Z(3+2r) block B). It
// prefetches the same line of the pair of blocks after next into L2
// (PREFETCHT1: a query's pass reads its weights from memory, and T0,
// into L1, evicted lines the pair in hand still needed; BenchmarkTask
// with 48 MB written between passes, 8 % less CPU).
#define Q8STEP(off) \
	VMOVDQU32 off(DI), Z0 \
	VMOVDQU32 off(DI)(R10*1), Z1 \
	VPBROADCASTD (off/16)(SI), Z20 \
	VPBROADCASTD (off/16)(SI)(R8*1), Z21 \
	VPBROADCASTD (off/16)(SI)(R8*2), Z22 \
	VPBROADCASTD (off/16)(SI)(R9*1), Z23 \
	VPDPBUSD Z0, Z20, Z2 \
	VPDPBUSD Z1, Z20, Z3 \
	VPDPBUSD Z0, Z21, Z4 \
	VPDPBUSD Z1, Z21, Z5 \
	VPDPBUSD Z0, Z22, Z6 \
	VPDPBUSD Z1, Z22, Z7 \
	VPDPBUSD Z0, Z23, Z8 \
	VPDPBUSD Z1, Z23, Z9 \
	PREFETCHT1 off(DI)(R10*4) \
	PREFETCHT1 off(DI)(R14*1)

// Q8FLUSH: a row's group sums (ia: block A, ib: block B), corrected by
// −z·Σw, scaled by the weight scales times the row's step (qp), into
// its float accumulators fa, fb.
#define Q8FLUSH(qp, qz, ia, ib, fa, fb) \
	VPDPWSSD.BCST qz, Z24, ia \
	VPDPWSSD.BCST qz, Z25, ib \
	VMULPS.BCST qp, Z18, Z26 \
	VMULPS.BCST qp, Z19, Z27 \
	VCVTDQ2PS ia, ia \
	VFMADD231PS Z26, ia, fa \
	VCVTDQ2PS ib, ib \
	VFMADD231PS Z27, ib, fb

// Q8STORE: a row's sums plus the bias (plus dst), plus its outlier
// columns' values (at R9, when R12 is set) times their weights (Z18..Z25),
// into dst.
#define Q8STORE(fa, fb) \
	VADDPS Z0, fa, fa \
	VADDPS Z1, fb, fb \
	TESTQ BX, BX \
	JZ    3(PC) \
	VADDPS (DI), fa, fa \
	VADDPS 64(DI), fb, fb \
	TESTQ R12, R12 \
	JZ    14(PC) \
	VBROADCASTSS 0(R9), Z2 \
	VFMADD231PS Z18, Z2, fa \
	VFMADD231PS Z19, Z2, fb \
	VBROADCASTSS 4(R9), Z2 \
	VFMADD231PS Z20, Z2, fa \
	VFMADD231PS Z21, Z2, fb \
	VBROADCASTSS 8(R9), Z2 \
	VFMADD231PS Z22, Z2, fa \
	VFMADD231PS Z23, Z2, fb \
	VBROADCASTSS 12(R9), Z2 \
	VFMADD231PS Z24, Z2, fa \
	VFMADD231PS Z25, Z2, fb \
	ADDQ $16, R9 \
	VMOVUPS fa, (DI) \
	VMOVUPS fb, 64(DI) \
	DECQ CX \
	JZ   q8done \
	ADDQ R8, DI

// func qdot8VNNI(u *uint8, ustride int, w *int8, bstride int, s *float32, ws *int32, sstride int, groups int,
//	qp *uint32, bias, dst *float32, dstride, n int, xo, wt *float32, ncols int, add bool)
TEXT ·qdot8VNNI(SB), NOSPLIT, $0-129
	MOVQ u+0(FP), SI
	MOVQ ustride+8(FP), R8
	MOVQ w+16(FP), DI
	MOVQ bstride+24(FP), R10
	MOVQ s+32(FP), DX
	MOVQ ws+40(FP), BX
	MOVQ sstride+48(FP), R11
	MOVQ groups+56(FP), CX
	MOVQ qp+64(FP), AX
	LEAQ (R8)(R8*2), R9
	LEAQ (CX*8), R12 // a row of qp
	LEAQ (R12)(R12*2), R13
	LEAQ (R10)(R10*4), R14 // the pair of blocks after next: R10·4, R14 on
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	VPXORD Z14, Z14, Z14
	VPXORD Z15, Z15, Z15
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17

q8group:
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	Q8STEP(0)
	Q8STEP(64)
	Q8STEP(128)
	Q8STEP(192)
	Q8STEP(256)
	Q8STEP(320)
	Q8STEP(384)
	Q8STEP(448)
	Q8STEP(512)
	Q8STEP(576)
	Q8STEP(640)
	Q8STEP(704)
	Q8STEP(768)
	Q8STEP(832)
	Q8STEP(896)
	Q8STEP(960)
	ADDQ $64, SI
	ADDQ $1024, DI

	VMOVDQU32 (BX), Z24
	VMOVDQU32 (BX)(R11*1), Z25
	VMOVUPS (DX), Z18
	VMOVUPS (DX)(R11*1), Z19
	Q8FLUSH((AX), 4(AX), Z2, Z3, Z10, Z11)
	Q8FLUSH((AX)(R12*1), 4(AX)(R12*1), Z4, Z5, Z12, Z13)
	Q8FLUSH((AX)(R12*2), 4(AX)(R12*2), Z6, Z7, Z14, Z15)
	Q8FLUSH((AX)(R13*1), 4(AX)(R13*1), Z8, Z9, Z16, Z17)
	ADDQ $64, DX
	ADDQ $64, BX
	ADDQ $8, AX
	DECQ CX
	JNZ  q8group

	MOVQ bias+72(FP), R13
	MOVQ dst+80(FP), DI
	MOVQ dstride+88(FP), R8
	MOVQ n+96(FP), CX
	MOVBQZX add+128(FP), BX
	VMOVUPS (R13), Z0
	VMOVUPS 64(R13), Z1
	MOVQ ncols+120(FP), R12
	TESTQ R12, R12
	JZ   q8store
	MOVQ xo+104(FP), R9
	MOVQ wt+112(FP), R10
	LEAQ (R8)(R8*2), R11
	VMOVUPS (R10), Z18
	VMOVUPS 64(R10), Z19
	VMOVUPS (R10)(R8*1), Z20
	VMOVUPS 64(R10)(R8*1), Z21
	VMOVUPS (R10)(R8*2), Z22
	VMOVUPS 64(R10)(R8*2), Z23
	VMOVUPS (R10)(R11*1), Z24
	VMOVUPS 64(R10)(R11*1), Z25

q8store:
	Q8STORE(Z10, Z11)
	Q8STORE(Z12, Z13)
	Q8STORE(Z14, Z15)
	Q8STORE(Z16, Z17)

q8done:
	VZEROUPPER
	RET

DATA q8perm<>+0(SB)/4, $0
DATA q8perm<>+4(SB)/4, $4
DATA q8perm<>+8(SB)/4, $1
DATA q8perm<>+12(SB)/4, $5
DATA q8perm<>+16(SB)/4, $2
DATA q8perm<>+20(SB)/4, $6
DATA q8perm<>+24(SB)/4, $3
DATA q8perm<>+28(SB)/4, $7
GLOBL q8perm<>(SB), RODATA|NOPTR, $32

// func quant8AVX2(u *uint8, x *float32, groups int, qp *uint32, levels float32)
// quantGroup8 for each group of 64 floats at x, to 0..levels (R14).
TEXT ·quant8AVX2(SB), NOSPLIT, $0-36
	MOVQ u+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ groups+16(FP), CX
	MOVQ qp+24(FP), DX
	CVTTSS2SL levels+32(FP), R14
	VXORPS Y15, Y15, Y15

q8qgroup:
	VMOVUPS 0(SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS 64(SI), Y2
	VMOVUPS 96(SI), Y3
	VMOVUPS 128(SI), Y4
	VMOVUPS 160(SI), Y5
	VMOVUPS 192(SI), Y6
	VMOVUPS 224(SI), Y7
	VMINPS Y0, Y15, Y8
	VMAXPS Y0, Y15, Y9
	VMINPS Y1, Y8, Y8
	VMAXPS Y1, Y9, Y9
	VMINPS Y2, Y8, Y8
	VMAXPS Y2, Y9, Y9
	VMINPS Y3, Y8, Y8
	VMAXPS Y3, Y9, Y9
	VMINPS Y4, Y8, Y8
	VMAXPS Y4, Y9, Y9
	VMINPS Y5, Y8, Y8
	VMAXPS Y5, Y9, Y9
	VMINPS Y6, Y8, Y8
	VMAXPS Y6, Y9, Y9
	VMINPS Y7, Y8, Y8
	VMAXPS Y7, Y9, Y9
	VEXTRACTF128 $1, Y8, X10
	VMINPS X10, X8, X8
	VPERMILPS $0x4e, X8, X10
	VMINPS X10, X8, X8
	VPERMILPS $0xb1, X8, X10
	VMINPS X10, X8, X8 // lo
	VEXTRACTF128 $1, Y9, X10
	VMAXPS X10, X9, X9
	VPERMILPS $0x4e, X9, X10
	VMAXPS X10, X9, X9
	VPERMILPS $0xb1, X9, X10
	VMAXPS X10, X9, X9 // hi
	VSUBSS X8, X9, X11 // d = hi - lo
	VXORPS X12, X12, X12 // step
	VXORPS X13, X13, X13 // 255/d
	VUCOMISS X15, X11
	JEQ  q8qzero
	VMOVSS levels+32(FP), X14
	VDIVSS X14, X11, X12
	VDIVSS X11, X14, X13

q8qzero:
	VSUBSS X8, X15, X10 // -lo
	VMULSS X13, X10, X10
	CVTSS2SL X10, R12 // z
	VMOVSS X12, (DX)
	MOVL R12, R13
	NEGL R13
	ANDL $0xffff, R13
	MOVL R13, 4(DX)
	VBROADCASTSS X13, Y13
	VMOVD R12, X14
	VPBROADCASTD X14, Y14
	VMOVDQU q8perm<>+0(SB), Y8
	VMOVD R14, X9
	VPBROADCASTB X9, Y9 // the largest u

	VMULPS Y13, Y0, Y0
	VMULPS Y13, Y1, Y1
	VMULPS Y13, Y2, Y2
	VMULPS Y13, Y3, Y3
	VMULPS Y13, Y4, Y4
	VMULPS Y13, Y5, Y5
	VMULPS Y13, Y6, Y6
	VMULPS Y13, Y7, Y7
	VCVTPS2DQ Y0, Y0
	VCVTPS2DQ Y1, Y1
	VCVTPS2DQ Y2, Y2
	VCVTPS2DQ Y3, Y3
	VCVTPS2DQ Y4, Y4
	VCVTPS2DQ Y5, Y5
	VCVTPS2DQ Y6, Y6
	VCVTPS2DQ Y7, Y7
	VPADDD Y14, Y0, Y0
	VPADDD Y14, Y1, Y1
	VPADDD Y14, Y2, Y2
	VPADDD Y14, Y3, Y3
	VPADDD Y14, Y4, Y4
	VPADDD Y14, Y5, Y5
	VPADDD Y14, Y6, Y6
	VPADDD Y14, Y7, Y7
	VPACKSSDW Y1, Y0, Y0
	VPACKSSDW Y3, Y2, Y2
	VPACKUSWB Y2, Y0, Y0
	VPERMD Y0, Y8, Y0
	VPMINUB Y9, Y0, Y0
	VPACKSSDW Y5, Y4, Y4
	VPACKSSDW Y7, Y6, Y6
	VPACKUSWB Y6, Y4, Y4
	VPERMD Y4, Y8, Y4
	VPMINUB Y9, Y4, Y4
	VMOVDQU Y0, (DI)
	VMOVDQU Y4, 32(DI)
	ADDQ $256, SI
	ADDQ $64, DI
	ADDQ $8, DX
	DECQ CX
	JNZ  q8qgroup
	VZEROUPPER
	RET

// The order quant8AVX512's packs leave the 64 bytes of a group in, as
// 16 dwords of 4 inputs: VPACKSSDW and VPACKUSWB work within each 128-bit
// lane, so lane l holds inputs 4l..4l+3 of each of the four 16-input
// loads in turn; dword m of the group (inputs 4m..4m+3) is dword
// 4·(m mod 4) + m/4 of the packed register.
DATA q8perm512<>+0(SB)/4, $0
DATA q8perm512<>+4(SB)/4, $4
DATA q8perm512<>+8(SB)/4, $8
DATA q8perm512<>+12(SB)/4, $12
DATA q8perm512<>+16(SB)/4, $1
DATA q8perm512<>+20(SB)/4, $5
DATA q8perm512<>+24(SB)/4, $9
DATA q8perm512<>+28(SB)/4, $13
DATA q8perm512<>+32(SB)/4, $2
DATA q8perm512<>+36(SB)/4, $6
DATA q8perm512<>+40(SB)/4, $10
DATA q8perm512<>+44(SB)/4, $14
DATA q8perm512<>+48(SB)/4, $3
DATA q8perm512<>+52(SB)/4, $7
DATA q8perm512<>+56(SB)/4, $11
DATA q8perm512<>+60(SB)/4, $15
GLOBL q8perm512<>(SB), RODATA|NOPTR, $64

// q8qpidx interleaves a block's 16 steps (table 1) and −z (table 2)
// into qp's pairs, groups 0..7 then 8..15 (VPERMT2D).
DATA q8qpidx<>+0(SB)/4, $0
DATA q8qpidx<>+4(SB)/4, $16
DATA q8qpidx<>+8(SB)/4, $1
DATA q8qpidx<>+12(SB)/4, $17
DATA q8qpidx<>+16(SB)/4, $2
DATA q8qpidx<>+20(SB)/4, $18
DATA q8qpidx<>+24(SB)/4, $3
DATA q8qpidx<>+28(SB)/4, $19
DATA q8qpidx<>+32(SB)/4, $4
DATA q8qpidx<>+36(SB)/4, $20
DATA q8qpidx<>+40(SB)/4, $5
DATA q8qpidx<>+44(SB)/4, $21
DATA q8qpidx<>+48(SB)/4, $6
DATA q8qpidx<>+52(SB)/4, $22
DATA q8qpidx<>+56(SB)/4, $7
DATA q8qpidx<>+60(SB)/4, $23
DATA q8qpidx<>+64(SB)/4, $8
DATA q8qpidx<>+68(SB)/4, $24
DATA q8qpidx<>+72(SB)/4, $9
DATA q8qpidx<>+76(SB)/4, $25
DATA q8qpidx<>+80(SB)/4, $10
DATA q8qpidx<>+84(SB)/4, $26
DATA q8qpidx<>+88(SB)/4, $11
DATA q8qpidx<>+92(SB)/4, $27
DATA q8qpidx<>+96(SB)/4, $12
DATA q8qpidx<>+100(SB)/4, $28
DATA q8qpidx<>+104(SB)/4, $13
DATA q8qpidx<>+108(SB)/4, $29
DATA q8qpidx<>+112(SB)/4, $14
DATA q8qpidx<>+116(SB)/4, $30
DATA q8qpidx<>+120(SB)/4, $15
DATA q8qpidx<>+124(SB)/4, $31
GLOBL q8qpidx<>(SB), RODATA|NOPTR, $128

// func quant8AVX512(u *uint8, x *float32, groups int, qp *uint32, levels float32)
// quant8AVX2 16 values to a register, in blocks of up to 16 groups, in
// three passes, so that no group's long chain (its range, two divisions,
// its rounding) holds up the next group's:
//   - each group's range: four loads, three minimums and maximums of
//     registers, then with zero; the largest negated, so that one chain
//     of minimums across lanes gives the smallest (lane 0) and the
//     largest (lane 8); into the frame (lo at 0, −hi at 64);
//   - the block's steps, 1/step and zero points 16 groups to a register
//     (the frame's inv at 128, z at 192; qp by a masked store);
//   - each group's rounding: four multiplies and conversions, two
//     VPACKSSDW, the zero point added as int16 (the sums are small:
//     |x/step| <= levels), one VPACKUSWB, one VPERMD (q8perm512) and one
//     VPMINUB.
// The smallest and largest values do not depend on the order they are
// taken in (a minimum of −0 for +0, or a largest of −0, gives the same
// range and zero point), the rest is lane by lane, each lane the
// operation quant8AVX2 does (a zero range, or NaN, gives step and 1/step
// 0 as its branch does): the same bits.
TEXT ·quant8AVX512(SB), NOSPLIT, $256-36
	MOVQ u+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ groups+16(FP), CX
	MOVQ qp+24(FP), DX
	CVTTSS2SL levels+32(FP), R14
	VBROADCASTSS levels+32(FP), Z25
	VPXORD Z31, Z31, Z31
	VMOVDQU32 q8perm512<>+0(SB), Z30
	VMOVD R14, X9
	VPBROADCASTB X9, Z29 // the largest u
	MOVL $0x80000000, AX
	VPBROADCASTD AX, Z26 // the sign
	MOVL $0xffff, AX
	VPBROADCASTD AX, Z24
	VMOVDQU32 q8qpidx<>+0(SB), Z22
	VMOVDQU32 q8qpidx<>+64(SB), Z23

q8zblock:
	MOVQ CX, R9
	CMPQ R9, $16
	JLE  q8zn
	MOVQ $16, R9 // groups in this block

q8zn:
	MOVQ SI, R10
	XORQ BX, BX

q8zrange:
	VMOVUPS 0(SI), Z0
	VMOVUPS 64(SI), Z1
	VMOVUPS 128(SI), Z2
	VMOVUPS 192(SI), Z3
	VMINPS Z1, Z0, Z16
	VMAXPS Z1, Z0, Z17
	VMINPS Z3, Z2, Z18
	VMAXPS Z3, Z2, Z19
	VMINPS Z18, Z16, Z16
	VMAXPS Z19, Z17, Z17
	VMINPS Z31, Z16, Z16
	VMAXPS Z31, Z17, Z17
	VPXORD Z26, Z17, Z17 // −max
	VSHUFF64X2 $0x44, Z17, Z16, Z18
	VSHUFF64X2 $0xee, Z17, Z16, Z19
	VMINPS Z19, Z18, Z18 // lanes 0..7 min, 8..15 −max
	VSHUFF64X2 $0xb1, Z18, Z18, Z19
	VMINPS Z19, Z18, Z18
	VPERMILPS $0x4e, Z18, Z19
	VMINPS Z19, Z18, Z18
	VPERMILPS $0xb1, Z18, Z19
	VMINPS Z19, Z18, Z18
	VMOVSS X18, 0(SP)(BX*4) // lo
	VEXTRACTF32X4 $2, Z18, X19
	VMOVSS X19, 64(SP)(BX*4) // −hi
	ADDQ $256, SI
	INCQ BX
	CMPQ BX, R9
	JLT  q8zrange

	// The block's steps and zero points: K4 its groups, K5 and K6 its
	// pairs of qp in the two halves.
	MOVQ CX, R11
	MOVQ R9, CX
	MOVL $1, AX
	SHLL CX, AX
	DECL AX
	KMOVW AX, K4
	SHLQ $1, CX
	MOVQ $1, AX
	SHLQ CX, AX
	DECQ AX
	KMOVW AX, K5
	SHRQ $16, AX
	KMOVW AX, K6
	MOVQ R11, CX
	VMOVUPS.Z 0(SP), K4, Z0 // lo
	VMOVUPS.Z 64(SP), K4, Z1
	VPXORD Z26, Z1, Z1 // hi
	VSUBPS Z0, Z1, Z2 // d = hi - lo
	VCMPPS $0x0c, Z31, Z2, K3 // d != 0 (and not NaN)
	VDIVPS.Z Z25, Z2, K3, Z3 // step = d/levels
	VDIVPS.Z Z2, Z25, K3, Z4 // levels/d
	VSUBPS Z0, Z31, Z5 // -lo
	VMULPS Z4, Z5, Z5
	VCVTPS2DQ Z5, Z5 // z
	VMOVUPS Z4, 128(SP)
	VMOVDQU32 Z5, 192(SP)
	VPSUBD Z5, Z31, Z6
	VPANDD Z24, Z6, Z6 // −z, the low half
	VMOVAPS Z3, Z7
	VPERMT2D Z6, Z22, Z7
	VMOVAPS Z3, Z8
	VPERMT2D Z6, Z23, Z8
	VMOVDQU32 Z7, K5, 0(DX)
	VMOVDQU32 Z8, K6, 64(DX)
	LEAQ (DX)(R9*8), DX

	MOVQ R10, SI
	XORQ BX, BX

q8zround:
	VBROADCASTSS 128(SP)(BX*4), Z27
	VPBROADCASTW 192(SP)(BX*4), Z28
	VMULPS 0(SI), Z27, Z0
	VMULPS 64(SI), Z27, Z1
	VMULPS 128(SI), Z27, Z2
	VMULPS 192(SI), Z27, Z3
	VCVTPS2DQ Z0, Z0
	VCVTPS2DQ Z1, Z1
	VCVTPS2DQ Z2, Z2
	VCVTPS2DQ Z3, Z3
	VPACKSSDW Z1, Z0, Z0
	VPACKSSDW Z3, Z2, Z2
	VPADDW Z28, Z0, Z0
	VPADDW Z28, Z2, Z2
	VPACKUSWB Z2, Z0, Z0
	VPERMD Z0, Z30, Z0
	VPMINUB Z29, Z0, Z0
	VMOVDQU32 Z0, (DI)
	ADDQ $256, SI
	ADDQ $64, DI
	INCQ BX
	CMPQ BX, R9
	JLT  q8zround
	SUBQ R9, CX
	JNZ  q8zblock
	VZEROUPPER
	RET

// func layerNormAVX2(dst, src *float32, d int, scale, bias *float32, eps float64)
// LayerNorm of one row of d floats (a multiple of 8): the mean and the
// variance summed in float64 (four lanes, two accumulators), then
// float32((x-mean)·inv)·scale + bias, as the Go loop.
TEXT ·layerNormAVX2(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ d+16(FP), CX
	MOVQ scale+24(FP), R8
	MOVQ bias+32(FP), R9
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	XORQ AX, AX

lnsum:
	VCVTPS2PD (SI)(AX*4), Y2
	VCVTPS2PD 16(SI)(AX*4), Y3
	VADDPD Y2, Y0, Y0
	VADDPD Y3, Y1, Y1
	ADDQ $8, AX
	CMPQ AX, CX
	JLT  lnsum
	VADDPD Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPD X1, X0, X0
	VHADDPD X0, X0, X0
	CVTSQ2SD CX, X4
	VDIVSD X4, X0, X0 // mean
	VBROADCASTSD X0, Y5
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	XORQ AX, AX

lnvar:
	VCVTPS2PD (SI)(AX*4), Y2
	VCVTPS2PD 16(SI)(AX*4), Y3
	VSUBPD Y5, Y2, Y2
	VSUBPD Y5, Y3, Y3
	VFMADD231PD Y2, Y2, Y0
	VFMADD231PD Y3, Y3, Y1
	ADDQ $8, AX
	CMPQ AX, CX
	JLT  lnvar
	VADDPD Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPD X1, X0, X0
	VHADDPD X0, X0, X0
	VDIVSD X4, X0, X0 // variance
	VADDSD eps+40(FP), X0, X0
	VSQRTSD X0, X0, X0
	MOVQ $0x3ff0000000000000, DX
	VMOVQ DX, X1
	VDIVSD X0, X1, X1 // inv
	VBROADCASTSD X1, Y6
	XORQ AX, AX

lnout:
	VCVTPS2PD (SI)(AX*4), Y2
	VCVTPS2PD 16(SI)(AX*4), Y3
	VSUBPD Y5, Y2, Y2
	VSUBPD Y5, Y3, Y3
	VMULPD Y6, Y2, Y2
	VMULPD Y6, Y3, Y3
	VCVTPD2PSY Y2, X2
	VCVTPD2PSY Y3, X3
	VINSERTF128 $1, X3, Y2, Y2
	VMULPS (R8)(AX*4), Y2, Y2
	VADDPS (R9)(AX*4), Y2, Y2
	VMOVUPS Y2, (DI)(AX*4)
	ADDQ $8, AX
	CMPQ AX, CX
	JLT  lnout
	VZEROUPPER
	RET

// LNRED: the float64 sum of Z(r)'s eight lanes into X(r)'s low lane, in
// layerNormAVX2's order (lanes 0..3 are its first accumulator, 4..7 its
// second): the halves added lane by lane, then (0+2)+(1+3).
#define LNRED(z, y, x) \
	VEXTRACTF64X4 $1, z, Y8 \
	VADDPD Y8, y, y \
	VEXTRACTF128 $1, y, X8 \
	VADDPD X8, x, x \
	VHADDPD x, x, x

// func layerNorm4AVX512(dst, src *float32, d int, scale, bias *float32, eps float64, tmp *float64)
// layerNormAVX2 over four rows of d floats (d a multiple of 16), the rows
// side by side (dst may be src): each row's float64 sums in one register
// of eight lanes (layerNormAVX2's two accumulators of four), the four
// rows' chains of additions interleaved, so that their latency overlaps
// (a row's sums are a chain of d/8 dependent additions: most of
// layerNormAVX2's time); then each row's output 16 values a step. The
// rows in float64 are kept in tmp (4·d), each value converted once, then
// less its mean (a conversion takes both of the two ports AVX-512 has
// for a step). The same operations on each lane in the same order: the
// same bits.
TEXT ·layerNorm4AVX512(SB), NOSPLIT, $0-56
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ d+16(FP), CX
	MOVQ scale+24(FP), R8
	MOVQ bias+32(FP), R9
	MOVQ tmp+48(FP), DX
	LEAQ (CX*4), R10 // a row
	LEAQ (R10)(R10*2), R11 // three rows
	LEAQ (CX*8), R12 // a row of tmp
	LEAQ (R12)(R12*2), R13 // three
	VPXORQ Z0, Z0, Z0
	VPXORQ Z1, Z1, Z1
	VPXORQ Z2, Z2, Z2
	VPXORQ Z3, Z3, Z3
	MOVQ SI, BX
	MOVQ DX, R14
	MOVQ CX, AX

ln4sum:
	VCVTPS2PD (BX), Z4
	VCVTPS2PD (BX)(R10*1), Z5
	VCVTPS2PD (BX)(R10*2), Z6
	VCVTPS2PD (BX)(R11*1), Z7
	VMOVUPD Z4, (R14)
	VMOVUPD Z5, (R14)(R12*1)
	VMOVUPD Z6, (R14)(R12*2)
	VMOVUPD Z7, (R14)(R13*1)
	VADDPD Z4, Z0, Z0
	VADDPD Z5, Z1, Z1
	VADDPD Z6, Z2, Z2
	VADDPD Z7, Z3, Z3
	ADDQ $32, BX
	ADDQ $64, R14
	SUBQ $8, AX
	JNZ  ln4sum
	LNRED(Z0, Y0, X0)
	LNRED(Z1, Y1, X1)
	LNRED(Z2, Y2, X2)
	LNRED(Z3, Y3, X3)
	CVTSQ2SD CX, X9 // d
	VDIVSD X9, X0, X0 // the means
	VDIVSD X9, X1, X1
	VDIVSD X9, X2, X2
	VDIVSD X9, X3, X3
	VBROADCASTSD X0, Z16
	VBROADCASTSD X1, Z17
	VBROADCASTSD X2, Z18
	VBROADCASTSD X3, Z19
	VPXORQ Z0, Z0, Z0
	VPXORQ Z1, Z1, Z1
	VPXORQ Z2, Z2, Z2
	VPXORQ Z3, Z3, Z3
	MOVQ DX, R14
	MOVQ CX, AX

ln4var:
	VMOVUPD (R14), Z4
	VMOVUPD (R14)(R12*1), Z5
	VMOVUPD (R14)(R12*2), Z6
	VMOVUPD (R14)(R13*1), Z7
	VSUBPD Z16, Z4, Z4
	VSUBPD Z17, Z5, Z5
	VSUBPD Z18, Z6, Z6
	VSUBPD Z19, Z7, Z7
	VMOVUPD Z4, (R14)
	VMOVUPD Z5, (R14)(R12*1)
	VMOVUPD Z6, (R14)(R12*2)
	VMOVUPD Z7, (R14)(R13*1)
	VFMADD231PD Z4, Z4, Z0
	VFMADD231PD Z5, Z5, Z1
	VFMADD231PD Z6, Z6, Z2
	VFMADD231PD Z7, Z7, Z3
	ADDQ $64, R14
	SUBQ $8, AX
	JNZ  ln4var
	LNRED(Z0, Y0, X0)
	LNRED(Z1, Y1, X1)
	LNRED(Z2, Y2, X2)
	LNRED(Z3, Y3, X3)
	VMOVSD eps+40(FP), X10
	MOVQ $0x3ff0000000000000, AX
	VMOVQ AX, X11 // 1
	VDIVSD X9, X0, X0 // the variances
	VDIVSD X9, X1, X1
	VDIVSD X9, X2, X2
	VDIVSD X9, X3, X3
	VADDSD X10, X0, X0
	VADDSD X10, X1, X1
	VADDSD X10, X2, X2
	VADDSD X10, X3, X3
	VSQRTSD X0, X0, X0
	VSQRTSD X1, X1, X1
	VSQRTSD X2, X2, X2
	VSQRTSD X3, X3, X3
	VDIVSD X0, X11, X0 // inv
	VDIVSD X1, X11, X1
	VDIVSD X2, X11, X2
	VDIVSD X3, X11, X3
	VBROADCASTSD X0, Z20
	VBROADCASTSD X1, Z21
	VBROADCASTSD X2, Z22
	VBROADCASTSD X3, Z23
	MOVQ $4, BX

ln4row:
	// A row's output (x-mean in tmp at DX, inv Z20):
	// float32((x-mean)·inv), times scale, plus bias.
	XORQ AX, AX

ln4out:
	VMULPD (DX)(AX*2), Z20, Z4
	VMULPD 64(DX)(AX*2), Z20, Z5
	VCVTPD2PS Z4, Y4
	VCVTPD2PS Z5, Y5
	VINSERTF64X4 $1, Y5, Z4, Z4
	VMULPS (R8)(AX*1), Z4, Z4
	VADDPS (R9)(AX*1), Z4, Z4
	VMOVUPS Z4, (DI)(AX*1)
	ADDQ $64, AX
	CMPQ AX, R10
	JLT  ln4out
	ADDQ R12, DX
	ADDQ R10, DI
	VMOVAPD Z21, Z20
	VMOVAPD Z22, Z21
	VMOVAPD Z23, Z22
	DECQ BX
	JNZ  ln4row
	VZEROUPPER
	RET

// func scoresAVX2(dst, q, kt *float32, tp int)
// dst[j] = Σ_c q[c]·kt[c·tp+j] over c < 32, for j < tp (a multiple of
// 8): a query's scores against a head's keys, transposed (kt, 32 rows of
// tp). Four accumulators take c mod 4 and are summed ((a0+a1)+(a2+a3)).
TEXT ·scoresAVX2(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ q+8(FP), SI
	MOVQ kt+16(FP), DX
	MOVQ tp+24(FP), CX
	LEAQ (CX*4), R8 // a row of kt

scchunk:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	MOVQ DX, AX
	XORQ BX, BX

scstep:
	VBROADCASTSS 0(SI)(BX*4), Y4
	VFMADD231PS (AX), Y4, Y0
	ADDQ R8, AX
	VBROADCASTSS 4(SI)(BX*4), Y5
	VFMADD231PS (AX), Y5, Y1
	ADDQ R8, AX
	VBROADCASTSS 8(SI)(BX*4), Y6
	VFMADD231PS (AX), Y6, Y2
	ADDQ R8, AX
	VBROADCASTSS 12(SI)(BX*4), Y7
	VFMADD231PS (AX), Y7, Y3
	ADDQ R8, AX
	ADDQ $4, BX
	CMPQ BX, $32
	JLT  scstep
	VADDPS Y1, Y0, Y0
	VADDPS Y3, Y2, Y2
	VADDPS Y2, Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, DI
	ADDQ $32, DX
	SUBQ $8, CX
	JNZ  scchunk
	VZEROUPPER
	RET

// func mixAVX2(dst, p, v *float32, vstride, t int)
// dst[c] = Σ_j p[j]·v[j·vstride+c] over j < t, for c < 32: a query's
// attention weights times a head's values (vstride floats apart). Even
// and odd j build apart and are summed.
TEXT ·mixAVX2(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ p+8(FP), SI
	MOVQ v+16(FP), DX
	MOVQ vstride+24(FP), R8
	SHLQ $2, R8
	MOVQ t+32(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7

mxpair:
	CMPQ CX, $2
	JLT  mxlast
	VBROADCASTSS (SI), Y8
	VFMADD231PS (DX), Y8, Y0
	VFMADD231PS 32(DX), Y8, Y1
	VFMADD231PS 64(DX), Y8, Y2
	VFMADD231PS 96(DX), Y8, Y3
	ADDQ R8, DX
	VBROADCASTSS 4(SI), Y9
	VFMADD231PS (DX), Y9, Y4
	VFMADD231PS 32(DX), Y9, Y5
	VFMADD231PS 64(DX), Y9, Y6
	VFMADD231PS 96(DX), Y9, Y7
	ADDQ R8, DX
	ADDQ $8, SI
	SUBQ $2, CX
	JMP  mxpair

mxlast:
	TESTQ CX, CX
	JZ    mxdone
	VBROADCASTSS (SI), Y8
	VFMADD231PS (DX), Y8, Y0
	VFMADD231PS 32(DX), Y8, Y1
	VFMADD231PS 64(DX), Y8, Y2
	VFMADD231PS 96(DX), Y8, Y3

mxdone:
	VADDPS Y4, Y0, Y0
	VADDPS Y5, Y1, Y1
	VADDPS Y6, Y2, Y2
	VADDPS Y7, Y3, Y3
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	VZEROUPPER
	RET

// func scaleMaxAVX2(x *float32, n int, scale float32) float32
// x[i] *= scale over n values (a multiple of 8); returns their largest.
TEXT ·scaleMaxAVX2(SB), NOSPLIT, $0-28
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	VBROADCASTSS scale+16(FP), Y1
	MOVL $0xff7fffff, AX // -MaxFloat32
	VMOVD AX, X0
	VBROADCASTSS X0, Y0

smloop:
	VMULPS (SI), Y1, Y2
	VMOVUPS Y2, (SI)
	VMAXPS Y2, Y0, Y0
	ADDQ $32, SI
	SUBQ $8, CX
	JNZ  smloop
	VEXTRACTF128 $1, Y0, X1
	VMAXPS X1, X0, X0
	VPERMILPS $0x4e, X0, X1
	VMAXPS X1, X0, X0
	VPERMILPS $0xb1, X0, X1
	VMAXPS X1, X0, X0
	MOVSS X0, ret+24(FP)
	VZEROUPPER
	RET

// func mulAVX2(x *float32, n int, s float32)
// x[i] *= s over n values, a multiple of 8.
TEXT ·mulAVX2(SB), NOSPLIT, $0-20
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	VBROADCASTSS s+16(FP), Y1

muloop:
	VMULPS (SI), Y1, Y2
	VMOVUPS Y2, (SI)
	ADDQ $32, SI
	SUBQ $8, CX
	JNZ  muloop
	VZEROUPPER
	RET
