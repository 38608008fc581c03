//go:build !purego

#include "textflag.h"

// The lane-pass AVX-512 kernel of MatMulNT: a 6×64 tile of c = a·bᵀ whose
// 16-lane dot products (see the package documentation) are computed one lane
// at a time. Pass l accumulates lane l of all 384 outputs in 24 ZMM
// registers, 16 outputs per register: for p = l, l+16, l+32, ... in
// increasing order, one VFMADD231PS of the broadcast a(i, p) and the 16
// values b(j..j+15, p), read from a copy of the tile's 64 b rows packed
// transposed by lane (ntlPack). Each output's lane l is therefore the same
// chain of fused multiply-adds, from +0, as in nt4x4AVX512's accumulator
// lane l, with the operands in the same instruction positions. The passes
// run in the bit-reversed lane order 0, 8, 4, 12, 2, 10, 6, 14, 1, 9, 5, 13,
// 3, 11, 7, 15 and merge like a binary counter: after pass n the pass
// results below it on a stack of partial sums are added, the older one as
// the first operand, once per trailing one bit of n. That performs exactly
// the fixed tree (lane l+8 onto l, then l+4, l+2, l+1) by vertical VADDPS,
// with no shuffles. Lanes with no product in the last partial block of k
// get the +0 that nt4x4AVX512's zero-padded FMA adds.

// NLBC4 multiplies the broadcast a(row ar, p) by the four b vectors
// Z24..Z27 into the row's four accumulators.
#define NLBC4(ar, z0, z1, z2, z3) \
	VBROADCASTSS (ar)(DX*1), Z28 \
	VFMADD231PS  Z24, Z28, z0    \
	VFMADD231PS  Z25, Z28, z1    \
	VFMADD231PS  Z26, Z28, z2    \
	VFMADD231PS  Z27, Z28, z3

// NLADD4 adds Z28 (as the second operand) to four accumulators.
#define NLADD4(z0, z1, z2, z3) \
	VADDPS Z28, z0, z0 \
	VADDPS Z28, z1, z1 \
	VADDPS Z28, z2, z2 \
	VADDPS Z28, z3, z3

// NLMERGE4 adds the four saved vectors at off(R14) to four accumulators,
// the saved one as the first operand: z = saved + z.
#define NLMERGE4(o0, o1, o2, o3, z0, z1, z2, z3) \
	VMOVUPS o0(R14), Z28 \
	VADDPS  z0, Z28, z0  \
	VMOVUPS o1(R14), Z28 \
	VADDPS  z1, Z28, z1  \
	VMOVUPS o2(R14), Z28 \
	VADDPS  z2, Z28, z2  \
	VMOVUPS o3(R14), Z28 \
	VADDPS  z3, Z28, z3

#define NLSAVE4(o0, o1, o2, o3, z0, z1, z2, z3) \
	VMOVUPS z0, o0(R14) \
	VMOVUPS z1, o1(R14) \
	VMOVUPS z2, o2(R14) \
	VMOVUPS z3, o3(R14)

// NLSTORE stores row r's four accumulators to the c row at off(DI) if bit
// r of the row mask is set; with acc it adds the old value (as the second
// operand) first.
#define NLSTORE(bit, off, z0, z1, z2, z3, skip, noacc) \
	TESTQ     $bit, 128(DI)      \
	JZ        skip               \
	MOVQ      off(DI), AX        \
	CMPQ      136(DI), $0        \
	JEQ       noacc              \
	VMOVUPS   (AX), Z28          \
	VADDPS    Z28, z0, z0        \
	VMOVUPS   64(AX), Z28        \
	VADDPS    Z28, z1, z1        \
	VMOVUPS   128(AX), Z28       \
	VADDPS    Z28, z2, z2        \
	VMOVUPS   192(AX), Z28       \
	VADDPS    Z28, z3, z3        \
noacc:                         \
	VMOVUPS   z0, (AX)           \
	VMOVUPS   z1, 64(AX)         \
	VMOVUPS   z2, 128(AX)        \
	VMOVUPS   z3, 192(AX)        \
skip:

// func ntl6x64AVX512(p *ntlArgs)
//
// Computes the 6×64 tile of c whose rows start at a[r] and c[r] (r < 6,
// stored where bit r of rowmask is set) from the packed b panel: lane l's
// vector for p = 16q + l at b + l·lstep + q·256 bytes. Every lane takes kq
// steps, lanes l < kr one more; with kr > 0 the others then add +0. The
// stack of partial sums (at most four of 24 vectors) is at s.
TEXT ·ntl6x64AVX512(SB), NOSPLIT, $0-8
	MOVQ p+0(FP), DI
	MOVQ 0(DI), R8
	MOVQ 8(DI), R9
	MOVQ 16(DI), R10
	MOVQ 24(DI), R11
	MOVQ 32(DI), R12
	MOVQ 40(DI), R13
	MOVQ 144(DI), R14
	XORQ R15, R15

pass:
	// AX = the lane of pass R15: its four bits reversed.
	MOVQ R15, AX
	ANDQ $1, AX
	SHLQ $3, AX
	MOVQ R15, SI
	ANDQ $2, SI
	SHLQ $1, SI
	ORQ  SI, AX
	MOVQ R15, SI
	ANDQ $4, SI
	SHRQ $1, SI
	ORQ  SI, AX
	MOVQ R15, SI
	SHRQ $3, SI
	ORQ  SI, AX

	MOVQ 112(DI), CX
	CMPQ AX, 120(DI)
	JGE  steps
	INCQ CX

