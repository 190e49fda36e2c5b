#include "textflag.h"

// GELU's constants (see gelu.go), eight copies each, so that each is
// a 32-byte memory operand.
#define K8(off, v) \
	DATA geluk<>+(off+0)(SB)/4, $v \
	DATA geluk<>+(off+4)(SB)/4, $v \
	DATA geluk<>+(off+8)(SB)/4, $v \
	DATA geluk<>+(off+12)(SB)/4, $v \
	DATA geluk<>+(off+16)(SB)/4, $v \
	DATA geluk<>+(off+20)(SB)/4, $v \
	DATA geluk<>+(off+24)(SB)/4, $v \
	DATA geluk<>+(off+28)(SB)/4, $v

K8(0, -5.7)
K8(32, 5.7)
K8(64, 0.5)
K8(96, -0.5)
K8(128, 2.1577824e-08)  // P5
K8(160, 6.373649e-06)   // P4
K8(192, 0.00017938516)  // P3
K8(224, 0.0047407784)   // P2
K8(256, 0.03494081)     // P1
K8(288, 0.3989422)      // P0
K8(320, 1.1648486e-06)  // Q5
K8(352, 7.67624e-05)    // Q4
K8(384, 0.0019445107)   // Q3
K8(416, 0.02926041)     // Q2
K8(448, 0.2542491)      // Q1
K8(480, 1.0)            // Q0
GLOBL geluk<>(SB), RODATA|NOPTR, $512

// GELUR: in place on Y(x), temporaries t, s, p, q: x·(1/2 + R(t)) as
// gelu1 computes it (every multiply and add rounded on its own).
#define GELUR(x, t, s, p, q) \
	VMAXPS Y15, x, t \
	VMINPS Y14, t, t \
	VMULPS t, t, s \
	VMULPS geluk<>+128(SB), s, p \
	VMULPS geluk<>+320(SB), s, q \
	VADDPS geluk<>+160(SB), p, p \
	VADDPS geluk<>+352(SB), q, q \
	VMULPS s, p, p \
	VMULPS s, q, q \
	VADDPS geluk<>+192(SB), p, p \
	VADDPS geluk<>+384(SB), q, q \
	VMULPS s, p, p \
	VMULPS s, q, q \
	VADDPS geluk<>+224(SB), p, p \
	VADDPS geluk<>+416(SB), q, q \
	VMULPS s, p, p \
	VMULPS s, q, q \
	VADDPS geluk<>+256(SB), p, p \
	VADDPS geluk<>+448(SB), q, q \
	VMULPS s, p, p \
	VMULPS s, q, q \
	VADDPS geluk<>+288(SB), p, p \
	VADDPS geluk<>+480(SB), q, q \
	VMULPS t, p, p \
	VDIVPS q, p, p \
	VMINPS Y13, p, p \
	VMAXPS Y12, p, p \
	VADDPS Y13, p, p \
	VMULPS p, x, x

// func geluAVX2(x *float32, n int)
// x[i] = GELU(x[i]) over n values, n a multiple of 8: gelu1's
// operations, 8 values at a time, 16 a round.
TEXT ·geluAVX2(SB), NOSPLIT, $0-16
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	VMOVUPS geluk<>+0(SB), Y15
	VMOVUPS geluk<>+32(SB), Y14
	VMOVUPS geluk<>+64(SB), Y13
	VMOVUPS geluk<>+96(SB), Y12
	CMPQ CX, $16
	JLT  gtail

gloop:
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y5
	GELUR(Y0, Y1, Y2, Y3, Y4)
	GELUR(Y5, Y6, Y7, Y8, Y9)
	VMOVUPS Y0, (SI)
	VMOVUPS Y5, 32(SI)
	ADDQ $64, SI
	SUBQ $16, CX
	CMPQ CX, $16
	JGE  gloop

gtail:
	TESTQ CX, CX
	JZ   gdone
	VMOVUPS (SI), Y0
	GELUR(Y0, Y1, Y2, Y3, Y4)
	VMOVUPS Y0, (SI)

gdone:
	VZEROUPPER
	RET

// GELUZ is GELUR on 16 values (Z registers), the constants broadcast
// from the first of their eight copies.
#define GELUZ(x, t, s, p, q) \
	VMAXPS Z15, x, t \
	VMINPS Z14, t, t \
	VMULPS t, t, s \
	VMULPS.BCST geluk<>+128(SB), s, p \
	VMULPS.BCST geluk<>+320(SB), s, q \
	VADDPS.BCST geluk<>+160(SB), p, p \
	VADDPS.BCST geluk<>+352(SB), q, q \
	VMULPS s, p, p \
	VMULPS s, q, q \
	VADDPS.BCST geluk<>+192(SB), p, p \
	VADDPS.BCST geluk<>+384(SB), q, q \
	VMULPS s, p, p \
	VMULPS s, q, q \
	VADDPS.BCST geluk<>+224(SB), p, p \
	VADDPS.BCST geluk<>+416(SB), q, q \
	VMULPS s, p, p \
	VMULPS s, q, q \
	VADDPS.BCST geluk<>+256(SB), p, p \
	VADDPS.BCST geluk<>+448(SB), q, q \
	VMULPS s, p, p \
	VMULPS s, q, q \
	VADDPS.BCST geluk<>+288(SB), p, p \
	VADDPS.BCST geluk<>+480(SB), q, q \
	VMULPS t, p, p \
	VDIVPS q, p, p \
	VMINPS Z13, p, p \
	VMAXPS Z12, p, p \
	VADDPS Z13, p, p \
	VMULPS p, x, x

// func geluAVX512(x *float32, n int)
// geluAVX2 16 values at a time, 32 a round; n a multiple of 32.
TEXT ·geluAVX512(SB), NOSPLIT, $0-16
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	VBROADCASTSS geluk<>+0(SB), Z15
	VBROADCASTSS geluk<>+32(SB), Z14
	VBROADCASTSS geluk<>+64(SB), Z13
	VBROADCASTSS geluk<>+96(SB), Z12

zloop:
	VMOVUPS (SI), Z0
	VMOVUPS 64(SI), Z5
	GELUZ(Z0, Z1, Z2, Z3, Z4)
	GELUZ(Z5, Z6, Z7, Z8, Z9)
	VMOVUPS Z0, (SI)
	VMOVUPS Z5, 64(SI)
	ADDQ $128, SI
	SUBQ $32, CX
	JNZ  zloop
	VZEROUPPER
	RET
