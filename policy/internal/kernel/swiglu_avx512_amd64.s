//go:build !purego

#include "textflag.h"

// The SwiGLU backward pass in one pass (SiLUMulBackward): the sigmoid of
// sigmoidAVX512 (the same float32 exp), then the gradients with one
// rounding per product, in swigluBackwardGo's order.

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

// func swigluBwdAVX512(ggate, gup, gate, up, grad *float32, n int)
TEXT ·swigluBwdAVX512(SB), NOSPLIT, $0-48
	MOVQ ggate+0(FP), DI
	MOVQ gup+8(FP), R8
	MOVQ gate+16(FP), SI
	MOVQ up+24(FP), BX
	MOVQ grad+32(FP), DX
	MOVQ n+40(FP), CX
	LOADEXPCONST
	VPXORD Z19, Z19, Z19

sbloop:
	CMPQ      CX, $16
	JGE       sbfull
	TESTQ     CX, CX
	JZ        sbdone
	MOVL      $1, AX
	SHLL      CX, AX
	DECL      AX
	KMOVW     AX, K1
	JMP       sbbody

sbfull:
	KXNORW    K1, K1, K1

sbbody:
	VMOVUPS.Z (SI), K1, Z0 // z
	VSUBPS    Z0, Z19, Z1
	EXP(Z1)
	VADDPS    Z29, Z1, Z1
	VDIVPS    Z1, Z29, Z7  // s = 1/(1+e^(−z))
	VMOVUPS.Z (DX), K1, Z2 // g
	VMOVUPS.Z (BX), K1, Z3 // up
	VMULPS    Z0, Z2, Z4   // g·z
	VMULPS    Z7, Z4, Z4   // ·s: gup
	VMULPS    Z3, Z2, Z5   // g·up
	VMULPS    Z7, Z5, Z5   // ·s
	VSUBPS    Z7, Z29, Z6  // 1 − s
	VMULPS    Z6, Z0, Z6   // z·(1 − s)
	VADDPS    Z6, Z29, Z6  // 1 + z·(1 − s)
	VMULPS    Z6, Z5, Z5   // ggate
	VMOVUPS   Z4, K1, (R8)
	VMOVUPS   Z5, K1, (DI)
	ADDQ      $64, SI
	ADDQ      $64, BX
	ADDQ      $64, DX
	ADDQ      $64, DI
	ADDQ      $64, R8
	SUBQ      $16, CX
	JG        sbloop

sbdone:
	VZEROUPPER
	RET
