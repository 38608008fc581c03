//go:build !purego

#include "textflag.h"

// AVX-512 kernels of MatMulNT and Dot. Every output is a 16-lane dot
// product: lane l of one ZMM accumulator sums, by VFMADD231PS, the products
// with p ≡ l (mod 16); the last partial block is loaded with zero masking
// (padding with +0); then the fixed tree adds lanes l+8, l+4, l+2, l+1 onto l
// (see the package documentation). REDUCE16 below performs that tree for 16
// accumulators at once by transposing shuffles, which leaves every output's
// additions, and so its bits, unchanged.

// REDUCE16 reduces the accumulators Z0..Z15 (output o in Z_o) into Z0,
// whose 128-bit chunk c, lane t holds output 4t+c. Clobbers Z1..Z17.
#define LEVEL1(x, y, d) \
	VSHUFF32X4 $0x44, y, x, Z16 \
	VSHUFF32X4 $0xEE, y, x, Z17 \
	VADDPS     Z17, Z16, d

#define LEVEL2(x, y, d) \
	VSHUFF32X4 $0x88, y, x, Z16 \
	VSHUFF32X4 $0xDD, y, x, Z17 \
	VADDPS     Z17, Z16, d

#define LEVEL3(x, y, d) \
	VSHUFPS $0x44, y, x, Z16 \
	VSHUFPS $0xEE, y, x, Z17 \
	VADDPS  Z17, Z16, d

#define LEVEL4(x, y, d) \
	VSHUFPS $0x88, y, x, Z16 \
	VSHUFPS $0xDD, y, x, Z17 \
	VADDPS  Z17, Z16, d

#define REDUCE16 \
	LEVEL1(Z0, Z1, Z0)    \
	LEVEL1(Z2, Z3, Z1)    \
	LEVEL1(Z4, Z5, Z2)    \
	LEVEL1(Z6, Z7, Z3)    \
	LEVEL1(Z8, Z9, Z4)    \
	LEVEL1(Z10, Z11, Z5)  \
	LEVEL1(Z12, Z13, Z6)  \
	LEVEL1(Z14, Z15, Z7)  \
	LEVEL2(Z0, Z1, Z0)    \
	LEVEL2(Z2, Z3, Z1)    \
	LEVEL2(Z4, Z5, Z2)    \
	LEVEL2(Z6, Z7, Z3)    \
	LEVEL3(Z0, Z1, Z0)    \
	LEVEL3(Z2, Z3, Z1)    \
	LEVEL4(Z0, Z1, Z0)

#define ZERO16 \
	VPXORD Z0, Z0, Z0    \
	VPXORD Z1, Z1, Z1    \
	VPXORD Z2, Z2, Z2    \
	VPXORD Z3, Z3, Z3    \
	VPXORD Z4, Z4, Z4    \
	VPXORD Z5, Z5, Z5    \
	VPXORD Z6, Z6, Z6    \
	VPXORD Z7, Z7, Z7    \
	VPXORD Z8, Z8, Z8    \
	VPXORD Z9, Z9, Z9    \
	VPXORD Z10, Z10, Z10 \
	VPXORD Z11, Z11, Z11 \
	VPXORD Z12, Z12, Z12 \
	VPXORD Z13, Z13, Z13 \
	VPXORD Z14, Z14, Z14 \
	VPXORD Z15, Z15, Z15

// COL4 multiplies the b vector in bz with the four a vectors Z16..Z19 into
// the accumulators of one column of a 4×4 tile.
#define COL4(bz, z0, z1, z2, z3) \
	VFMADD231PS bz, Z16, z0 \
	VFMADD231PS bz, Z17, z1 \
	VFMADD231PS bz, Z18, z2 \
	VFMADD231PS bz, Z19, z3

// STOREROW stores chunk r of Z0 (row r of the tile) to the c row pointer at
// off(DI) plus the row-block offset 184(DI) plus R14, under the column mask
// K2, if bit r of the row mask is set; with acc it adds the old value.
#define STOREROW(r, bit, off, skip, noacc) \
	TESTQ         $bit, 128(DI)  \
	JZ            skip           \
	VEXTRACTF32X4 $r, Z0, X1     \
	MOVQ          off(DI), DX    \
	ADDQ          184(DI), DX    \
	CMPQ          144(DI), $0    \
	JEQ           noacc          \
	VMOVUPS.Z     (DX)(R14*1), K2, X2 \
	VADDPS        X2, X1, X1     \
