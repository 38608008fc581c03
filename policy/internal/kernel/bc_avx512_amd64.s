//go:build !purego

#include "textflag.h"

// AVX-512 kernel of MatMulNN and MatMulTN: a 6×64 tile of c accumulated in
// 24 ZMM registers by broadcasting a(i, p) and multiplying the b row p, one
// VFMADD231PS per p in increasing order (a sequential reduction over k).

#define BC4(ar, z0, z1, z2, z3) \
	VBROADCASTSS (ar)(DX*1), Z28 \
	VFMADD231PS  Z24, Z28, z0    \
	VFMADD231PS  Z25, Z28, z1    \
	VFMADD231PS  Z26, Z28, z2    \
	VFMADD231PS  Z27, Z28, z3

#define LOADC(off, z0, z1, z2, z3) \
	MOVQ      off(DI), DX          \
	VMOVUPS.Z (DX), K1, z0         \
	VMOVUPS.Z 64(DX), K2, z1       \
	VMOVUPS.Z 128(DX), K3, z2      \
	VMOVUPS.Z 192(DX), K4, z3

#define STOREC(bit, off, z0, z1, z2, z3, skip) \
	TESTQ   $bit, AX      \
	JZ      skip          \
	MOVQ    off(DI), DX   \
	VMOVUPS z0, K1, (DX)  \
	VMOVUPS z1, K2, 64(DX) \
	VMOVUPS z2, K3, 128(DX) \
	VMOVUPS z3, K4, 192(DX) \
skip:

// func bc6x64AVX512(p *bcArgs)
TEXT ·bc6x64AVX512(SB), NOSPLIT, $0-8
	MOVQ  p+0(FP), DI
	MOVQ  168(DI), AX
	KMOVW AX, K1
	MOVQ  176(DI), AX
	KMOVW AX, K2
	MOVQ  184(DI), AX
	KMOVW AX, K3
	MOVQ  192(DI), AX
	KMOVW AX, K4
	CMPQ  200(DI), $0
	JEQ   zero
	LOADC(64, Z0, Z1, Z2, Z3)
	LOADC(72, Z4, Z5, Z6, Z7)
	LOADC(80, Z8, Z9, Z10, Z11)
	LOADC(88, Z12, Z13, Z14, Z15)
	LOADC(96, Z16, Z17, Z18, Z19)
	LOADC(104, Z20, Z21, Z22, Z23)
	JMP   start

zero:
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

start:
	MOVQ  152(DI), CX
	TESTQ CX, CX
	JZ    store
	MOVQ  0(DI), R8
	MOVQ  8(DI), R9
	MOVQ  16(DI), R10
	MOVQ  24(DI), R11
	MOVQ  32(DI), R12
	MOVQ  40(DI), R13
	MOVQ  128(DI), BX
	MOVQ  136(DI), SI
	MOVQ  144(DI), AX
	XORQ  DX, DX

loop:
	VMOVUPS.Z (BX), K1, Z24
	VMOVUPS.Z 64(BX), K2, Z25
	VMOVUPS.Z 128(BX), K3, Z26
	VMOVUPS.Z 192(BX), K4, Z27
	BC4(R8, Z0, Z1, Z2, Z3)
	BC4(R9, Z4, Z5, Z6, Z7)
	BC4(R10, Z8, Z9, Z10, Z11)
	BC4(R11, Z12, Z13, Z14, Z15)
	BC4(R12, Z16, Z17, Z18, Z19)
	BC4(R13, Z20, Z21, Z22, Z23)
	ADDQ SI, DX
	ADDQ AX, BX
	DECQ CX
	JNZ  loop

store:
	MOVQ 160(DI), AX
	STOREC(1, 64, Z0, Z1, Z2, Z3, s0)
	STOREC(2, 72, Z4, Z5, Z6, Z7, s1)
	STOREC(4, 80, Z8, Z9, Z10, Z11, s2)
	STOREC(8, 88, Z12, Z13, Z14, Z15, s3)
	STOREC(16, 96, Z16, Z17, Z18, Z19, s4)
	STOREC(32, 104, Z20, Z21, Z22, Z23, s5)
	VZEROUPPER
	RET

// func bc1x64AVX512(p *bcArgs)
//
// The one-row case of bc6x64AVX512 (row a[0], c[0]): a vector-matrix
// product c(+)= Σ_p a(p)·b row p over up to 64 columns, the same sequence of
// fused multiply-adds per output.
TEXT ·bc1x64AVX512(SB), NOSPLIT, $0-8
	MOVQ      p+0(FP), DI
	MOVQ      168(DI), AX
	KMOVW     AX, K1
	MOVQ      176(DI), AX
	KMOVW     AX, K2
	MOVQ      184(DI), AX
	KMOVW     AX, K3
	MOVQ      192(DI), AX
	KMOVW     AX, K4
	MOVQ      64(DI), R9
	VPXORD    Z0, Z0, Z0
	VPXORD    Z1, Z1, Z1
	VPXORD    Z2, Z2, Z2
	VPXORD    Z3, Z3, Z3
	CMPQ      200(DI), $0
	JEQ       start1
	VMOVUPS.Z (R9), K1, Z0
	VMOVUPS.Z 64(R9), K2, Z1
	VMOVUPS.Z 128(R9), K3, Z2
	VMOVUPS.Z 192(R9), K4, Z3

start1:
	MOVQ  152(DI), CX
	TESTQ CX, CX
	JZ    store1
	MOVQ  0(DI), R8
	MOVQ  128(DI), BX
	MOVQ  136(DI), SI
	MOVQ  144(DI), AX

loop1:
	VBROADCASTSS (R8), Z28
	VMOVUPS.Z   (BX), K1, Z24
	VMOVUPS.Z   64(BX), K2, Z25
	VMOVUPS.Z   128(BX), K3, Z26
	VMOVUPS.Z   192(BX), K4, Z27
	VFMADD231PS Z24, Z28, Z0
	VFMADD231PS Z25, Z28, Z1
	VFMADD231PS Z26, Z28, Z2
	VFMADD231PS Z27, Z28, Z3
	ADDQ        SI, R8
	ADDQ        AX, BX
	DECQ        CX
	JNZ         loop1

store1:
	VMOVUPS Z0, K1, (R9)
	VMOVUPS Z1, K2, 64(R9)
	VMOVUPS Z2, K3, 128(R9)
	VMOVUPS Z3, K4, 192(R9)
	VZEROUPPER
	RET
