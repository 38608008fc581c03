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

// BC6 accumulates one step p of the 6×64 tile: the b row p in Z24–Z27
// times a(i0+r, p) broadcast, for the six rows.
#define BC6 \
	BC4(R8, Z0, Z1, Z2, Z3)    \
	BC4(R9, Z4, Z5, Z6, Z7)    \
	BC4(R10, Z8, Z9, Z10, Z11) \
	BC4(R11, Z12, Z13, Z14, Z15) \
	BC4(R12, Z16, Z17, Z18, Z19) \
	BC4(R13, Z20, Z21, Z22, Z23)

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
	// A tile of 64 whole columns (the last vector's mask full, so all
	// four are) loads b without masks: the same values, and faster on
	// these cores (BenchmarkBroadcastTileLoop; results/performance.md).
	CMPQ  192(DI), $0xffff
	JEQ   full

loop:
	VMOVUPS.Z (BX), K1, Z24
	VMOVUPS.Z 64(BX), K2, Z25
	VMOVUPS.Z 128(BX), K3, Z26
	VMOVUPS.Z 192(BX), K4, Z27
	BC6
	ADDQ SI, DX
	ADDQ AX, BX
	DECQ CX
	JNZ  loop
	JMP  store

full:
	VMOVUPS (BX), Z24
	VMOVUPS 64(BX), Z25
	VMOVUPS 128(BX), Z26
	VMOVUPS 192(BX), Z27
	BC6
	ADDQ SI, DX
	ADDQ AX, BX
	DECQ CX
	JNZ  full

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

// func attv128AVX512(p *attvArgs)
//
// A 128-column slab of AttendValues: out(+)= Σ_t p_r[t] · v row t over eight
// 16-column vectors r, each with its own head's weights p_r; per output the
// same sequence of fused multiply-adds as bc1x64AVX512.
TEXT ·attv128AVX512(SB), NOSPLIT, $0-8
	MOVQ    p+0(FP), DI
	MOVQ    72(DI), R9
	VPXORD  Z0, Z0, Z0
	VPXORD  Z1, Z1, Z1
	VPXORD  Z2, Z2, Z2
	VPXORD  Z3, Z3, Z3
	VPXORD  Z4, Z4, Z4
	VPXORD  Z5, Z5, Z5
	VPXORD  Z6, Z6, Z6
	VPXORD  Z7, Z7, Z7
	CMPQ    96(DI), $0
	JEQ     attvstart
	VMOVUPS (R9), Z0
	VMOVUPS 64(R9), Z1
	VMOVUPS 128(R9), Z2
	VMOVUPS 192(R9), Z3
	VMOVUPS 256(R9), Z4
	VMOVUPS 320(R9), Z5
	VMOVUPS 384(R9), Z6
	VMOVUPS 448(R9), Z7

attvstart:
	MOVQ 64(DI), BX
	MOVQ 80(DI), SI
	MOVQ 88(DI), CX
	MOVQ 0(DI), AX
	MOVQ 8(DI), R8
	MOVQ 16(DI), R10
	MOVQ 24(DI), R11
	MOVQ 32(DI), R12
	MOVQ 40(DI), R13
	MOVQ 48(DI), DX
	MOVQ 56(DI), DI

attvloop:
	VBROADCASTSS (AX), Z16
	VBROADCASTSS (R8), Z17
	VBROADCASTSS (R10), Z18
	VBROADCASTSS (R11), Z19
	VBROADCASTSS (R12), Z20
	VBROADCASTSS (R13), Z21
	VBROADCASTSS (DX), Z22
	VBROADCASTSS (DI), Z23
	VFMADD231PS  (BX), Z16, Z0
	VFMADD231PS  64(BX), Z17, Z1
	VFMADD231PS  128(BX), Z18, Z2
	VFMADD231PS  192(BX), Z19, Z3
	VFMADD231PS  256(BX), Z20, Z4
	VFMADD231PS  320(BX), Z21, Z5
	VFMADD231PS  384(BX), Z22, Z6
	VFMADD231PS  448(BX), Z23, Z7
	ADDQ         $4, AX
	ADDQ         $4, R8
	ADDQ         $4, R10
	ADDQ         $4, R11
	ADDQ         $4, R12
	ADDQ         $4, R13
	ADDQ         $4, DX
	ADDQ         $4, DI
	ADDQ         SI, BX
	DECQ         CX
	JNZ          attvloop

	VMOVUPS Z0, (R9)
	VMOVUPS Z1, 64(R9)
	VMOVUPS Z2, 128(R9)
	VMOVUPS Z3, 192(R9)
	VMOVUPS Z4, 256(R9)
	VMOVUPS Z5, 320(R9)
	VMOVUPS Z6, 384(R9)
	VMOVUPS Z7, 448(R9)
	VZEROUPPER
	RET