noacc:                          \
	VMOVUPS       X1, K2, (DX)(R14*1) \
skip:

// func nt4x4AVX512(p *ntArgs)
//
// Computes nrb row blocks of ntiles 4×4 tiles of c = a·bᵀ. Row block q uses
// the a rows a[r] + q·astep bytes and stores to c[r] + q·cstep bytes; tile t
// uses the b rows b[r] + t·bstep bytes and stores columns 4t..4t+3 (those in
// colmask; rows in rowmask). The row-block offset of c is kept in 184(DI).
TEXT ·nt4x4AVX512(SB), NOSPLIT, $0-8
	MOVQ  p+0(FP), DI
	MOVQ  0(DI), R8
	MOVQ  8(DI), R9
	MOVQ  16(DI), R10
	MOVQ  24(DI), R11
	MOVQ  104(DI), AX
	KMOVW AX, K1
	MOVQ  136(DI), AX
	KMOVW AX, K2
	MOVQ  $0, 184(DI)
	CMPQ  120(DI), $0
	JEQ   done
	CMPQ  176(DI), $0
	JEQ   done

rowblock:
	MOVQ 32(DI), R12
	MOVQ 40(DI), R13
	MOVQ 48(DI), BX
	MOVQ 56(DI), SI
	MOVQ 120(DI), AX
	XORQ R14, R14

tile:
	ZERO16
	XORQ DX, DX
	MOVQ 96(DI), CX
	CMPQ DX, CX
	JGE  tail

loop:
	VMOVUPS (R8)(DX*1), Z16
	VMOVUPS (R9)(DX*1), Z17
	VMOVUPS (R10)(DX*1), Z18
	VMOVUPS (R11)(DX*1), Z19
	VMOVUPS (R12)(DX*1), Z20
	VMOVUPS (R13)(DX*1), Z21
	VMOVUPS (BX)(DX*1), Z22
	VMOVUPS (SI)(DX*1), Z23
	COL4(Z20, Z0, Z1, Z2, Z3)
	COL4(Z21, Z4, Z5, Z6, Z7)
	COL4(Z22, Z8, Z9, Z10, Z11)
	COL4(Z23, Z12, Z13, Z14, Z15)
	ADDQ    $64, DX
	CMPQ    DX, CX
	JLT     loop

tail:
	CMPQ      104(DI), $0
	JEQ       reduce
	VMOVUPS.Z (R8)(DX*1), K1, Z16
	VMOVUPS.Z (R9)(DX*1), K1, Z17
	VMOVUPS.Z (R10)(DX*1), K1, Z18
	VMOVUPS.Z (R11)(DX*1), K1, Z19
	VMOVUPS.Z (R12)(DX*1), K1, Z20
	VMOVUPS.Z (R13)(DX*1), K1, Z21
	VMOVUPS.Z (BX)(DX*1), K1, Z22
	VMOVUPS.Z (SI)(DX*1), K1, Z23
	COL4(Z20, Z0, Z1, Z2, Z3)
	COL4(Z21, Z4, Z5, Z6, Z7)
	COL4(Z22, Z8, Z9, Z10, Z11)
	COL4(Z23, Z12, Z13, Z14, Z15)

reduce:
	REDUCE16
	STOREROW(0, 1, 64, skip0, noacc0)
	STOREROW(1, 2, 72, skip1, noacc1)
	STOREROW(2, 4, 80, skip2, noacc2)
	STOREROW(3, 8, 88, skip3, noacc3)

	MOVQ 112(DI), DX
	ADDQ DX, R12
	ADDQ DX, R13
	ADDQ DX, BX
	ADDQ DX, SI
	ADDQ $16, R14
	DECQ AX
	JNZ  tile

	DECQ 176(DI)
	JZ   done
	MOVQ 160(DI), DX
	ADDQ DX, R8
	ADDQ DX, R9
	ADDQ DX, R10
	ADDQ DX, R11
	MOVQ 168(DI), DX
	ADDQ DX, 184(DI)
	JMP  rowblock

done:
	VZEROUPPER
	RET

