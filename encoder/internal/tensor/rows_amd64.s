#include "textflag.h"

// func add3AVX2(dst, a, b, c *float32, n int)
// dst[i] = (a[i] + b[i]) + c[i] over n values, a multiple of 8.
TEXT ·add3AVX2(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), BX
	MOVQ c+24(FP), DX
	MOVQ n+32(FP), CX
	XORQ AX, AX

add3loop:
	VMOVUPS (SI)(AX*4), Y0
	VADDPS (BX)(AX*4), Y0, Y0
	VADDPS (DX)(AX*4), Y0, Y0
	VMOVUPS Y0, (DI)(AX*4)
	ADDQ $8, AX
	CMPQ AX, CX
	JLT  add3loop
	VZEROUPPER
	RET

// func addF64AVX2(acc *float64, x *float32, n int)
// acc[i] += float64(x[i]) over n values, a multiple of 8.
TEXT ·addF64AVX2(SB), NOSPLIT, $0-24
	MOVQ acc+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	XORQ AX, AX

addf64loop:
	VCVTPS2PD (SI)(AX*4), Y0
	VCVTPS2PD 16(SI)(AX*4), Y1
	VADDPD (DI)(AX*8), Y0, Y0
	VADDPD 32(DI)(AX*8), Y1, Y1
	VMOVUPD Y0, (DI)(AX*8)
	VMOVUPD Y1, 32(DI)(AX*8)
	ADDQ $8, AX
	CMPQ AX, CX
	JLT  addf64loop
	VZEROUPPER
	RET

// func scaleF64AVX2(dst *float32, src *float64, n int, s float64)
// dst[i] = float32(src[i]·s) over n values, a multiple of 8.
TEXT ·scaleF64AVX2(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSD s+24(FP), Y2
	XORQ AX, AX

scalef64loop:
	VMULPD (SI)(AX*8), Y2, Y0
	VMULPD 32(SI)(AX*8), Y2, Y1
	VCVTPD2PSY Y0, X0
	VCVTPD2PSY Y1, X1
	VMOVUPS X0, (DI)(AX*4)
	VMOVUPS X1, 16(DI)(AX*4)
	ADDQ $8, AX
	CMPQ AX, CX
	JLT  scalef64loop
	VZEROUPPER
	RET