steps:
	MOVQ  AX, BX
	IMULQ 104(DI), BX
	ADDQ  96(DI), BX
	MOVQ  AX, DX
	SHLQ  $2, DX

	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	VPXORD Z14, Z14, Z14
	VPXORD Z15, Z15, Z15
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	VPXORD Z18, Z18, Z18
	VPXORD Z19, Z19, Z19
	VPXORD Z20, Z20, Z20
	VPXORD Z21, Z21, Z21
	VPXORD Z22, Z22, Z22
	VPXORD Z23, Z23, Z23
	TESTQ  CX, CX
	JZ     padded

loop:
	VMOVUPS (BX), Z24
	VMOVUPS 64(BX), Z25
	VMOVUPS 128(BX), Z26
	VMOVUPS 192(BX), Z27
	NLBC4(R8, Z0, Z1, Z2, Z3)
	NLBC4(R9, Z4, Z5, Z6, Z7)
	NLBC4(R10, Z8, Z9, Z10, Z11)
	NLBC4(R11, Z12, Z13, Z14, Z15)
	NLBC4(R12, Z16, Z17, Z18, Z19)
	NLBC4(R13, Z20, Z21, Z22, Z23)
	ADDQ $64, DX
	ADDQ $256, BX
	DECQ CX
	JNZ  loop

padded:
	// A lane past k in the last partial block: + (+0), as the padded FMA.
	CMPQ   120(DI), $0
	JEQ    merge
	CMPQ   AX, 120(DI)
	JLT    merge
	VPXORD Z28, Z28, Z28
	NLADD4(Z0, Z1, Z2, Z3)
	NLADD4(Z4, Z5, Z6, Z7)
	NLADD4(Z8, Z9, Z10, Z11)
	NLADD4(Z12, Z13, Z14, Z15)
	NLADD4(Z16, Z17, Z18, Z19)
	NLADD4(Z20, Z21, Z22, Z23)

merge:
	MOVQ R15, SI

mergeloop:
	TESTQ $1, SI
	JZ    push
	SUBQ  $1536, R14
	NLMERGE4(0, 64, 128, 192, Z0, Z1, Z2, Z3)
	NLMERGE4(256, 320, 384, 448, Z4, Z5, Z6, Z7)
	NLMERGE4(512, 576, 640, 704, Z8, Z9, Z10, Z11)
	NLMERGE4(768, 832, 896, 960, Z12, Z13, Z14, Z15)
	NLMERGE4(1024, 1088, 1152, 1216, Z16, Z17, Z18, Z19)
	NLMERGE4(1280, 1344, 1408, 1472, Z20, Z21, Z22, Z23)
	SHRQ  $1, SI
	JMP   mergeloop

push:
	CMPQ R15, $15
	JEQ  store
	NLSAVE4(0, 64, 128, 192, Z0, Z1, Z2, Z3)
	NLSAVE4(256, 320, 384, 448, Z4, Z5, Z6, Z7)
	NLSAVE4(512, 576, 640, 704, Z8, Z9, Z10, Z11)
	NLSAVE4(768, 832, 896, 960, Z12, Z13, Z14, Z15)
	NLSAVE4(1024, 1088, 1152, 1216, Z16, Z17, Z18, Z19)
	NLSAVE4(1280, 1344, 1408, 1472, Z20, Z21, Z22, Z23)
	ADDQ $1536, R14
	INCQ R15
	JMP  pass

store:
	NLSTORE(1, 48, Z0, Z1, Z2, Z3, s0, n0)
	NLSTORE(2, 56, Z4, Z5, Z6, Z7, s1, n1)
	NLSTORE(4, 64, Z8, Z9, Z10, Z11, s2, n2)
	NLSTORE(8, 72, Z12, Z13, Z14, Z15, s3, n3)
	NLSTORE(16, 80, Z16, Z17, Z18, Z19, s4, n4)
	NLSTORE(32, 88, Z20, Z21, Z22, Z23, s5, n5)
	VZEROUPPER
	RET

// func ntlPackAVX512(dst, b *float32, idx *[64]int32, k, nq int)
//
// ntlPack by gathers: for each p < k, the 64 values b(j, p) (at b + p·4 +
// idx[j] bytes) are stored as lane (p mod 16)'s vector p/16, at dst +
// ((p mod 16)·nq + p/16)·256 bytes.
TEXT ·ntlPackAVX512(SB), NOSPLIT, $0-40
	MOVQ      dst+0(FP), DI
	MOVQ      b+8(FP), SI
	MOVQ      idx+16(FP), R8
	MOVQ      k+24(FP), CX
	MOVQ      nq+32(FP), R9
	SHLQ      $8, R9
	VMOVDQU32 (R8), Z4
	VMOVDQU32 64(R8), Z5
	VMOVDQU32 128(R8), Z6
	VMOVDQU32 192(R8), Z7
	XORQ      DX, DX
	TESTQ     CX, CX
	JZ        packdone

packloop:
	MOVQ       DX, AX
	ANDQ       $15, AX
	IMULQ      R9, AX
	MOVQ       DX, BX
	SHRQ       $4, BX
	SHLQ       $8, BX
	ADDQ       BX, AX
	ADDQ       DI, AX
	KXNORW     K1, K1, K1
	KXNORW     K2, K2, K2
	KXNORW     K3, K3, K3
	KXNORW     K4, K4, K4
	VGATHERDPS (SI)(Z4*1), K1, Z0
	VGATHERDPS (SI)(Z5*1), K2, Z1
	VGATHERDPS (SI)(Z6*1), K3, Z2
	VGATHERDPS (SI)(Z7*1), K4, Z3
	VMOVUPS    Z0, (AX)
	VMOVUPS    Z1, 64(AX)
	VMOVUPS    Z2, 128(AX)
	VMOVUPS    Z3, 192(AX)
	ADDQ       $4, SI
	INCQ       DX
	CMPQ       DX, CX
	JLT        packloop

packdone:
	VZEROUPPER
	RET
