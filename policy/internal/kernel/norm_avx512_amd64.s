//go:build !purego

#include "textflag.h"

// func normScaleAVX512(dst, x, w *float32, n int, inv float32)
// dst[i] = w[i]·(x[i]·inv) for n ≥ 1 elements (dst may be x).
TEXT ·normScaleAVX512(SB), NOSPLIT, $0-36
	MOVQ         dst+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         w+16(FP), BX
	MOVQ         n+24(FP), CX
	VBROADCASTSS inv+32(FP), Z1

nsloop:
	CMPQ  CX, $16
	JGE   nsfull
	MOVL  $1, AX
	SHLL  CX, AX
	DECL  AX
	KMOVW AX, K1
	JMP   nsbody

nsfull:
	KXNORW K1, K1, K1

nsbody:
	VMOVUPS.Z (SI), K1, Z0
	VMULPS    Z1, Z0, Z0
	VMOVUPS.Z (BX), K1, Z2
	VMULPS    Z0, Z2, Z0
	VMOVUPS   Z0, K1, (DI)
	ADDQ      $64, SI
	ADDQ      $64, BX
	ADDQ      $64, DI
	SUBQ      $16, CX
	JG        nsloop

	VZEROUPPER
	RET
