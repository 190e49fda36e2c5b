#include "textflag.h"

// DOT8: the next 8 floats of one vector (mem) times the query's (Y4)
// into that vector's four sums (x): x += lo + hi, as dotF32 adds
// a[j]·b[j] + a[j+4]·b[j+4] to s_j.
#define DOT8(mem, x) \
	VMULPS mem, Y4, Y5 \
	VEXTRACTF128 $1, Y5, X6 \
	VADDPS X6, X5, X5 \
	VADDPS X5, x, x

// TAIL1: one more float (mem) times the query's (X4) into s0 of x.
#define TAIL1(mem, x) \
	VMOVSS mem, X5 \
	VMULSS X4, X5, X5 \
	VADDSS X5, x, x

// SUM4: (s0+s1) + (s2+s3) of x, stored at off(DI).
#define SUM4(x, off) \
	VHADDPS x, x, x \
	VHADDPS x, x, x \
	VMOVSS x, off(DI)

// func dotsAVX2(out, q, m *float32, d, n int)
// out[i] = dotF32(q, m[i·d:]) for i < n: four vectors at a time (at R8,
// R9, R10, R11), each 8 floats a step with dotF32's operations in its
// order (each product and sum rounded on its own, no FMA), then its
// tail a float at a time; the vectors past the last multiple of four
// one at a time. Four vectors read side by side are four streams that
// break every vector, which the hardware's prefetchers follow badly (a
// store in memory scanned a third slower than the Go loop's one
// stream), so each step prefetches the next four vectors in order, two
// lines a step (BX).
TEXT ·dotsAVX2(SB), NOSPLIT, $0-40
	MOVQ out+0(FP), DI
	MOVQ q+8(FP), SI
	MOVQ m+16(FP), R8
	MOVQ d+24(FP), DX
	MOVQ n+32(FP), CX
	LEAQ (DX*4), R12 // a vector's bytes
	MOVQ DX, R13
	ANDQ $-8, R13
	SHLQ $2, R13 // the bytes of its steps of 8
	LEAQ (R12)(R12*2), R14

four:
	CMPQ CX, $4
	JLT  one
	LEAQ (R8)(R12*1), R9
	LEAQ (R8)(R12*2), R10
	LEAQ (R8)(R14*1), R11
	LEAQ (R11)(R12*1), BX // the next four vectors, prefetched in order
	VXORPS X0, X0, X0
	VXORPS X1, X1, X1
	VXORPS X2, X2, X2
	VXORPS X3, X3, X3
	XORQ AX, AX

fstep:
	CMPQ AX, R13
	JGE  ftail
	VMOVUPS (SI)(AX*1), Y4
	PREFETCHT0 (BX)(AX*4)
	PREFETCHT0 64(BX)(AX*4)
	DOT8((R8)(AX*1), X0)
	DOT8((R9)(AX*1), X1)
	DOT8((R10)(AX*1), X2)
	DOT8((R11)(AX*1), X3)
	ADDQ $32, AX
	JMP  fstep

ftail:
	CMPQ AX, R12
	JGE  fsum
	VMOVSS (SI)(AX*1), X4
	TAIL1((R8)(AX*1), X0)
	TAIL1((R9)(AX*1), X1)
	TAIL1((R10)(AX*1), X2)
	TAIL1((R11)(AX*1), X3)
	ADDQ $4, AX
	JMP  ftail

fsum:
	SUM4(X0, 0)
	SUM4(X1, 4)
	SUM4(X2, 8)
	SUM4(X3, 12)
	ADDQ $16, DI
	LEAQ (R8)(R12*4), R8
	SUBQ $4, CX
	JMP  four

one:
	TESTQ CX, CX
	JZ    done
	VXORPS X0, X0, X0
	XORQ AX, AX

ostep:
	CMPQ AX, R13
	JGE  otail
	VMOVUPS (SI)(AX*1), Y4
	DOT8((R8)(AX*1), X0)
	ADDQ $32, AX
	JMP  ostep

otail:
	CMPQ AX, R12
	JGE  osum
	VMOVSS (SI)(AX*1), X4
	TAIL1((R8)(AX*1), X0)
	ADDQ $4, AX
	JMP  otail

osum:
	SUM4(X0, 0)
	ADDQ $4, DI
	ADDQ R12, R8
	DECQ CX
	JMP  one

done:
	VZEROUPPER
	RET
