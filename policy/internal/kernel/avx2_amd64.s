//go:build !purego

#include "textflag.h"

// AVX2+FMA kernels. MatMulNT and Dot follow the same 16-lane structure as the
// AVX-512 ones, with each 16-lane accumulator held in two YMM registers
// (lanes 0..7 and 8..15), so the two paths agree bit for bit.

// RED1 reduces the 16-lane accumulator lo:hi into the low float of lo with
// the fixed tree (l+8, l+4, l+2, l+1 onto l). Clobbers X15.
#define RED1(lo, hi, xlo) \
	VADDPS       hi, lo, lo     \
	VEXTRACTF128 $1, lo, X15    \
	VADDPS       X15, xlo, xlo  \
	VMOVHLPS     xlo, xlo, X15  \
	VADDPS       X15, xlo, xlo  \
	VMOVSHDUP    xlo, X15       \
	VADDSS       X15, xlo, xlo

// STORE1 stores the low float of x to c row pointer at off(DI) + R14 + col·4
// if the row (bit rb of R15) and the column (bit cb of the colmask) are
// selected, adding the old value when acc.
#define STORE1(x, off, col, rb, cb, skip, noacc) \
	TESTQ  $rb, R15            \
	JZ     skip                \
	TESTQ  $cb, 136(DI)        \
	JZ     skip                \
	MOVQ   off(DI), DX         \
	CMPQ   144(DI), $0         \
	JEQ    noacc               \
	VADDSS col(DX)(R14*1), x, x \
noacc:                         \
	VMOVSS x, col(DX)(R14*1)   \
skip:

// func nt2x2AVX2(p *ntArgs)
//
// Computes ntiles 2×2 tiles of c = a·bᵀ: rows a[0..1] against b rows
// b[0..1] (advanced by bstep bytes per tile), storing the rows in rowmask and
// columns in colmask to c[r] + 8·tile bytes. tail points to the 16 lane
// masks of the last partial block of k.
TEXT ·nt2x2AVX2(SB), NOSPLIT, $0-8
	MOVQ  p+0(FP), DI
	MOVQ  0(DI), R8
	MOVQ  8(DI), R9
	MOVQ  32(DI), R12
	MOVQ  40(DI), R13
	MOVQ  128(DI), R15
	MOVQ  120(DI), AX
	XORQ  R14, R14
	TESTQ AX, AX
	JZ    done

tile:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	XORQ   DX, DX
	MOVQ   96(DI), CX
	CMPQ   DX, CX
	JGE    tail

loop:
	// accumulators: (row r, col j, half h) in Y(4j + 2r + h)
	VMOVUPS     (R8)(DX*1), Y8
	VMOVUPS     (R9)(DX*1), Y9
	VMOVUPS     (R12)(DX*1), Y10
	VFMADD231PS Y10, Y8, Y0
	VFMADD231PS Y10, Y9, Y2
	VMOVUPS     (R13)(DX*1), Y11
	VFMADD231PS Y11, Y8, Y4
	VFMADD231PS Y11, Y9, Y6
	VMOVUPS     32(R8)(DX*1), Y8
	VMOVUPS     32(R9)(DX*1), Y9
	VMOVUPS     32(R12)(DX*1), Y10
	VFMADD231PS Y10, Y8, Y1
	VFMADD231PS Y10, Y9, Y3
	VMOVUPS     32(R13)(DX*1), Y11
	VFMADD231PS Y11, Y8, Y5
	VFMADD231PS Y11, Y9, Y7
	ADDQ        $64, DX
	CMPQ        DX, CX
	JLT         loop

tail:
	MOVQ       152(DI), BX
	TESTQ      BX, BX
	JZ         reduce
	VMOVUPS    (BX), Y12
	VMOVUPS    32(BX), Y13
	VMASKMOVPS (R8)(DX*1), Y12, Y8
	VMASKMOVPS (R9)(DX*1), Y12, Y9
	VMASKMOVPS (R12)(DX*1), Y12, Y10
	VFMADD231PS Y10, Y8, Y0
	VFMADD231PS Y10, Y9, Y2
	VMASKMOVPS (R13)(DX*1), Y12, Y11
	VFMADD231PS Y11, Y8, Y4
	VFMADD231PS Y11, Y9, Y6
	VMASKMOVPS 32(R8)(DX*1), Y13, Y8
	VMASKMOVPS 32(R9)(DX*1), Y13, Y9
	VMASKMOVPS 32(R12)(DX*1), Y13, Y10
	VFMADD231PS Y10, Y8, Y1
	VFMADD231PS Y10, Y9, Y3
	VMASKMOVPS 32(R13)(DX*1), Y13, Y11
	VFMADD231PS Y11, Y8, Y5
	VFMADD231PS Y11, Y9, Y7

reduce:
	RED1(Y0, Y1, X0)
	RED1(Y2, Y3, X2)
	RED1(Y4, Y5, X4)
	RED1(Y6, Y7, X6)
	STORE1(X0, 64, 0, 1, 1, s00, n00)
	STORE1(X4, 64, 4, 1, 2, s01, n01)
	STORE1(X2, 72, 0, 2, 1, s10, n10)
	STORE1(X6, 72, 4, 2, 2, s11, n11)

	MOVQ 112(DI), DX
	ADDQ DX, R12
	ADDQ DX, R13
	ADDQ $8, R14
	DECQ AX
	JNZ  tile

done:
	VZEROUPPER
	RET