// MV16 multiplies the a vector Z16 with the 16 b rows of a 1×16 tile: row
// 4g+t is at G_g + t·R9 (R10 = 3·R9) and accumulates into Z_(4t+g), so that
// REDUCE16 leaves the outputs in column order.
#define MV4(g0, za, zb, zc, zd) \
	VFMADD231PS (g0), Z16, za        \
	VFMADD231PS (g0)(R9*1), Z16, zb  \
	VFMADD231PS (g0)(R9*2), Z16, zc  \
	VFMADD231PS (g0)(R10*1), Z16, zd

#define MVT(src, z) \
	VMOVUPS.Z   src, K1, Z17 \
	VFMADD231PS Z17, Z16, z

#define MVT4(g0, za, zb, zc, zd) \
	MVT((g0), za)        \
	MVT((g0)(R9*1), zb)  \
	MVT((g0)(R9*2), zc)  \
	MVT((g0)(R10*1), zd)

// func nt1x16AVX512(p *mvArgs)
//
// Computes ntiles 1×16 tiles of c = a·bᵀ for one row a: tile t uses the 16
// b rows from b + 16·t·ldb bytes (ldb bytes apart) and stores the columns
// selected by colmask to c + 64·t bytes.
TEXT ·nt1x16AVX512(SB), NOSPLIT, $0-8
	MOVQ  p+0(FP), DI
	MOVQ  8(DI), BX
	MOVQ  16(DI), R14
	MOVQ  24(DI), R9
	LEAQ  (R9)(R9*2), R10
	MOVQ  40(DI), AX
	KMOVW AX, K1
	MOVQ  56(DI), AX
	KMOVW AX, K2
	MOVQ  48(DI), AX
	TESTQ AX, AX
	JZ    mvdone

mvtile:
	ZERO16
	MOVQ 0(DI), SI
	MOVQ SI, CX
	ADDQ 32(DI), CX
	MOVQ BX, R8
	LEAQ (R8)(R9*4), R11
	LEAQ (R11)(R9*4), R12
	LEAQ (R12)(R9*4), R13
	CMPQ SI, CX
	JGE  mvtail

mvloop:
	VMOVUPS (SI), Z16
	MV4(R8, Z0, Z4, Z8, Z12)
	MV4(R11, Z1, Z5, Z9, Z13)
	MV4(R12, Z2, Z6, Z10, Z14)
	MV4(R13, Z3, Z7, Z11, Z15)
	ADDQ    $64, SI
	ADDQ    $64, R8
	ADDQ    $64, R11
	ADDQ    $64, R12
	ADDQ    $64, R13
	CMPQ    SI, CX
	JLT     mvloop

mvtail:
	CMPQ      40(DI), $0
	JEQ       mvreduce
	VMOVUPS.Z (SI), K1, Z16
	MVT4(R8, Z0, Z4, Z8, Z12)
	MVT4(R11, Z1, Z5, Z9, Z13)
	MVT4(R12, Z2, Z6, Z10, Z14)
	MVT4(R13, Z3, Z7, Z11, Z15)

mvreduce:
	REDUCE16
	CMPQ      64(DI), $0
	JEQ       mvstore
	VMOVUPS.Z (R14), K2, Z1
	VADDPS    Z1, Z0, Z0

mvstore:
	VMOVUPS Z0, K2, (R14)
	MOVQ    R9, DX
	SHLQ    $4, DX
	ADDQ    DX, BX
	ADDQ    $64, R14
	DECQ    AX
	JNZ     mvtile

mvdone:
	VZEROUPPER
	RET

// func dotAVX512(x, y *float32, n int) float32
TEXT ·dotAVX512(SB), NOSPLIT, $0-28
	MOVQ   x+0(FP), SI
	MOVQ   y+8(FP), DI
	MOVQ   n+16(FP), CX
	VPXORD Z0, Z0, Z0
	XORQ   DX, DX
	MOVQ   CX, BX
	ANDQ   $-16, BX
	SHLQ   $2, BX
	JZ     dottail

dotloop:
	VMOVUPS     (SI)(DX*1), Z1
	VFMADD231PS (DI)(DX*1), Z1, Z0
	ADDQ        $64, DX
	CMPQ        DX, BX
	JLT         dotloop