// func attv128x2AVX512(p *attvArgs)
//
// attv128AVX512 for heads of a multiple of 32 columns: vectors 2i and 2i+1
// share a head, so one broadcast of p[2i] serves both (p[2i+1] is unused).
TEXT ·attv128x2AVX512(SB), NOSPLIT, $0-8
	MOVQ    p+0(FP), DI
	MOVQ    72(DI), R9
	VPXORD  Z0, Z0, Z0
	VPXORD  Z1, Z1, Z1
	VPXORD  Z2, Z2, Z2
	VPXORD  Z3, Z3, Z3
	VPXORD  Z4, Z4, Z4
	VPXORD  Z5, Z5, Z5
	VPXORD  Z6, Z6, Z6
	VPXORD  Z7, Z7, Z7
	CMPQ    96(DI), $0
	JEQ     attv2start
	VMOVUPS (R9), Z0
	VMOVUPS 64(R9), Z1
	VMOVUPS 128(R9), Z2
	VMOVUPS 192(R9), Z3
	VMOVUPS 256(R9), Z4
	VMOVUPS 320(R9), Z5
	VMOVUPS 384(R9), Z6
	VMOVUPS 448(R9), Z7

attv2start:
	MOVQ 64(DI), BX
	MOVQ 80(DI), SI
	MOVQ 88(DI), CX
	MOVQ 0(DI), AX
	MOVQ 16(DI), R8
	MOVQ 32(DI), R10
	MOVQ 48(DI), R11
	XORQ DX, DX

attv2loop:
	VBROADCASTSS (AX)(DX*4), Z16
	VBROADCASTSS (R8)(DX*4), Z17
	VBROADCASTSS (R10)(DX*4), Z18
	VBROADCASTSS (R11)(DX*4), Z19
	VFMADD231PS  (BX), Z16, Z0
	VFMADD231PS  64(BX), Z16, Z1
	VFMADD231PS  128(BX), Z17, Z2
	VFMADD231PS  192(BX), Z17, Z3
	VFMADD231PS  256(BX), Z18, Z4
	VFMADD231PS  320(BX), Z18, Z5
	VFMADD231PS  384(BX), Z19, Z6
	VFMADD231PS  448(BX), Z19, Z7
	INCQ         DX
	ADDQ         SI, BX
	CMPQ         DX, CX
	JLT          attv2loop

	VMOVUPS Z0, (R9)
	VMOVUPS Z1, 64(R9)
	VMOVUPS Z2, 128(R9)
	VMOVUPS Z3, 192(R9)
	VMOVUPS Z4, 256(R9)
	VMOVUPS Z5, 320(R9)
	VMOVUPS Z6, 384(R9)
	VMOVUPS Z7, 448(R9)
	VZEROUPPER
	RET

// func attv128x2F16AVX512(p *attvArgs)
//
// attv128x2AVX512 over binary16 value rows (ldv in bytes), each vector of
// 16 values widened exactly by VCVTPH2PS before the same fused
// multiply-add.
TEXT ·attv128x2F16AVX512(SB), NOSPLIT, $0-8
	MOVQ    p+0(FP), DI
	MOVQ    72(DI), R9
	VPXORD  Z0, Z0, Z0
	VPXORD  Z1, Z1, Z1
	VPXORD  Z2, Z2, Z2
	VPXORD  Z3, Z3, Z3
	VPXORD  Z4, Z4, Z4
	VPXORD  Z5, Z5, Z5
	VPXORD  Z6, Z6, Z6
	VPXORD  Z7, Z7, Z7
	CMPQ    96(DI), $0
	JEQ     attvhstart
	VMOVUPS (R9), Z0
	VMOVUPS 64(R9), Z1
	VMOVUPS 128(R9), Z2
	VMOVUPS 192(R9), Z3
	VMOVUPS 256(R9), Z4
	VMOVUPS 320(R9), Z5
	VMOVUPS 384(R9), Z6
	VMOVUPS 448(R9), Z7

attvhstart:
	MOVQ 64(DI), BX
	MOVQ 80(DI), SI
	MOVQ 88(DI), CX
	MOVQ 0(DI), AX
	MOVQ 16(DI), R8
	MOVQ 32(DI), R10
	MOVQ 48(DI), R11
	XORQ DX, DX

