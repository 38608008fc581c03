//go:build !purego

#include "textflag.h"

// The constants and the EXP steps of act_avx512_amd64.s (a macro is local
// to its file), so that SoftmaxScaled's exp has the bits of Exp.
DATA smconst<>+0(SB)/4, $0x3fb8aa3b  // log2(e)
DATA smconst<>+4(SB)/4, $0x3f318000  // ln2 high part
DATA smconst<>+8(SB)/4, $0xb95e8083  // ln2 low part
DATA smconst<>+12(SB)/4, $0x39506967 // p0
DATA smconst<>+16(SB)/4, $0x3ab743ce // p1
DATA smconst<>+20(SB)/4, $0x3c088908 // p2
DATA smconst<>+24(SB)/4, $0x3d2aa9c1 // p3
DATA smconst<>+28(SB)/4, $0x3e2aaaaa // p4
DATA smconst<>+32(SB)/4, $0x3f000000 // p5
DATA smconst<>+36(SB)/4, $0x3f800000 // 1
DATA smconst<>+40(SB)/4, $0x43000000 // 128 (clamp)
DATA smconst<>+44(SB)/4, $0xc3000000 // -128 (clamp)
DATA smconst<>+48(SB)/4, $0xff800000 // -Inf
GLOBL smconst<>(SB), RODATA|NOPTR, $52

#define SMLOADEXPCONST \
	VBROADCASTSS smconst<>+0(SB), Z20  \
	VBROADCASTSS smconst<>+4(SB), Z21  \
	VBROADCASTSS smconst<>+8(SB), Z22  \
	VBROADCASTSS smconst<>+12(SB), Z23 \
	VBROADCASTSS smconst<>+16(SB), Z24 \
	VBROADCASTSS smconst<>+20(SB), Z25 \
	VBROADCASTSS smconst<>+24(SB), Z26 \
	VBROADCASTSS smconst<>+28(SB), Z27 \
	VBROADCASTSS smconst<>+32(SB), Z28 \
	VBROADCASTSS smconst<>+36(SB), Z29 \
	VBROADCASTSS smconst<>+40(SB), Z30 \
	VBROADCASTSS smconst<>+44(SB), Z31

// SMEXP sets z = e^z as EXP does. Clobbers Z16, Z17, Z18.
#define SMEXP(z) \
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

// SMMASK sets K1 to the lanes of the next 16 elements when CX of them
// remain (CX > 0): all 16, or the low CX.
#define SMMASK(full, body) \
	CMPQ   CX, $16  \
	JGE    full     \
	MOVL   $1, AX   \
	SHLL   CX, AX   \
	DECL   AX       \
	KMOVW  AX, K1   \
	JMP    body     \
full:               \
	KXNORW K1, K1, K1 \
body:

// func softmaxExpAVX512(s *float32, n int, scale float32)
// s = e^(s·scale − max) over n ≥ 1 elements; see softmaxExpAVX512Go.
TEXT ·softmaxExpAVX512(SB), NOSPLIT, $0-20
	MOVQ         s+0(FP), DI
	VBROADCASTSS scale+16(FP), Z1
	VBROADCASTSS smconst<>+48(SB), Z2

	// s *= scale; Z2 = the lane-wise maximum.
	MOVQ n+8(FP), CX
	MOVQ DI, SI

smscale:
	SMMASK(smscalefull, smscalebody)
	VMOVUPS.Z (SI), K1, Z0
	VMULPS    Z1, Z0, Z0
	VMOVUPS   Z0, K1, (SI)
	VMAXPS    Z0, Z2, K1, Z2
	ADDQ      $64, SI
	SUBQ      $16, CX
	JG        smscale

	// Z3 = the maximum, broadcast.
	VEXTRACTF64X4 $1, Z2, Y3
	VMAXPS        Y3, Y2, Y2
	VEXTRACTF128  $1, Y2, X3
	VMAXPS        X3, X2, X2
	VPERMILPS     $0x4e, X2, X3
	VMAXPS        X3, X2, X2
	VPERMILPS     $0xb1, X2, X3
	VMAXPS        X3, X2, X2
	VBROADCASTSS  X2, Z3

	// s = e^(s − max).
	SMLOADEXPCONST
	MOVQ n+8(FP), CX
	MOVQ DI, SI

smexp:
	SMMASK(smexpfull, smexpbody)
	VMOVUPS.Z (SI), K1, Z0
	VSUBPS    Z3, Z0, Z0
	SMEXP(Z0)
	VMOVUPS   Z0, K1, (SI)
	ADDQ      $64, SI
	SUBQ      $16, CX
	JG        smexp

	VZEROUPPER
	RET