dottail:
	ANDQ      $15, CX
	JZ        dotreduce
	MOVL      $1, AX
	SHLL      CX, AX
	DECL      AX
	KMOVW     AX, K1
	VMOVUPS.Z (SI)(DX*1), K1, Z1
	VMOVUPS.Z (DI)(DX*1), K1, Z2
	VFMADD231PS Z2, Z1, Z0

dotreduce:
	VEXTRACTF32X8 $1, Z0, Y1
	VADDPS        Y1, Y0, Y0
	VEXTRACTF32X4 $1, Y0, X1
	VADDPS        X1, X0, X0
	VMOVHLPS      X0, X0, X1
	VADDPS        X1, X0, X0
	VMOVSHDUP     X0, X1
	VADDSS        X1, X0, X0
	VMOVSS        X0, ret+24(FP)
	VZEROUPPER
	RET

// Int8 weights: the b rows are int8 (one byte per element), widened to
// int32 by VPMOVSXBD and converted exactly to float32 by VCVTDQ2PS; the
// 16-lane products and the reduction are those of nt4x4AVX512 and
// nt1x16AVX512, and each output is then multiplied by the scale of its b
// row (before the old value is added).

#define LOADQ(src, z) \
	VPMOVSXBD src, z \
	VCVTDQ2PS z, z

#define LOADQT(src, z) \
	VPMOVSXBD.Z src, K1, z \
	VCVTDQ2PS   z, z

// STOREROWQ is STOREROW with the product by the scales in X3 first.
#define STOREROWQ(r, bit, off, skip, noacc) \
	TESTQ         $bit, 128(DI)  \
	JZ            skip           \
	VEXTRACTF32X4 $r, Z0, X1     \
	VMULPS        X3, X1, X1     \
	MOVQ          off(DI), DX    \
	ADDQ          184(DI), DX    \
	CMPQ          144(DI), $0    \
	JEQ           noacc          \
	VMOVUPS.Z     (DX)(R14*1), K2, X2 \
	VADDPS        X2, X1, X1     \
noacc:                          \
	VMOVUPS       X1, K2, (DX)(R14*1) \
skip:

// func nt4x4I8AVX512(p *ntArgs)
//
// nt4x4AVX512 with int8 b rows (b pointers and bstep in bytes of int8) and
// the per-row scales of the tile's columns at scale + 16·tile bytes.
TEXT ·nt4x4I8AVX512(SB), NOSPLIT, $0-8
	MOVQ  p+0(FP), DI
	MOVQ  0(DI), R8
	MOVQ  8(DI), R9
	MOVQ  16(DI), R10
	MOVQ  24(DI), R11
	MOVQ  104(DI), AX
	KMOVW AX, K1
	MOVQ  136(DI), AX
	KMOVW AX, K2
	MOVQ  $0, 184(DI)
	CMPQ  120(DI), $0
	JEQ   qdone
	CMPQ  176(DI), $0
	JEQ   qdone

qrowblock:
	MOVQ 32(DI), R12
	MOVQ 40(DI), R13
	MOVQ 48(DI), BX
	MOVQ 56(DI), SI
	MOVQ 120(DI), AX
	XORQ R14, R14

qtile:
	ZERO16
	XORQ DX, DX
	XORQ R15, R15
	MOVQ 96(DI), CX
	CMPQ DX, CX
	JGE  qtail

qloop:
	VMOVUPS (R8)(DX*1), Z16
	VMOVUPS (R9)(DX*1), Z17
	VMOVUPS (R10)(DX*1), Z18
	VMOVUPS (R11)(DX*1), Z19
	LOADQ((R12)(R15*1), Z20)
	LOADQ((R13)(R15*1), Z21)
	LOADQ((BX)(R15*1), Z22)
	LOADQ((SI)(R15*1), Z23)
	COL4(Z20, Z0, Z1, Z2, Z3)
	COL4(Z21, Z4, Z5, Z6, Z7)
	COL4(Z22, Z8, Z9, Z10, Z11)
	COL4(Z23, Z12, Z13, Z14, Z15)
	ADDQ    $64, DX
	ADDQ    $16, R15
	CMPQ    DX, CX
	JLT     qloop

