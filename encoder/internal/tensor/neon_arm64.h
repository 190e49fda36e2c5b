// NEON instructions Go's arm64 assembler lacks, for the kernels of
// q8_arm64.s and attn_arm64.s.

// Go's assembler has no SDOT, MLA, FMUL or FMLA by element, no vector
// SCVTF or FADD, and its VFMLA takes no computed register: they are
// spelled as words, registers by number (the encodings GNU as gives for
// the same operands). The element forms' index i is H:L, bits 11 and 21.
#define ELEM(op, d, n, m, i) WORD $((op) | (((i)&1)<<21) | (((i)>>1)<<11) | ((m)<<16) | ((n)<<5) | (d))
// SDOT Vd.4S, Vn.16B, Vm.4B[i]
#define SDOT(d, n, m, i) ELEM(0x4F80E000, d, n, m, i)
// MLA Vd.4S, Vn.4S, Vm.S[i]
#define MLA(d, n, m, i) ELEM(0x6F800000, d, n, m, i)
// FMUL Vd.4S, Vn.4S, Vm.S[i]
#define FMULE(d, n, m, i) ELEM(0x4F809000, d, n, m, i)
// FMLA Vd.4S, Vn.4S, Vm.S[i]
#define FMLAE(d, n, m, i) ELEM(0x4F801000, d, n, m, i)
// SCVTF Vd.4S, Vn.4S
#define SCVTF(d, n) WORD $(0x4E21D800 | ((n)<<5) | (d))
// FADD Vd.4S, Vn.4S, Vm.4S
#define FADD(d, n, m) WORD $(0x4E20D400 | ((m)<<16) | ((n)<<5) | (d))
// FMLA Vd.4S, Vn.4S, Vm.4S
#define FMLA(d, n, m) WORD $(0x4E20CC00 | ((m)<<16) | ((n)<<5) | (d))
// FMUL, FDIV Vd.4S, Vn.4S, Vm.4S
#define FMUL(d, n, m) WORD $(0x6E20DC00 | ((m)<<16) | ((n)<<5) | (d))
#define FDIV(d, n, m) WORD $(0x6E20FC00 | ((m)<<16) | ((n)<<5) | (d))
// FMIN, FMAX Vd.4S, Vn.4S, Vm.4S
#define FMIN(d, n, m) WORD $(0x4EA0F400 | ((m)<<16) | ((n)<<5) | (d))
#define FMAX(d, n, m) WORD $(0x4E20F400 | ((m)<<16) | ((n)<<5) | (d))
// FMINV, FMAXV Sd, Vn.4S
#define FMINV(d, n) WORD $(0x6EB0F800 | ((n)<<5) | (d))
#define FMAXV(d, n) WORD $(0x6E30F800 | ((n)<<5) | (d))
// FRINTN Vd.4S, Vn.4S (to the nearest, ties to even); FCVTZS Vd.4S, Vn.4S
#define FRINTN(d, n) WORD $(0x4E218800 | ((n)<<5) | (d))
#define FCVTZS(d, n) WORD $(0x4EA1B800 | ((n)<<5) | (d))
// SQXTUN Vd.4H, Vn.4S and SQXTUN2 Vd.8H, Vn.4S: int32 to uint16,
// saturating, into the low or the high half of d
#define SQXTUN(d, n) WORD $(0x2E612800 | ((n)<<5) | (d))
#define SQXTUN2(d, n) WORD $(0x6E612800 | ((n)<<5) | (d))
// UQXTN Vd.8B, Vn.8H and UQXTN2 Vd.16B, Vn.8H: uint16 to uint8,
// saturating, into the low or the high half of d
#define UQXTN(d, n) WORD $(0x2E214800 | ((n)<<5) | (d))
#define UQXTN2(d, n) WORD $(0x6E214800 | ((n)<<5) | (d))
// ADD Vd.4S, Vn.4S, Vm.4S (integer)
#define ADD4(d, n, m) WORD $(0x4EA08400 | ((m)<<16) | ((n)<<5) | (d))
// EOR Vd.16B, Vd.16B, Vd.16B: zero Vd; ZERO8 zeroes Va..Va+7
#define ZERO(d) WORD $(0x6E201C00 | ((d)<<16) | ((d)<<5) | (d))
#define ZERO8(a) \
	ZERO(a) \
	ZERO(a+1) \
	ZERO(a+2) \
	ZERO(a+3) \
	ZERO(a+4) \
	ZERO(a+5) \
	ZERO(a+6) \
	ZERO(a+7)
