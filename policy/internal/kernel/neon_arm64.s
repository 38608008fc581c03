//go:build !purego

#include "textflag.h"

// NEON kernels (see neon_arm64.go). Each one computes the arithmetic of
// the generic kernel it replaces, operation for operation: the 16-lane
// sums of NT, Dot and the int8-weight product as four 4-lane registers
// (lanes 0–3, 4–7, 8–11, 12–15) of fused FMLA steps reduced by the fixed
// tree (l+8 onto l, l+4, l+2, l+1), the NN and TN outputs as sequential
// FMLA chains, and the float32 exp with fused steps where the generic one
// calls fma32.
//
// The Go assembler has no mnemonics for the NEON float arithmetic other
// than FMLA and FMLS, nor for the conversions, shifts and integer dot
// products used here: the macros below encode them (operands are register
// numbers; names and operand order follow the Arm manual, d is written).

// Vd.4S = Vn.4S op Vm.4S
#define VFADD(n, m, d) WORD $(0x4E20D400 | ((m)<<16) | ((n)<<5) | (d))
#define VFSUB(n, m, d) WORD $(0x4EA0D400 | ((m)<<16) | ((n)<<5) | (d))
#define VFMUL(n, m, d) WORD $(0x6E20DC00 | ((m)<<16) | ((n)<<5) | (d))
#define VFDIV(n, m, d) WORD $(0x6E20FC00 | ((m)<<16) | ((n)<<5) | (d))
#define VFMAX(n, m, d) WORD $(0x4E20F400 | ((m)<<16) | ((n)<<5) | (d))
#define VFMIN(n, m, d) WORD $(0x4EA0F400 | ((m)<<16) | ((n)<<5) | (d))
// Vd.4S = −Vn.4S
#define VFNEG(n, d) WORD $(0x6EA0F800 | ((n)<<5) | (d))
// Sd = Vn.S[0] + Vn.S[1]
#define FADDP2S(n, d) WORD $(0x7E30D800 | ((n)<<5) | (d))
// Vd.16B = the bytes 8..15 then 0..7 of Vn (its two halves swapped)
#define VSWAPD(n, d) WORD $(0x6E004000 | ((n)<<16) | ((n)<<5) | (d))
// Vd.4S = float32(Vn.4S as int32) / int32(Vn.4S rounded towards zero)
#define VSCVTF(n, d) WORD $(0x4E21D800 | ((n)<<5) | (d))
#define VFCVTZS(n, d) WORD $(0x4EA1B800 | ((n)<<5) | (d))
// Vd.4S = Vn.4S >> 1 (arithmetic), >> 31 (logical), << 23
#define VSSHR1(n, d) WORD $(0x4F3F0400 | ((n)<<5) | (d))
#define VUSHR31(n, d) WORD $(0x6F210400 | ((n)<<5) | (d))
#define VSHL23(n, d) WORD $(0x4F375400 | ((n)<<5) | (d))
// Sign extension: Vd.8H = Vn.8B (low half) or Vn.16B (high half, SXTL2);
// Vd.4S = Vn.4H or the high half of Vn.8H.
#define VSXTL8H(n, d) WORD $(0x0F08A400 | ((n)<<5) | (d))
#define VSXTL28H(n, d) WORD $(0x4F08A400 | ((n)<<5) | (d))
#define VSXTL4S(n, d) WORD $(0x0F10A400 | ((n)<<5) | (d))
#define VSXTL24S(n, d) WORD $(0x4F10A400 | ((n)<<5) | (d))
// Vd.4S += the four 4-byte dot products of Vn.16B and Vm.16B (FEAT_DotProd)
#define VSDOT(n, m, d) WORD $(0x4E809400 | ((m)<<16) | ((n)<<5) | (d))
// Vd.8H = Vn.8B·Vm.8B (SMULL) or of the high halves (SMULL2), in int16
#define VSMULL(n, m, d) WORD $(0x0E20C000 | ((m)<<16) | ((n)<<5) | (d))
#define VSMULL2(n, m, d) WORD $(0x4E20C000 | ((m)<<16) | ((n)<<5) | (d))
// Vd.4S += the sums of adjacent pairs of Vn.8H
#define VSADALP(n, d) WORD $(0x4E606800 | ((n)<<5) | (d))
// Vd.4S = {n0+n1, n2+n3, m0+m1, m2+m3}
#define VADDP4S(n, m, d) WORD $(0x4EA0BC00 | ((m)<<16) | ((n)<<5) | (d))

