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
	MOVQ    208(DI), BX
	VMOVUPS (BX), Y12
	VMOVUPS 32(BX), Y13
	CMPQ    200(DI), $0
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

// tailmask<> holds 8 set lanes then 8 clear ones: the 8 lanes loaded from
// tailmask<>+4·(8−r) select the first r elements.
DATA tailmask<>+0(SB)/8, $-1
DATA tailmask<>+8(SB)/8, $-1
DATA tailmask<>+16(SB)/8, $-1
DATA tailmask<>+24(SB)/8, $-1
DATA tailmask<>+32(SB)/8, $0
DATA tailmask<>+40(SB)/8, $0
DATA tailmask<>+48(SB)/8, $0
DATA tailmask<>+56(SB)/8, $0
GLOBL tailmask<>(SB), RODATA|NOPTR, $64

// TAILMASK sets Y15 to the mask of the first CX (1..7) lanes. Clobbers AX.
#define TAILMASK \
	LEAQ    tailmask<>+32(SB), AX \
	SHLQ    $2, CX                \
	SUBQ    CX, AX                \
	VMOVUPS (AX), Y15

// func axpyAVX2(alpha float32, x, y *float32, n int)
// y[i] += alpha·x[i] by fused multiply-add, the last partial block masked.
TEXT ·axpyAVX2(SB), NOSPLIT, $0-32
	VBROADCASTSS alpha+0(FP), Y0
	MOVQ         x+8(FP), SI
	MOVQ         y+16(FP), DI
	MOVQ         n+24(FP), CX
	CMPQ         CX, $8
	JLT          axtail

axloop:
	VMOVUPS     (DI), Y1
	VFMADD231PS (SI), Y0, Y1
	VMOVUPS     Y1, (DI)
	ADDQ        $32, SI
	ADDQ        $32, DI
	SUBQ        $8, CX
	CMPQ        CX, $8
	JGE         axloop

axtail:
	TESTQ       CX, CX
	JZ          axdone
	TAILMASK
	VMASKMOVPS  (DI), Y15, Y1
	VMASKMOVPS  (SI), Y15, Y2
	VFMADD231PS Y2, Y0, Y1
	VMASKMOVPS  Y1, Y15, (DI)

axdone:
	VZEROUPPER
	RET

// func scaleAVX2(alpha float32, x *float32, n int)
// x[i] *= alpha (a single rounded product, the same as in Go).
TEXT ·scaleAVX2(SB), NOSPLIT, $0-24
	VBROADCASTSS alpha+0(FP), Y0
	MOVQ         x+8(FP), SI
	MOVQ         n+16(FP), CX
	CMPQ         CX, $8
	JLT          sctail

scloop:
	VMULPS  (SI), Y0, Y1
	VMOVUPS Y1, (SI)
	ADDQ    $32, SI
	SUBQ    $8, CX
	CMPQ    CX, $8
	JGE     scloop

sctail:
	TESTQ      CX, CX
	JZ         scdone
	TAILMASK
	VMASKMOVPS (SI), Y15, Y1
	VMULPS     Y1, Y0, Y1
	VMASKMOVPS Y1, Y15, (SI)

scdone:
	VZEROUPPER
	RET

// Constants of the exp (see act_avx512_amd64.s), each replicated 8 times.
#define C8(off, v) \
	DATA expc8<>+(off)(SB)/4, v \
	DATA expc8<>+(off+4)(SB)/4, v \
	DATA expc8<>+(off+8)(SB)/4, v \
	DATA expc8<>+(off+12)(SB)/4, v \
	DATA expc8<>+(off+16)(SB)/4, v \
	DATA expc8<>+(off+20)(SB)/4, v \
	DATA expc8<>+(off+24)(SB)/4, v \
	DATA expc8<>+(off+28)(SB)/4, v

C8(0, $0x3fb8aa3b)
C8(32, $0x3f318000)
C8(64, $0xb95e8083)
C8(96, $0x39506967)
C8(128, $0x3ab743ce)
C8(160, $0x3c088908)
C8(192, $0x3d2aa9c1)
C8(224, $0x3e2aaaaa)
C8(256, $0x3f000000)
C8(288, $0x3f800000)
C8(320, $0x43000000)
C8(352, $0xc3000000)
C8(384, $127)
GLOBL expc8<>(SB), RODATA|NOPTR, $416