attvhloop:
	VBROADCASTSS (AX)(DX*4), Z16
	VBROADCASTSS (R8)(DX*4), Z17
	VBROADCASTSS (R10)(DX*4), Z18
	VBROADCASTSS (R11)(DX*4), Z19
	VCVTPH2PS    (BX), Z20
	VCVTPH2PS    32(BX), Z21
	VCVTPH2PS    64(BX), Z22
	VCVTPH2PS    96(BX), Z23
	VCVTPH2PS    128(BX), Z24
	VCVTPH2PS    160(BX), Z25
	VCVTPH2PS    192(BX), Z26
	VCVTPH2PS    224(BX), Z27
	VFMADD231PS  Z20, Z16, Z0
	VFMADD231PS  Z21, Z16, Z1
	VFMADD231PS  Z22, Z17, Z2
	VFMADD231PS  Z23, Z17, Z3
	VFMADD231PS  Z24, Z18, Z4
	VFMADD231PS  Z25, Z18, Z5
	VFMADD231PS  Z26, Z19, Z6
	VFMADD231PS  Z27, Z19, Z7
	INCQ         DX
	ADDQ         SI, BX
	CMPQ         DX, CX
	JLT          attvhloop

	VMOVUPS Z0, (R9)
	VMOVUPS Z1, 64(R9)
	VMOVUPS Z2, 128(R9)
	VMOVUPS Z3, 192(R9)
	VMOVUPS Z4, 256(R9)
	VMOVUPS Z5, 320(R9)
	VMOVUPS Z6, 384(R9)
	VMOVUPS Z7, 448(R9)
	VZEROUPPER
	RET

#define BC2(ar, z0, z1) \
	VBROADCASTSS (ar)(DX*1), Z28 \
	VFMADD231PS  Z24, Z28, z0    \
	VFMADD231PS  Z25, Z28, z1

// BC8 accumulates one step p of the 8×32 tile (b row p in Z24, Z25).
#define BC8 \
	BC2(R8, Z0, Z1)   \
	BC2(R9, Z2, Z3)   \
	BC2(R10, Z4, Z5)  \
	BC2(R11, Z6, Z7)  \
	BC2(R12, Z8, Z9)  \
	BC2(R13, Z10, Z11) \
	BC2(R14, Z12, Z13) \
	BC2(R15, Z14, Z15)

#define LOADC2(off, z0, z1) \
	MOVQ      off(DI), DX  \
	VMOVUPS.Z (DX), K1, z0 \
	VMOVUPS.Z 64(DX), K2, z1

#define STOREC2(bit, off, z0, z1, skip) \
	TESTQ   $bit, AX      \
	JZ      skip          \
	MOVQ    off(DI), DX   \
	VMOVUPS z0, K1, (DX)  \
	VMOVUPS z1, K2, 64(DX) \
skip:

// func bc8x32AVX512(p *bcArgs)
//
// bc6x64AVX512 on an 8×32 tile (rows a[0..7], c[0..7]; column masks 0 and
// 1): per output the same sequence of fused multiply-adds, for products of
// at most 32 columns, whose 6×64 tiles would leave half their lanes idle.
TEXT ·bc8x32AVX512(SB), NOSPLIT, $0-8
	MOVQ  p+0(FP), DI
	MOVQ  168(DI), AX
	KMOVW AX, K1
	MOVQ  176(DI), AX
	KMOVW AX, K2
	CMPQ  200(DI), $0
	JEQ   zero8
	LOADC2(64, Z0, Z1)
	LOADC2(72, Z2, Z3)
	LOADC2(80, Z4, Z5)
	LOADC2(88, Z6, Z7)
	LOADC2(96, Z8, Z9)
	LOADC2(104, Z10, Z11)
	LOADC2(112, Z12, Z13)
	LOADC2(120, Z14, Z15)
	JMP   start8

zero8:
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

start8:
	MOVQ  152(DI), CX
	TESTQ CX, CX
	JZ    store8
	MOVQ  0(DI), R8
	MOVQ  8(DI), R9
	MOVQ  16(DI), R10
	MOVQ  24(DI), R11
	MOVQ  32(DI), R12
	MOVQ  40(DI), R13
	MOVQ  48(DI), R14
	MOVQ  56(DI), R15
	MOVQ  128(DI), BX
	MOVQ  136(DI), SI
	MOVQ  144(DI), AX
	XORQ  DX, DX
	// 32 whole columns: b without masks, as in bc6x64AVX512.
	CMPQ  176(DI), $0xffff
	JEQ   full8

loop8:
	VMOVUPS.Z (BX), K1, Z24
	VMOVUPS.Z 64(BX), K2, Z25
	BC8
	ADDQ SI, DX
	ADDQ AX, BX
	DECQ CX
	JNZ  loop8
	JMP  store8

full8:
	VMOVUPS (BX), Z24
	VMOVUPS 64(BX), Z25
	BC8
	ADDQ SI, DX
	ADDQ AX, BX
	DECQ CX
	JNZ  full8

store8:
	MOVQ 160(DI), AX
	STOREC2(1, 64, Z0, Z1, t0)
	STOREC2(2, 72, Z2, Z3, t1)
	STOREC2(4, 80, Z4, Z5, t2)
	STOREC2(8, 88, Z6, Z7, t3)
	STOREC2(16, 96, Z8, Z9, t4)
	STOREC2(32, 104, Z10, Z11, t5)
	STOREC2(64, 112, Z12, Z13, t6)
	STOREC2(128, 120, Z14, Z15, t7)
	VZEROUPPER
	RET
