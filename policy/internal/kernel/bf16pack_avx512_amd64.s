//go:build !purego

#include "textflag.h"

// Packing of the BF16 products' operands: float32 rounded to bfloat16
// (nearest, ties to even; a NaN stays a NaN, quieted), as toBF16 does.

// consts loads the constants of ROUND: Z29 = 0x7fff, Z30 = 1,
// Z31 = 0x7fffffff, Z28 = 0x7f800000, Z27 = 0x40.
#define CONSTS \
	MOVL         $0x7fff, AX  \
	VPBROADCASTD AX, Z29      \
	MOVL         $1, AX       \
	VPBROADCASTD AX, Z30      \
	MOVL         $0x7fffffff, AX \
	VPBROADCASTD AX, Z31      \
	MOVL         $0x7f800000, AX \
	VPBROADCASTD AX, Z28      \
	MOVL         $0x40, AX    \
	VPBROADCASTD AX, Z27

// ROUND sets u to the bfloat16 of each float32 of x in its low 16 bits
// (the high bits zero); x and t are clobbered.
#define ROUND(x, t, u) \
	VPSRLD  $16, x, t          \
	VPANDD  Z30, t, u          \
	VPADDD  Z29, u, u          \
	VPADDD  x, u, u            \
	VPSRLD  $16, u, u          \
	VPANDD  Z31, x, x          \
	VPCMPUD $6, Z28, x, K5     \
	VPORD   Z27, t, K5, u

// func bf16AlongAVX512(dst *uint16, src *float32, n int)
//
// dst[i] = bfloat16(src[i]) for 16·n values.
TEXT ·bf16AlongAVX512(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	TESTQ CX, CX
	JZ   alongdone
	CONSTS

alongloop:
	VMOVUPS (SI), Z0
	ROUND(Z0, Z1, Z2)
	VPMOVDW Z2, (DI)
	ADDQ    $64, SI
	ADDQ    $32, DI
	DECQ    CX
	JNZ     alongloop
	VZEROUPPER

alongdone:
	RET

// func bf16AcrossAVX512(dst *uint32, r0, r1 *float32, n int)
//
// dst[j] = bfloat16(r0[j]) | bfloat16(r1[j])<<16 for 16·n values.
TEXT ·bf16AcrossAVX512(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ r0+8(FP), SI
	MOVQ r1+16(FP), DX
	MOVQ n+24(FP), CX
	TESTQ CX, CX
	JZ   acrossdone
	CONSTS

acrossloop:
	VMOVUPS (SI), Z0
	VMOVUPS (DX), Z3
	ROUND(Z0, Z1, Z2)
	ROUND(Z3, Z4, Z5)
	VPSLLD  $16, Z5, Z5
	VPORD   Z5, Z2, Z2
	VMOVDQU32 Z2, (DI)
	ADDQ    $64, SI
	ADDQ    $64, DX
	ADDQ    $64, DI
	DECQ    CX
	JNZ     acrossloop
	VZEROUPPER

acrossdone:
	RET