// EXP8 sets z = e^z: the steps of EXP in act_avx512_amd64.s, with 2ⁿ applied
// as two exact powers of two 2^(n>>1)·2^(n−(n>>1)) built in the exponent
// field. Needs Y13 = 128, Y14 = −128. Clobbers Y10, Y11, Y12.
#define EXP8(z) \
	VMINPS       z, Y13, z                \
	VMAXPS       z, Y14, z                \
	VMULPS       expc8<>+0(SB), z, Y10    \
	VROUNDPS     $0, Y10, Y10             \
	VFNMADD231PS expc8<>+32(SB), Y10, z   \
	VFNMADD231PS expc8<>+64(SB), Y10, z   \
	VMOVUPS      expc8<>+96(SB), Y11      \
	VFMADD213PS  expc8<>+128(SB), z, Y11  \
	VFMADD213PS  expc8<>+160(SB), z, Y11  \
	VFMADD213PS  expc8<>+192(SB), z, Y11  \
	VFMADD213PS  expc8<>+224(SB), z, Y11  \
	VFMADD213PS  expc8<>+256(SB), z, Y11  \
	VMULPS       z, z, Y12                \
	VFMADD213PS  z, Y12, Y11              \
	VADDPS       expc8<>+288(SB), Y11, Y11 \
	VCVTPS2DQ    Y10, Y10                 \
	VPSRAD       $1, Y10, Y12             \
	VPSUBD       Y12, Y10, Y10            \
	VPADDD       expc8<>+384(SB), Y12, Y12 \
	VPSLLD       $23, Y12, Y12            \
	VPADDD       expc8<>+384(SB), Y10, Y10 \
	VPSLLD       $23, Y10, Y10            \
	VMULPS       Y12, Y11, Y11            \
	VMULPS       Y10, Y11, z

// func siluMulAVX2(dst, gate, up *float32, n int)
TEXT ·siluMulAVX2(SB), NOSPLIT, $0-32
	MOVQ    dst+0(FP), DI
	MOVQ    gate+8(FP), SI
	MOVQ    up+16(FP), BX
	MOVQ    n+24(FP), CX
	VMOVUPS expc8<>+320(SB), Y13
	VMOVUPS expc8<>+352(SB), Y14
	VXORPS  Y9, Y9, Y9
	CMPQ    CX, $8
	JLT     sitail

siloop:
	VMOVUPS (SI), Y0
	VSUBPS  Y0, Y9, Y1
	EXP8(Y1)
	VADDPS  expc8<>+288(SB), Y1, Y1
	VDIVPS  Y1, Y0, Y0
	VMULPS  (BX), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, BX
	ADDQ    $32, DI
	SUBQ    $8, CX
	CMPQ    CX, $8
	JGE     siloop

sitail:
	TESTQ      CX, CX
	JZ         sidone
	TAILMASK
	VMASKMOVPS (SI), Y15, Y0
	VSUBPS     Y0, Y9, Y1
	EXP8(Y1)
	VADDPS     expc8<>+288(SB), Y1, Y1
	VDIVPS     Y1, Y0, Y0
	VMASKMOVPS (BX), Y15, Y2
	VMULPS     Y2, Y0, Y0
	VMASKMOVPS Y0, Y15, (DI)

sidone:
	VZEROUPPER
	RET

// func expAVX2(dst, x *float32, n int)
TEXT ·expAVX2(SB), NOSPLIT, $0-24
	MOVQ    dst+0(FP), DI
	MOVQ    x+8(FP), SI
	MOVQ    n+16(FP), CX
	VMOVUPS expc8<>+320(SB), Y13
	VMOVUPS expc8<>+352(SB), Y14
	CMPQ    CX, $8
	JLT     extail

exloop:
	VMOVUPS (SI), Y0
	EXP8(Y0)
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	SUBQ    $8, CX
	CMPQ    CX, $8
	JGE     exloop

extail:
	TESTQ      CX, CX
	JZ         exdone
	TAILMASK
	VMASKMOVPS (SI), Y15, Y0
	EXP8(Y0)
	VMASKMOVPS Y0, Y15, (DI)

exdone:
	VZEROUPPER
	RET

// func sigmoidAVX2(dst, x *float32, n int)
TEXT ·sigmoidAVX2(SB), NOSPLIT, $0-24
	MOVQ    dst+0(FP), DI
	MOVQ    x+8(FP), SI
	MOVQ    n+16(FP), CX
	VMOVUPS expc8<>+320(SB), Y13
	VMOVUPS expc8<>+352(SB), Y14
	VMOVUPS expc8<>+288(SB), Y8
	VXORPS  Y9, Y9, Y9
	CMPQ    CX, $8
	JLT     sgtail

sgloop:
	VMOVUPS (SI), Y0
	VSUBPS  Y0, Y9, Y1
	EXP8(Y1)
	VADDPS  Y8, Y1, Y1
	VDIVPS  Y1, Y8, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	SUBQ    $8, CX
	CMPQ    CX, $8
	JGE     sgloop

sgtail:
	TESTQ      CX, CX
	JZ         sgdone
	TAILMASK
	VMASKMOVPS (SI), Y15, Y0
	VSUBPS     Y0, Y9, Y1
	EXP8(Y1)
	VADDPS     Y8, Y1, Y1
	VDIVPS     Y1, Y8, Y0
	VMASKMOVPS Y0, Y15, (DI)

sgdone:
	VZEROUPPER
	RET