// REDUCE16 sums the 16 lanes in Va (0–3), Vb (4–7), Vc (8–11), Vd (12–15)
// by the fixed tree into lane 0 of Va (Fa), with V28 as scratch.
#define REDUCE16(a, b, c, d) \
	VFADD(a, c, a) \
	VFADD(b, d, b) \
	VFADD(a, b, a) \
	VSWAPD(a, 28) \
	VFADD(a, 28, a) \
	FADDP2S(a, a)

// NTCOL accumulates one 16-element block of the b row at R into the lanes
// Va..Va+3, with the a block in V16–V19.
#define NTCOL(R, a, a1, a2, a3) \
	VLD1.P 64(R), [V20.S4, V21.S4, V22.S4, V23.S4] \
	VFMLA V16.S4, V20.S4, a.S4 \
	VFMLA V17.S4, V21.S4, a1.S4 \
	VFMLA V18.S4, V22.S4, a2.S4 \
	VFMLA V19.S4, V23.S4, a3.S4

#define NTBLOCK \
	VLD1.P 64(R0), [V16.S4, V17.S4, V18.S4, V19.S4] \
	NTCOL(R1, V0, V1, V2, V3) \
	NTCOL(R2, V4, V5, V6, V7) \
	NTCOL(R3, V8, V9, V10, V11) \
	NTCOL(R4, V12, V13, V14, V15)

// NTI8COL is NTCOL for 16 int8 values of b, widened exactly to float32.
#define NTI8COL(R, a, a1, a2, a3) \
	VLD1.P 16(R), [V20.B16] \
	VSXTL8H(20, 21) \
	VSXTL28H(20, 22) \
	VSXTL4S(21, 24) \
	VSXTL24S(21, 25) \
	VSXTL4S(22, 26) \
	VSXTL24S(22, 27) \
	VSCVTF(24, 24) \
	VSCVTF(25, 25) \
	VSCVTF(26, 26) \
	VSCVTF(27, 27) \
	VFMLA V16.S4, V24.S4, a.S4 \
	VFMLA V17.S4, V25.S4, a1.S4 \
	VFMLA V18.S4, V26.S4, a2.S4 \
	VFMLA V19.S4, V27.S4, a3.S4

#define NTI8BLOCK \
	VLD1.P 64(R0), [V16.S4, V17.S4, V18.S4, V19.S4] \
	NTI8COL(R1, V0, V1, V2, V3) \
	NTI8COL(R2, V4, V5, V6, V7) \
	NTI8COL(R3, V8, V9, V10, V11) \
	NTI8COL(R4, V12, V13, V14, V15)

#define ZERO16 \
	VEOR V0.B16, V0.B16, V0.B16 \
	VEOR V1.B16, V1.B16, V1.B16 \
	VEOR V2.B16, V2.B16, V2.B16 \
	VEOR V3.B16, V3.B16, V3.B16 \
	VEOR V4.B16, V4.B16, V4.B16 \
	VEOR V5.B16, V5.B16, V5.B16 \
	VEOR V6.B16, V6.B16, V6.B16 \
	VEOR V7.B16, V7.B16, V7.B16 \
	VEOR V8.B16, V8.B16, V8.B16 \
	VEOR V9.B16, V9.B16, V9.B16 \
	VEOR V10.B16, V10.B16, V10.B16 \
	VEOR V11.B16, V11.B16, V11.B16 \
	VEOR V12.B16, V12.B16, V12.B16 \
	VEOR V13.B16, V13.B16, V13.B16 \
	VEOR V14.B16, V14.B16, V14.B16 \
	VEOR V15.B16, V15.B16, V15.B16

