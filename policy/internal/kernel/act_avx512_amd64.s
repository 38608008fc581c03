//go:build !purego

#include "textflag.h"

// Element-wise activations with a float32 exp: x = n·ln2 + r with n an
// integer (round to nearest even) and |r| ≤ ln2/2, e^r by the Cephes
// polynomial, 2^n applied by VSCALEFPS (which overflows to +Inf and
// underflows through the subnormals to +0 exactly like the true value).
// expGeneric in act.go performs the same steps.

DATA expconst<>+0(SB)/4, $0x3fb8aa3b  // log2(e)
DATA expconst<>+4(SB)/4, $0x3f318000  // ln2 high part
DATA expconst<>+8(SB)/4, $0xb95e8083  // ln2 low part
DATA expconst<>+12(SB)/4, $0x39506967 // p0
DATA expconst<>+16(SB)/4, $0x3ab743ce // p1
DATA expconst<>+20(SB)/4, $0x3c088908 // p2
DATA expconst<>+24(SB)/4, $0x3d2aa9c1 // p3
DATA expconst<>+28(SB)/4, $0x3e2aaaaa // p4
DATA expconst<>+32(SB)/4, $0x3f000000 // p5
DATA expconst<>+36(SB)/4, $0x3f800000 // 1
DATA expconst<>+40(SB)/4, $0x43000000 // 128 (clamp)
DATA expconst<>+44(SB)/4, $0xc3000000 // -128 (clamp)
GLOBL expconst<>(SB), RODATA|NOPTR, $48

#define LOADEXPCONST \
	VBROADCASTSS expconst<>+0(SB), Z20  \
	VBROADCASTSS expconst<>+4(SB), Z21  \
	VBROADCASTSS expconst<>+8(SB), Z22  \
	VBROADCASTSS expconst<>+12(SB), Z23 \
	VBROADCASTSS expconst<>+16(SB), Z24 \
	VBROADCASTSS expconst<>+20(SB), Z25 \
	VBROADCASTSS expconst<>+24(SB), Z26 \
	VBROADCASTSS expconst<>+28(SB), Z27 \
	VBROADCASTSS expconst<>+32(SB), Z28 \
	VBROADCASTSS expconst<>+36(SB), Z29 \
	VBROADCASTSS expconst<>+40(SB), Z30 \
	VBROADCASTSS expconst<>+44(SB), Z31

// EXP sets z = e^z. Clobbers Z16, Z17, Z18.
#define EXP(z) \
	VMINPS       z, Z30, z       \
	VMAXPS       z, Z31, z       \
	VMULPS       Z20, z, Z16     \
	VRNDSCALEPS  $0, Z16, Z16    \
	VFNMADD231PS Z21, Z16, z     \
	VFNMADD231PS Z22, Z16, z     \
	VMOVAPS      Z23, Z17        \
	VFMADD213PS  Z24, z, Z17     \
	VFMADD213PS  Z25, z, Z17     \
	VFMADD213PS  Z26, z, Z17     \
	VFMADD213PS  Z27, z, Z17     \
	VFMADD213PS  Z28, z, Z17     \
	VMULPS       z, z, Z18       \
	VFMADD213PS  z, Z18, Z17     \
	VADDPS       Z29, Z17, Z17   \
	VSCALEFPS    Z16, Z17, z

// func siluMulAVX512(dst, gate, up *float32, n int)
// dst[i] = gate[i]/(1+e^(−gate[i])) · up[i].
TEXT ·siluMulAVX512(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ gate+8(FP), SI
	MOVQ up+16(FP), BX
	MOVQ n+24(FP), CX
	LOADEXPCONST
	VPXORD Z19, Z19, Z19

siloop:
	CMPQ      CX, $16
	JGE       sifull
	TESTQ     CX, CX
	JZ        sidone
	MOVL      $1, AX
	SHLL      CX, AX
	DECL      AX
	KMOVW     AX, K1
	JMP       sibody

sifull:
	KXNORW    K1, K1, K1

sibody:
	VMOVUPS.Z (SI), K1, Z0
	VSUBPS    Z0, Z19, Z1
	EXP(Z1)
	VADDPS    Z29, Z1, Z1
	VDIVPS    Z1, Z0, Z0
	VMOVUPS.Z (BX), K1, Z2
	VMULPS    Z2, Z0, Z0
	VMOVUPS   Z0, K1, (DI)
	ADDQ      $64, SI
	ADDQ      $64, BX
	ADDQ      $64, DI
	SUBQ      $16, CX
	JG        siloop

sidone:
	VZEROUPPER
	RET

// func expAVX512(dst, x *float32, n int)
// dst[i] = e^x[i].
TEXT ·expAVX512(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	LOADEXPCONST

exloop:
	CMPQ      CX, $16
	JGE       exfull
	TESTQ     CX, CX
	JZ        exdone
	MOVL      $1, AX
	SHLL      CX, AX
	DECL      AX
	KMOVW     AX, K1
	JMP       exbody

exfull:
	KXNORW    K1, K1, K1

exbody:
	VMOVUPS.Z (SI), K1, Z0
	EXP(Z0)
	VMOVUPS   Z0, K1, (DI)
	ADDQ      $64, SI
	ADDQ      $64, DI
	SUBQ      $16, CX
	JG        exloop

exdone:
	VZEROUPPER
	RET

// func sigmoidAVX512(dst, x *float32, n int)
// dst[i] = 1/(1+e^(−x[i])).
TEXT ·sigmoidAVX512(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	LOADEXPCONST
	VPXORD Z19, Z19, Z19

sgloop:
	CMPQ      CX, $16
	JGE       sgfull
	TESTQ     CX, CX
	JZ        sgdone
	MOVL      $1, AX
	SHLL      CX, AX
	DECL      AX
	KMOVW     AX, K1
	JMP       sgbody

sgfull:
	KXNORW    K1, K1, K1

sgbody:
	VMOVUPS.Z (SI), K1, Z0
	VSUBPS    Z0, Z19, Z1
	EXP(Z1)
	VADDPS    Z29, Z1, Z1
	VDIVPS    Z1, Z29, Z0
	VMOVUPS   Z0, K1, (DI)
	ADDQ      $64, SI
	ADDQ      $64, DI
	SUBQ      $16, CX
	JG        sgloop

sgdone:
	VZEROUPPER
	RET