qtail:
	CMPQ      104(DI), $0
	JEQ       qreduce
	VMOVUPS.Z (R8)(DX*1), K1, Z16
	VMOVUPS.Z (R9)(DX*1), K1, Z17
	VMOVUPS.Z (R10)(DX*1), K1, Z18
	VMOVUPS.Z (R11)(DX*1), K1, Z19
	LOADQT((R12)(R15*1), Z20)
	LOADQT((R13)(R15*1), Z21)
	LOADQT((BX)(R15*1), Z22)
	LOADQT((SI)(R15*1), Z23)
	COL4(Z20, Z0, Z1, Z2, Z3)
	COL4(Z21, Z4, Z5, Z6, Z7)
	COL4(Z22, Z8, Z9, Z10, Z11)
	COL4(Z23, Z12, Z13, Z14, Z15)

qreduce:
	REDUCE16
	MOVQ      192(DI), DX
	VMOVUPS.Z (DX)(R14*1), K2, X3
	STOREROWQ(0, 1, 64, qskip0, qnoacc0)
	STOREROWQ(1, 2, 72, qskip1, qnoacc1)
	STOREROWQ(2, 4, 80, qskip2, qnoacc2)
	STOREROWQ(3, 8, 88, qskip3, qnoacc3)

	MOVQ 112(DI), DX
	ADDQ DX, R12
	ADDQ DX, R13
	ADDQ DX, BX
	ADDQ DX, SI
	ADDQ $16, R14
	DECQ AX
	JNZ  qtile

	DECQ 176(DI)
	JZ   qdone
	MOVQ 160(DI), DX
	ADDQ DX, R8
	ADDQ DX, R9
	ADDQ DX, R10
	ADDQ DX, R11
	MOVQ 168(DI), DX
	ADDQ DX, 184(DI)
	JMP  qrowblock

qdone:
	VZEROUPPER
	RET

#define MVQ(src, z) \
	LOADQ(src, Z17)         \
	VFMADD231PS Z17, Z16, z

#define MVQT(src, z) \
	LOADQT(src, Z17)        \
	VFMADD231PS Z17, Z16, z

#define MVQ4(g0, za, zb, zc, zd) \
	MVQ((g0), za)        \
	MVQ((g0)(R9*1), zb)  \
	MVQ((g0)(R9*2), zc)  \
	MVQ((g0)(R10*1), zd)

#define MVQT4(g0, za, zb, zc, zd) \
	MVQT((g0), za)        \
	MVQT((g0)(R9*1), zb)  \
	MVQT((g0)(R9*2), zc)  \
	MVQT((g0)(R10*1), zd)

// func nt1x16I8AVX512(p *mvArgs)
//
// nt1x16AVX512 with int8 b rows (b and ldb in bytes of int8) and the scales
// of the tile's 16 columns at scale + 64·tile bytes.
TEXT ·nt1x16I8AVX512(SB), NOSPLIT, $0-8
	MOVQ  p+0(FP), DI
	MOVQ  8(DI), BX
	MOVQ  16(DI), R14
	MOVQ  72(DI), R15
	MOVQ  24(DI), R9
	LEAQ  (R9)(R9*2), R10
	MOVQ  40(DI), AX
	KMOVW AX, K1
	MOVQ  56(DI), AX
	KMOVW AX, K2
	MOVQ  48(DI), AX
	TESTQ AX, AX
	JZ    mqdone

mqtile:
	ZERO16
	MOVQ 0(DI), SI
	MOVQ SI, CX
	ADDQ 32(DI), CX
	MOVQ BX, R8
	LEAQ (R8)(R9*4), R11
	LEAQ (R11)(R9*4), R12
	LEAQ (R12)(R9*4), R13
	CMPQ SI, CX
	JGE  mqtail

mqloop:
	VMOVUPS (SI), Z16
	MVQ4(R8, Z0, Z4, Z8, Z12)
	MVQ4(R11, Z1, Z5, Z9, Z13)
	MVQ4(R12, Z2, Z6, Z10, Z14)
	MVQ4(R13, Z3, Z7, Z11, Z15)
	ADDQ    $64, SI
	ADDQ    $16, R8
	ADDQ    $16, R11
	ADDQ    $16, R12
	ADDQ    $16, R13
	CMPQ    SI, CX
	JLT     mqloop

mqtail:
	CMPQ      40(DI), $0
	JEQ       mqreduce
	VMOVUPS.Z (SI), K1, Z16
	MVQT4(R8, Z0, Z4, Z8, Z12)
	MVQT4(R11, Z1, Z5, Z9, Z13)
	MVQT4(R12, Z2, Z6, Z10, Z14)
	MVQT4(R13, Z3, Z7, Z11, Z15)