#define STORE4 \
	MOVD 64(R8), R6 \
	REDUCE16(0, 1, 2, 3) \
	REDUCE16(4, 5, 6, 7) \
	REDUCE16(8, 9, 10, 11) \
	REDUCE16(12, 13, 14, 15) \
	FMOVS F0, 0(R6) \
	FMOVS F4, 4(R6) \
	FMOVS F8, 8(R6) \
	FMOVS F12, 12(R6)

// func dotNEON(x, y *float32, nblk int, xt, yt *float32) float32
// The 16-lane dot product of nblk blocks of x and y, then, when xt is not
// nil, of one more block from the zero-padded tails xt and yt.
TEXT ·dotNEON(SB), NOSPLIT, $0-44
	MOVD x+0(FP), R0
	MOVD y+8(FP), R1
	MOVD nblk+16(FP), R2
	VEOR V0.B16, V0.B16, V0.B16
	VEOR V1.B16, V1.B16, V1.B16
	VEOR V2.B16, V2.B16, V2.B16
	VEOR V3.B16, V3.B16, V3.B16
	CBZ  R2, dottail

dotloop:
	VLD1.P 64(R0), [V16.S4, V17.S4, V18.S4, V19.S4]
	VLD1.P 64(R1), [V20.S4, V21.S4, V22.S4, V23.S4]
	VFMLA  V16.S4, V20.S4, V0.S4
	VFMLA  V17.S4, V21.S4, V1.S4
	VFMLA  V18.S4, V22.S4, V2.S4
	VFMLA  V19.S4, V23.S4, V3.S4
	SUB    $1, R2
	CBNZ   R2, dotloop

dottail:
	MOVD xt+24(FP), R0
	MOVD yt+32(FP), R1
	CBZ  R0, dotreduce
	VLD1 (R0), [V16.S4, V17.S4, V18.S4, V19.S4]
	VLD1 (R1), [V20.S4, V21.S4, V22.S4, V23.S4]
	VFMLA V16.S4, V20.S4, V0.S4
	VFMLA V17.S4, V21.S4, V1.S4
	VFMLA V18.S4, V22.S4, V2.S4
	VFMLA V19.S4, V23.S4, V3.S4

dotreduce:
	REDUCE16(0, 1, 2, 3)
	FMOVS F0, ret+40(FP)
	RET

// func nt1x4NEON(p *neonNTArgs)
// The 16-lane dot products of one row of a with four rows of b.
TEXT ·nt1x4NEON(SB), NOSPLIT, $0-8
	MOVD p+0(FP), R8
	MOVD 0(R8), R0
	MOVD 8(R8), R1
	MOVD 16(R8), R2
	MOVD 24(R8), R3
	MOVD 32(R8), R4
	MOVD 40(R8), R5
	ZERO16
	CBZ  R5, nttail

ntloop:
	NTBLOCK
	SUB  $1, R5
	CBNZ R5, ntloop

nttail:
	MOVD 48(R8), R0
	CBZ  R0, ntstore
	MOVD 56(R8), R1
	ADD  $64, R1, R2
	ADD  $128, R1, R3
	ADD  $192, R1, R4
	NTBLOCK

ntstore:
	STORE4
	RET

// func ntI8x4NEON(p *neonNTArgs)
// nt1x4NEON with int8 rows of b (the tails 16 bytes apart).
TEXT ·ntI8x4NEON(SB), NOSPLIT, $0-8
	MOVD p+0(FP), R8
	MOVD 0(R8), R0
	MOVD 8(R8), R1
	MOVD 16(R8), R2
	MOVD 24(R8), R3
	MOVD 32(R8), R4
	MOVD 40(R8), R5
	ZERO16
	CBZ  R5, nti8tail

