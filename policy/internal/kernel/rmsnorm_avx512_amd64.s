//go:build !purego

#include "textflag.h"

// Element-wise parts of RMSNorm, one rounding per product (no fused
// multiply-add), in the order of rmsnorm.go's Go loops.

// TAILMASK sets K1 to the lanes of the next block of CX remaining values
// (all 16 when CX ≥ 16) and jumps to done when none remain.
#define TAILMASK(full, body, done) \
	CMPQ  CX, $16 \
	JGE   full    \
	TESTQ CX, CX  \
	JZ    done    \
	MOVL  $1, AX  \
	SHLL  CX, AX  \
	DECL  AX      \
	KMOVW AX, K1  \
	JMP   body    \
full:             \
	KXNORW K1, K1, K1

// func rmsBwdAVX512(gx, tr, res, x, w, grad *float32, inv, c float32, n, hasRes int)
TEXT ·rmsBwdAVX512(SB), NOSPLIT, $0-72
	MOVQ         gx+0(FP), DI
	MOVQ         tr+8(FP), R8
	MOVQ         res+16(FP), R9
	MOVQ         x+24(FP), SI
	MOVQ         w+32(FP), BX
	MOVQ         grad+40(FP), DX
	VBROADCASTSS inv+48(FP), Z30
	VBROADCASTSS c+52(FP), Z31
	MOVQ         n+56(FP), CX
	MOVQ         hasRes+64(FP), R10

rbloop:
	TAILMASK(rbfull, rbbody, rbdone)

rbbody:
	VMOVUPS.Z (SI), K1, Z0   // x
	VMOVUPS.Z (BX), K1, Z1   // w
	VMOVUPS.Z (DX), K1, Z2   // g
	VMULPS    Z0, Z2, Z3     // g·x
	VMULPS    Z30, Z3, Z3    // ·inv
	VMOVUPS   Z3, K1, (R8)
	VMULPS    Z1, Z30, Z4    // inv·w
	VMULPS    Z2, Z4, Z4     // ·g
	VMULPS    Z0, Z31, Z5    // c·x
	VSUBPS    Z5, Z4, Z4
	TESTQ     R10, R10
	JZ        rbstore
	VMOVUPS.Z (R9), K1, Z6
	VADDPS    Z4, Z6, Z4     // res + …
	ADDQ      $64, R9

rbstore:
	VMOVUPS   Z4, K1, (DI)
	ADDQ      $64, SI
	ADDQ      $64, BX
	ADDQ      $64, DX
	ADDQ      $64, R8
	ADDQ      $64, DI
	SUBQ      $16, CX
	JG        rbloop

rbdone:
	VZEROUPPER
	RET
