//go:build amd64 && !purego

#include "textflag.h"

// RoPE on heads consecutive head vectors (ropeGo's arithmetic, one rounding
// per product, no fused multiply-adds), 16 pairs at a time, the last ones
// masked.

// func ropeAVX512(x, cos, sin *float32, heads, half int, dir float32)
TEXT ·ropeAVX512(SB), NOSPLIT, $0-44
	MOVQ         x+0(FP), DI
	MOVQ         cos+8(FP), SI
	MOVQ         sin+16(FP), DX
	MOVQ         heads+24(FP), CX
	MOVQ         half+32(FP), BX
	VBROADCASTSS dir+40(FP), Z0
	// K1: the lanes of the last, partial group of 16 pairs.
	MOVQ         BX, R8
	ANDQ         $15, R8
	MOVQ         $1, R10
	SHLXQ        R8, R10, R10
	DECQ         R10
	KMOVW        R10, K1

head:
	TESTQ CX, CX
	JZ    done
	LEAQ  (DI)(BX*4), R9 // the second half
	XORQ  AX, AX
	MOVQ  BX, R8

full:
	CMPQ    R8, $16
	JLT     tail
	VMOVUPS (SI)(AX*4), Z1 // c
	VMOVUPS (DX)(AX*4), Z2
	VMULPS  Z0, Z2, Z2     // s = dir·sin
	VMOVUPS (DI)(AX*4), Z3 // a
	VMOVUPS (R9)(AX*4), Z4 // b
	VMULPS  Z1, Z3, Z5     // a·c
	VMULPS  Z2, Z4, Z6     // b·s
	VSUBPS  Z6, Z5, Z5     // a·c − b·s
	VMULPS  Z1, Z4, Z7     // b·c
	VMULPS  Z2, Z3, Z8     // a·s
	VADDPS  Z8, Z7, Z7     // b·c + a·s
	VMOVUPS Z5, (DI)(AX*4)
	VMOVUPS Z7, (R9)(AX*4)
	ADDQ    $16, AX
	SUBQ    $16, R8
	JMP     full

tail:
	TESTQ   R8, R8
	JZ      next
	VMOVUPS (SI)(AX*4), K1, Z1
	VMOVUPS (DX)(AX*4), K1, Z2
	VMULPS  Z0, Z2, Z2
	VMOVUPS (DI)(AX*4), K1, Z3
	VMOVUPS (R9)(AX*4), K1, Z4
	VMULPS  Z1, Z3, Z5
	VMULPS  Z2, Z4, Z6
	VSUBPS  Z6, Z5, Z5
	VMULPS  Z1, Z4, Z7
	VMULPS  Z2, Z3, Z8
	VADDPS  Z8, Z7, Z7
	VMOVUPS Z5, K1, (DI)(AX*4)
	VMOVUPS Z7, K1, (R9)(AX*4)

next:
	LEAQ (DI)(BX*8), DI // the next head: 2·half values on
	DECQ CX
	JMP  head

done:
	VZEROUPPER
	RET