nti8loop:
	NTI8BLOCK
	SUB  $1, R5
	CBNZ R5, nti8loop

nti8tail:
	MOVD 48(R8), R0
	CBZ  R0, nti8store
	MOVD 56(R8), R1
	ADD  $16, R1, R2
	ADD  $32, R1, R3
	ADD  $48, R1, R4
	NTI8BLOCK

nti8store:
	STORE4
	RET

// BCROW broadcasts a[i][p] of the row whose pointer is in R to Vv and
// advances R by the a step (R4).
#define BCROW(R, v) \
	VLD1R (R), [v.S4] \
	ADD   R4, R

// func bc4x16NEON(p *neonBCArgs)
// c[r][0:16] (+)= Σ_p a[r][p]·b[p][0:16] for the tile's four rows, one
// FMLA per p in increasing p; rows from p.rows on are computed (on
// duplicated pointers) but not stored.
TEXT ·bc4x16NEON(SB), NOSPLIT, $0-8
	MOVD p+0(FP), R8
	MOVD 0(R8), R0
	MOVD 8(R8), R1
	MOVD 16(R8), R2
	MOVD 24(R8), R3
	MOVD 32(R8), R4
	MOVD 40(R8), R5
	MOVD 48(R8), R6
	MOVD 56(R8), R7
	MOVD 64(R8), R10
	MOVD 72(R8), R11
	MOVD 80(R8), R12
	MOVD 88(R8), R13
	MOVD 104(R8), R14
	CBZ  R14, bczero
	VLD1 (R10), [V0.S4, V1.S4, V2.S4, V3.S4]
	VLD1 (R11), [V4.S4, V5.S4, V6.S4, V7.S4]
	VLD1 (R12), [V8.S4, V9.S4, V10.S4, V11.S4]
	VLD1 (R13), [V12.S4, V13.S4, V14.S4, V15.S4]
	B    bcloop

bczero:
	ZERO16

bcloop:
	VLD1  (R5), [V16.S4, V17.S4, V18.S4, V19.S4]
	ADD   R6, R5
	BCROW(R0, V20)
	BCROW(R1, V21)
	BCROW(R2, V22)
	BCROW(R3, V23)
	VFMLA V20.S4, V16.S4, V0.S4
	VFMLA V20.S4, V17.S4, V1.S4
	VFMLA V20.S4, V18.S4, V2.S4
	VFMLA V20.S4, V19.S4, V3.S4
	VFMLA V21.S4, V16.S4, V4.S4
	VFMLA V21.S4, V17.S4, V5.S4
	VFMLA V21.S4, V18.S4, V6.S4
	VFMLA V21.S4, V19.S4, V7.S4
	VFMLA V22.S4, V16.S4, V8.S4
	VFMLA V22.S4, V17.S4, V9.S4
	VFMLA V22.S4, V18.S4, V10.S4
	VFMLA V22.S4, V19.S4, V11.S4
	VFMLA V23.S4, V16.S4, V12.S4
	VFMLA V23.S4, V17.S4, V13.S4
	VFMLA V23.S4, V18.S4, V14.S4
	VFMLA V23.S4, V19.S4, V15.S4
	SUB   $1, R7
	CBNZ  R7, bcloop

	MOVD 96(R8), R14
	VST1 [V0.S4, V1.S4, V2.S4, V3.S4], (R10)
	CMP  $2, R14
	BLT  bcdone
	VST1 [V4.S4, V5.S4, V6.S4, V7.S4], (R11)
	CMP  $3, R14
	BLT  bcdone
	VST1 [V8.S4, V9.S4, V10.S4, V11.S4], (R12)
	CMP  $4, R14
	BLT  bcdone
	VST1 [V12.S4, V13.S4, V14.S4, V15.S4], (R13)

