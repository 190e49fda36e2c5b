#include "textflag.h"

// HSUM reduces the eight floats of Y to one and stores it at off(R9).
#define HSUM(Y, X, off) \
	VEXTRACTF128 $1, Y, X14 \
	VADDPS X14, X, X \
	VHADDPS X, X, X \
	VHADDPS X, X, X \
	MOVSS X, off(R9)

// func dot4x2AVX2(x0, x1, x2, x3, w0, w1 *float32, n int, out *[8]float32)
// out[2r+c] = dot(x_r, w_c) over n floats; n is a multiple of 8.
TEXT ·dot4x2AVX2(SB), NOSPLIT, $0-64
	MOVQ x0+0(FP), AX
	MOVQ x1+8(FP), BX
	MOVQ x2+16(FP), CX
	MOVQ x3+24(FP), DX
	MOVQ w0+32(FP), SI
	MOVQ w1+40(FP), DI
	MOVQ n+48(FP), R8
	MOVQ out+56(FP), R9
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	SHLQ $2, R8
	XORQ R10, R10

loop:
	CMPQ R10, R8
	JGE  done
	VMOVUPS (SI)(R10*1), Y8
	VMOVUPS (DI)(R10*1), Y9
	VMOVUPS (AX)(R10*1), Y10
	VFMADD231PS Y8, Y10, Y0
	VFMADD231PS Y9, Y10, Y1
	VMOVUPS (BX)(R10*1), Y11
	VFMADD231PS Y8, Y11, Y2
	VFMADD231PS Y9, Y11, Y3
	VMOVUPS (CX)(R10*1), Y12
	VFMADD231PS Y8, Y12, Y4
	VFMADD231PS Y9, Y12, Y5
	VMOVUPS (DX)(R10*1), Y13
	VFMADD231PS Y8, Y13, Y6
	VFMADD231PS Y9, Y13, Y7
	ADDQ $32, R10
	JMP  loop

done:
	HSUM(Y0, X0, 0)
	HSUM(Y1, X1, 4)
	HSUM(Y2, X2, 8)
	HSUM(Y3, X3, 12)
	HSUM(Y4, X4, 16)
	HSUM(Y5, X5, 20)
	HSUM(Y6, X6, 24)
	HSUM(Y7, X7, 28)
	VZEROUPPER
	RET

// DQ8 decodes the 8 int8 weights at off(SI) into the 8 floats at 4·off(DI),
// times the scale in Y0.
#define DQ8(off) \
	VPMOVSXBD off(SI), Y1 \
	VCVTDQ2PS Y1, Y1 \
	VMULPS Y0, Y1, Y1 \
	VMOVUPS Y1, (4*off)(DI)

// func dequantAVX2(dst *float32, q *byte, scale *float32, groups int)
// dst[64g+k] = float32(int8(q[64g+k])) * scale[g]: exact conversions and
// one rounded product, as the Go loop computes it.
TEXT ·dequantAVX2(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ q+8(FP), SI
	MOVQ scale+16(FP), DX
	MOVQ groups+24(FP), CX

group:
	TESTQ CX, CX
	JE    dqdone
	VBROADCASTSS (DX), Y0
	DQ8(0)
	DQ8(8)
	DQ8(16)
	DQ8(24)
	DQ8(32)
	DQ8(40)
	DQ8(48)
	DQ8(56)
	ADDQ $64, SI
	ADDQ $256, DI
	ADDQ $4, DX
	DECQ CX
	JMP  group

dqdone:
	VZEROUPPER
	RET