mqreduce:
	REDUCE16
	VMOVUPS.Z (R15), K2, Z1
	VMULPS    Z1, Z0, Z0
	CMPQ      64(DI), $0
	JEQ       mqstore
	VMOVUPS.Z (R14), K2, Z1
	VADDPS    Z1, Z0, Z0

mqstore:
	VMOVUPS Z0, K2, (R14)
	MOVQ    R9, DX
	SHLQ    $4, DX
	ADDQ    DX, BX
	ADDQ    $64, R14
	ADDQ    $64, R15
	DECQ    AX
	JNZ     mqtile

mqdone:
	VZEROUPPER
	RET

// Binary16 b rows (ScoresF16): the b vectors are widened exactly by
// VCVTPH2PS (16 halves, 32 bytes, per vector); the products and the
// reduction are those of nt1x16AVX512. k is a multiple of 16 (no tail).

#define MVH(src, z) \
	VCVTPH2PS   src, Z17     \
	VFMADD231PS Z17, Z16, z

#define MVH4(g0, za, zb, zc, zd) \
	MVH((g0), za)        \
	MVH((g0)(R9*1), zb)  \
	MVH((g0)(R9*2), zc)  \
	MVH((g0)(R10*1), zd)

// func nt1x16F16AVX512(p *mvArgs)
//
// nt1x16AVX512 with binary16 b rows (ldb in bytes) and kmask 0.
TEXT ·nt1x16F16AVX512(SB), NOSPLIT, $0-8
	MOVQ  p+0(FP), DI
	MOVQ  8(DI), BX
	MOVQ  16(DI), R14
	MOVQ  24(DI), R9
	LEAQ  (R9)(R9*2), R10
	MOVQ  56(DI), AX
	KMOVW AX, K2
	MOVQ  48(DI), AX
	TESTQ AX, AX
	JZ    mhdone

mhtile:
	ZERO16
	MOVQ 0(DI), SI
	MOVQ SI, CX
	ADDQ 32(DI), CX
	MOVQ BX, R8
	LEAQ (R8)(R9*4), R11
	LEAQ (R11)(R9*4), R12
	LEAQ (R12)(R9*4), R13

mhloop:
	VMOVUPS (SI), Z16
	MVH4(R8, Z0, Z4, Z8, Z12)
	MVH4(R11, Z1, Z5, Z9, Z13)
	MVH4(R12, Z2, Z6, Z10, Z14)
	MVH4(R13, Z3, Z7, Z11, Z15)
	ADDQ    $64, SI
	ADDQ    $32, R8
	ADDQ    $32, R11
	ADDQ    $32, R12
	ADDQ    $32, R13
	CMPQ    SI, CX
	JLT     mhloop

	REDUCE16
	CMPQ      64(DI), $0
	JEQ       mhstore
	VMOVUPS.Z (R14), K2, Z1
	VADDPS    Z1, Z0, Z0

mhstore:
	VMOVUPS Z0, K2, (R14)
	MOVQ    R9, DX
	SHLQ    $4, DX
	ADDQ    DX, BX
	ADDQ    $64, R14
	DECQ    AX
	JNZ     mhtile

mhdone:
	VZEROUPPER
	RET

// func toF16AVX512(dst *uint16, src *float32, n int)
//
// Converts n (a multiple of 16) values: clamp to ±65504, then VCVTPS2PH
// rounding to nearest even.
TEXT ·toF16AVX512(SB), NOSPLIT, $0-24
	MOVQ         dst+0(FP), DI
	MOVQ         src+8(FP), SI
	MOVQ         n+16(FP), CX
	MOVL         $0x477fe000, AX // 65504
	VPBROADCASTD AX, Z20
	MOVL         $0xc77fe000, AX // -65504
	VPBROADCASTD AX, Z21
	SHRQ         $4, CX
	JZ           hdone

hloop:
	VMOVUPS   (SI), Z1
	VMINPS    Z20, Z1, Z1
	VMAXPS    Z21, Z1, Z1
	VCVTPS2PH $0, Z1, (DI)
	ADDQ      $64, SI
	ADDQ      $32, DI
	DECQ      CX
	JNZ       hloop

hdone:
	VZEROUPPER
	RET