bcdone:
	RET

// func axpyNEON(alpha float32, x, y *float32, n int)
// y[i] = fma(alpha, x[i], y[i]) for n a multiple of 4.
TEXT ·axpyNEON(SB), NOSPLIT, $0-32
	MOVWU alpha+0(FP), R3
	VDUP  R3, V0.S4
	MOVD  x+8(FP), R0
	MOVD  y+16(FP), R1
	MOVD  n+24(FP), R2

axpy16:
	CMP    $16, R2
	BLT    axpy4
	VLD1.P 64(R0), [V1.S4, V2.S4, V3.S4, V4.S4]
	VLD1   (R1), [V5.S4, V6.S4, V7.S4, V8.S4]
	VFMLA  V0.S4, V1.S4, V5.S4
	VFMLA  V0.S4, V2.S4, V6.S4
	VFMLA  V0.S4, V3.S4, V7.S4
	VFMLA  V0.S4, V4.S4, V8.S4
	VST1.P [V5.S4, V6.S4, V7.S4, V8.S4], 64(R1)
	SUB    $16, R2
	B      axpy16

axpy4:
	CBZ    R2, axpydone
	VLD1.P 16(R0), [V1.S4]
	VLD1   (R1), [V5.S4]
	VFMLA  V0.S4, V1.S4, V5.S4
	VST1.P [V5.S4], 16(R1)
	SUB    $4, R2
	B      axpy4

axpydone:
	RET

// func scaleNEON(alpha float32, x *float32, n int)
// x[i] *= alpha for n a multiple of 4.
TEXT ·scaleNEON(SB), NOSPLIT, $0-24
	MOVWU alpha+0(FP), R3
	VDUP  R3, V0.S4
	MOVD  x+8(FP), R0
	MOVD  n+16(FP), R2

scale16:
	CMP  $16, R2
	BLT  scale4
	VLD1 (R0), [V1.S4, V2.S4, V3.S4, V4.S4]
	VFMUL(1, 0, 1)
	VFMUL(2, 0, 2)
	VFMUL(3, 0, 3)
	VFMUL(4, 0, 4)
	VST1.P [V1.S4, V2.S4, V3.S4, V4.S4], 64(R0)
	SUB  $16, R2
	B    scale16

scale4:
	CBZ  R2, scaledone
	VLD1 (R0), [V1.S4]
	VFMUL(1, 0, 1)
	VST1.P [V1.S4], 16(R0)
	SUB  $4, R2
	B    scale4

scaledone:
	RET

// EXPCONSTS loads the constants of the float32 exp (act.go): V16 −128,
// V17 128, V18 log2 e, V19 1.5·2²³, V20 ln2 hi, V21 ln2 lo, V22–V27 the
// polynomial P0–P5, V28 1, V29 the exponent bias 127 (int32 lanes).
#define EXPCONST(bits, v) \
	MOVW $bits, R9 \
	VDUP R9, v.S4

#define EXPCONSTS \
	EXPCONST(0xc3000000, V16) \
	EXPCONST(0x43000000, V17) \
	EXPCONST(0x3fb8aa3b, V18) \
	EXPCONST(0x4b400000, V19) \
	EXPCONST(0x3f318000, V20) \
	EXPCONST(0xb95e8083, V21) \
	EXPCONST(0x39506967, V22) \
	EXPCONST(0x3ab743ce, V23) \
	EXPCONST(0x3c088908, V24) \
	EXPCONST(0x3d2aa9c1, V25) \
	EXPCONST(0x3e2aaaaa, V26) \
	EXPCONST(0x3f000000, V27) \
	EXPCONST(0x3f800000, V28) \
	EXPCONST(127, V29)