// func dotAVX2(x, y *float32, n int, tail *[16]int32) float32
TEXT ·dotAVX2(SB), NOSPLIT, $0-36
	MOVQ   x+0(FP), SI
	MOVQ   y+8(FP), DI
	MOVQ   n+16(FP), CX
	MOVQ   tail+24(FP), BX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	XORQ   DX, DX
	ANDQ   $-16, CX
	SHLQ   $2, CX
	JZ     dottail

dotloop:
	VMOVUPS     (SI)(DX*1), Y2
	VMOVUPS     32(SI)(DX*1), Y3
	VFMADD231PS (DI)(DX*1), Y2, Y0
	VFMADD231PS 32(DI)(DX*1), Y3, Y1
	ADDQ        $64, DX
	CMPQ        DX, CX
	JLT         dotloop

dottail:
	TESTQ       BX, BX
	JZ          dotreduce
	VMOVUPS     (BX), Y12
	VMOVUPS     32(BX), Y13
	VMASKMOVPS  (SI)(DX*1), Y12, Y2
	VMASKMOVPS  (DI)(DX*1), Y12, Y4
	VFMADD231PS Y4, Y2, Y0
	VMASKMOVPS  32(SI)(DX*1), Y13, Y3
	VMASKMOVPS  32(DI)(DX*1), Y13, Y5
	VFMADD231PS Y5, Y3, Y1

dotreduce:
	RED1(Y0, Y1, X0)
	VMOVSS X0, ret+32(FP)
	VZEROUPPER
	RET

#define BC2(ar, z0, z1) \
	VBROADCASTSS (ar)(DX*1), Y10 \
	VFMADD231PS  Y8, Y10, z0     \
	VFMADD231PS  Y9, Y10, z1

#define LOADC2(off, z0, z1) \
	MOVQ       off(DI), DX        \
	VMASKMOVPS (DX), Y12, z0      \
	VMASKMOVPS 32(DX), Y13, z1

#define STOREC2(bit, off, z0, z1, skip) \
	TESTQ      $bit, AX       \
	JZ         skip           \
	MOVQ       off(DI), DX    \
	VMASKMOVPS z0, Y12, (DX)  \
	VMASKMOVPS z1, Y13, 32(DX) \
skip:

// func bc4x16AVX2(p *bcArgs)
//
// The AVX2 kernel of MatMulNN and MatMulTN: a 4×16 tile of c (rows a[0..3],
// c[0..3] of bcArgs) accumulated by broadcasting a(i, p) against b row p,
// one fused multiply-add per p in order. cmask points to the 16 column
// lane masks of the tile.
TEXT ·bc4x16AVX2(SB), NOSPLIT, $0-8
	MOVQ    p+0(FP), DI
	MOVQ    200(DI), BX
	VMOVUPS (BX), Y12
	VMOVUPS 32(BX), Y13
	CMPQ    192(DI), $0
	JEQ     zero
	LOADC2(64, Y0, Y1)
	LOADC2(72, Y2, Y3)
	LOADC2(80, Y4, Y5)
	LOADC2(88, Y6, Y7)
	JMP     start

zero:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7

start:
	MOVQ  152(DI), CX
	TESTQ CX, CX
	JZ    store
	MOVQ  0(DI), R8
	MOVQ  8(DI), R9
	MOVQ  16(DI), R10
	MOVQ  24(DI), R11
	MOVQ  128(DI), BX
	MOVQ  136(DI), SI
	MOVQ  144(DI), AX
	XORQ  DX, DX

loop:
	VMASKMOVPS (BX), Y12, Y8
	VMASKMOVPS 32(BX), Y13, Y9
	BC2(R8, Y0, Y1)
	BC2(R9, Y2, Y3)
	BC2(R10, Y4, Y5)
	BC2(R11, Y6, Y7)
	ADDQ SI, DX
	ADDQ AX, BX
	DECQ CX
	JNZ  loop

store:
	MOVQ 160(DI), AX
	STOREC2(1, 64, Y0, Y1, s0)
	STOREC2(2, 72, Y2, Y3, s1)
	STOREC2(4, 80, Y4, Y5, s2)
	STOREC2(8, 88, Y6, Y7, s3)
	VZEROUPPER
	RET

// func axpyAVX2(alpha float32, x, y *float32, n int)
// y[i] += alpha·x[i] for n a multiple of 8.
TEXT ·axpyAVX2(SB), NOSPLIT, $0-32
	VBROADCASTSS alpha+0(FP), Y0
	MOVQ         x+8(FP), SI
	MOVQ         y+16(FP), DI
	MOVQ         n+24(FP), CX
	SHLQ         $2, CX
	XORQ         DX, DX
	TESTQ        CX, CX
	JZ           axdone

axloop:
	VMOVUPS     (DI)(DX*1), Y1
	VFMADD231PS (SI)(DX*1), Y0, Y1
	VMOVUPS     Y1, (DI)(DX*1)
	ADDQ        $32, DX
	CMPQ        DX, CX
	JLT         axloop

axdone:
	VZEROUPPER
	RET

// func scaleAVX2(alpha float32, x *float32, n int)
// x[i] *= alpha for n a multiple of 8.
TEXT ·scaleAVX2(SB), NOSPLIT, $0-24
	VBROADCASTSS alpha+0(FP), Y0
	MOVQ         x+8(FP), SI
	MOVQ         n+16(FP), CX
	SHLQ         $2, CX
	XORQ         DX, DX
	TESTQ        CX, CX
	JZ           scdone

scloop:
	VMULPS  (SI)(DX*1), Y0, Y1
	VMOVUPS Y1, (SI)(DX*1)
	ADDQ    $32, DX
	CMPQ    DX, CX
	JLT     scloop

scdone:
	VZEROUPPER
	RET