// EXP4 sets V0 = e^V0 in four lanes with the steps of expGeneric, using
// V1–V5 as scratch: clamp to [−128, 128]; n = round(x·log2 e) by adding
// and removing 1.5·2²³; r = x − n·ln2hi − n·ln2lo (FMLS: fused, as fma32);
// the polynomial in r by FMLA; y = p·r² + r (fused) + 1; then y·2^(n/2)
// (truncated) · 2^(n − n/2).
#define EXP4 \
	VFMAX(0, 16, 0) \
	VFMIN(0, 17, 0) \
	VFMUL(0, 18, 1) \
	VFADD(1, 19, 1) \
	VFSUB(1, 19, 1) \
	VMOV  V0.B16, V2.B16 \
	VFMLS V20.S4, V1.S4, V2.S4 \
	VFMLS V21.S4, V1.S4, V2.S4 \
	VMOV  V23.B16, V3.B16 \
	VFMLA V2.S4, V22.S4, V3.S4 \
	VMOV  V24.B16, V4.B16 \
	VFMLA V2.S4, V3.S4, V4.S4 \
	VMOV  V25.B16, V3.B16 \
	VFMLA V2.S4, V4.S4, V3.S4 \
	VMOV  V26.B16, V4.B16 \
	VFMLA V2.S4, V3.S4, V4.S4 \
	VMOV  V27.B16, V3.B16 \
	VFMLA V2.S4, V4.S4, V3.S4 \
	VFMUL(2, 2, 4) \
	VFMLA V4.S4, V3.S4, V2.S4 \
	VFADD(2, 28, 2) \
	VFCVTZS(1, 1) \
	VUSHR31(1, 4) \
	VADD  V1.S4, V4.S4, V4.S4 \
	VSSHR1(4, 4) \
	VSUB  V4.S4, V1.S4, V1.S4 \
	VADD  V29.S4, V4.S4, V4.S4 \
	VSHL23(4, 4) \
	VADD  V29.S4, V1.S4, V1.S4 \
	VSHL23(1, 1) \
	VFMUL(2, 4, 2) \
	VFMUL(2, 1, 0)

// func expNEON(dst, x *float32, n int)
// dst[i] = e^x[i] for n a multiple of 4.
TEXT ·expNEON(SB), NOSPLIT, $0-24
	MOVD dst+0(FP), R0
	MOVD x+8(FP), R1
	MOVD n+16(FP), R2
	EXPCONSTS

exploop:
	CBZ    R2, expdone
	VLD1.P 16(R1), [V0.S4]
	EXP4
	VST1.P [V0.S4], 16(R0)
	SUB    $4, R2
	B      exploop

expdone:
	RET

// func sigmoidNEON(dst, x *float32, n int)
// dst[i] = 1/(1+e^(−x[i])) for n a multiple of 4.
TEXT ·sigmoidNEON(SB), NOSPLIT, $0-24
	MOVD dst+0(FP), R0
	MOVD x+8(FP), R1
	MOVD n+16(FP), R2
	EXPCONSTS

sigloop:
	CBZ    R2, sigdone
	VLD1.P 16(R1), [V0.S4]
	VFNEG(0, 0)
	EXP4
	VFADD(0, 28, 0)
	VFDIV(28, 0, 0)
	VST1.P [V0.S4], 16(R0)
	SUB    $4, R2
	B      sigloop

sigdone:
	RET

// func siluMulNEON(dst, gate, up *float32, n int)
// dst[i] = gate[i]/(1+e^(−gate[i]))·up[i] for n a multiple of 4.
TEXT ·siluMulNEON(SB), NOSPLIT, $0-32
	MOVD dst+0(FP), R0
	MOVD gate+8(FP), R1
	MOVD up+16(FP), R3
	MOVD n+24(FP), R2
	EXPCONSTS

siluloop:
	CBZ    R2, siludone
	VLD1.P 16(R1), [V30.S4]
	VLD1.P 16(R3), [V31.S4]
	VFNEG(30, 0)
	EXP4
	VFADD(0, 28, 0)
	VFDIV(30, 0, 0)
	VFMUL(0, 31, 0)
	VST1.P [V0.S4], 16(R0)
	SUB    $4, R2
	B      siluloop

siludone:
	RET

// func w8dot16SDOT(a *uint8, w *int8, groups int, d *[16]int32)
// d[j] = Σ_p (a[p] − 128)·w[j][p] for the 16 rows of one packed weight
// block (groups of 4 k: 16 rows × 4 bytes each), with SDOT on the bytes of
// a moved to int8 (a − 128, by flipping the top bit).
TEXT ·w8dot16SDOT(SB), NOSPLIT, $0-32
	MOVD a+0(FP), R0
	MOVD w+8(FP), R1
	MOVD groups+16(FP), R2
	MOVD d+24(FP), R3
	VEOR  V0.B16, V0.B16, V0.B16
	VEOR  V1.B16, V1.B16, V1.B16
	VEOR  V2.B16, V2.B16, V2.B16
	VEOR  V3.B16, V3.B16, V3.B16
	VMOVI $128, V17.B16
	CBZ   R2, sdotstore

sdotloop:
	VLD1R  (R0), [V16.S4]
	ADD    $4, R0
	VEOR   V17.B16, V16.B16, V16.B16
	VLD1.P 64(R1), [V20.B16, V21.B16, V22.B16, V23.B16]
	VSDOT(20, 16, 0)
	VSDOT(21, 16, 1)
	VSDOT(22, 16, 2)
	VSDOT(23, 16, 3)
	SUB    $1, R2
	CBNZ   R2, sdotloop

sdotstore:
	VST1 [V0.S4, V1.S4, V2.S4, V3.S4], (R3)
	RET

// W8PAIR accumulates the products of the packed weight rows in Vw (four
// rows of 4 bytes) with the broadcast activation bytes in V16: the int16
// products of the first two rows into pairs of int32 lanes of Vlo, of the
// last two into Vhi.
#define W8PAIR(w, lo, hi) \
	VSMULL(w, 16, 24) \
	VSMULL2(w, 16, 25) \
	VSADALP(24, lo) \
	VSADALP(25, hi)

// func w8dot16NEON(a *uint8, w *int8, groups int, d *[16]int32)
// w8dot16SDOT without the dot-product instructions: int16 products summed
// in pairs into int32 lanes (exact: |(a−128)·w| ≤ 127·128), then the pairs
// of each row added.
TEXT ·w8dot16NEON(SB), NOSPLIT, $0-32
	MOVD a+0(FP), R0
	MOVD w+8(FP), R1
	MOVD groups+16(FP), R2
	MOVD d+24(FP), R3
	VEOR  V0.B16, V0.B16, V0.B16
	VEOR  V1.B16, V1.B16, V1.B16
	VEOR  V2.B16, V2.B16, V2.B16
	VEOR  V3.B16, V3.B16, V3.B16
	VEOR  V4.B16, V4.B16, V4.B16
	VEOR  V5.B16, V5.B16, V5.B16
	VEOR  V6.B16, V6.B16, V6.B16
	VEOR  V7.B16, V7.B16, V7.B16
	VMOVI $128, V17.B16
	CBZ   R2, w8nstore

w8nloop:
	VLD1R  (R0), [V16.S4]
	ADD    $4, R0
	VEOR   V17.B16, V16.B16, V16.B16
	VLD1.P 64(R1), [V20.B16, V21.B16, V22.B16, V23.B16]
	W8PAIR(20, 0, 1)
	W8PAIR(21, 2, 3)
	W8PAIR(22, 4, 5)
	W8PAIR(23, 6, 7)
	SUB    $1, R2
	CBNZ   R2, w8nloop

w8nstore:
	VADDP4S(0, 1, 0)
	VADDP4S(2, 3, 1)
	VADDP4S(4, 5, 2)
	VADDP4S(6, 7, 3)
	VST1 [V0.S4, V1.S4, V2.S4, V3.S4], (R3)
	RET
