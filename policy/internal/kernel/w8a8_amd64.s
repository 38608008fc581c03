//go:build !purego

#include "textflag.h"

// W8A8 kernels (see MatMulNTW8A8). The activation rows are bytes offset by
// 128 (unsigned), the weights int8 in the packed layout of Int8Weights: per
// block of 16 output columns and group of 4 k values, 64 bytes holding the
// 16 columns' 4 weights. VPDPBUSD multiplies the 4 activation bytes of a
// group, broadcast to every lane, with those 64 bytes and adds the four
// products into the 16 int32 lanes, one per output column. The sums are
// exact, so neither the tiling nor the order of the groups changes a bit.
// Then each output is d − 128·Σw, converted to float32 (VCVTDQ2PS), times
// the column's weight scale, times the row's activation scale.

// func quantRowsAVX512(p *quantArgs)
//
// The per-row quantization of Int8Rows.Quantize (quantRowsGeneric) for m
// rows: max |x| over the row, scale = max/127 and inv = 127/max (both 0
// below 2⁻¹⁰⁰), then q = 128 + clamp(round(x·inv), −127, 127) by
// VCVTPS2DQ, which rounds to nearest even.
TEXT ·quantRowsAVX512(SB), NOSPLIT, $0-8
	MOVQ  p+0(FP), DI
	MOVQ  0(DI), SI
	MOVQ  8(DI), R8
	MOVQ  16(DI), R9
	MOVQ  40(DI), AX
	MOVQ  48(DI), CX
	MOVQ  56(DI), DX
	KMOVW DX, K1
	MOVL  $0x7fffffff, DX
	VPBROADCASTD DX, Z20
	MOVL  $-127, DX
	VPBROADCASTD DX, Z21
	MOVL  $127, DX
	VPBROADCASTD DX, Z22
	MOVL  $128, DX
	VPBROADCASTD DX, Z23
	MOVL  $0x42fe0000, DX // 127.0
	VMOVD DX, X4
	MOVL  $0x0d800000, DX // 2^-100
	VMOVD DX, X5
	TESTQ AX, AX
	JZ    qrdone

qrrow:
	VPXORD Z0, Z0, Z0
	XORQ   BX, BX
	CMPQ   BX, CX
	JGE    qramaxtail

qramax:
	VPANDD (SI)(BX*1), Z20, Z1
	VMAXPS Z1, Z0, Z0
	ADDQ   $64, BX
	CMPQ   BX, CX
	JLT    qramax

qramaxtail:
	KORTESTW  K1, K1
	JZ        qrhmax
	VMOVUPS.Z (SI)(BX*1), K1, Z1
	VPANDD    Z20, Z1, Z1
	VMAXPS    Z1, Z0, Z0

qrhmax:
	VEXTRACTF32X8 $1, Z0, Y1
	VMAXPS        Y1, Y0, Y0
	VEXTRACTF128  $1, Y0, X1
	VMAXPS        X1, X0, X0
	VMOVHLPS      X0, X0, X1
	VMAXPS        X1, X0, X0
	VMOVSHDUP     X0, X1
	VMAXSS        X1, X0, X0
	VXORPS        X2, X2, X2
	VXORPS        X3, X3, X3
	VUCOMISS      X5, X0
	JCS           qrsmall
	VDIVSS        X4, X0, X2 // scale = max/127
	VDIVSS        X0, X4, X3 // inv = 127/max

qrsmall:
	VMOVSS       X2, (R9)
	VBROADCASTSS X3, Z3
	XORQ         BX, BX
	XORQ         R10, R10
	CMPQ         BX, CX
	JGE          qrtail

qrloop:
	VMULPS    (SI)(BX*1), Z3, Z1
	VCVTPS2DQ Z1, Z1
	VPMAXSD   Z21, Z1, Z1
	VPMINSD   Z22, Z1, Z1
	VPADDD    Z23, Z1, Z1
	VPMOVDB   Z1, (R8)(R10*1)
	ADDQ      $64, BX
	ADDQ      $16, R10
	CMPQ      BX, CX
	JLT       qrloop

qrtail:
	KORTESTW  K1, K1
	JZ        qrnext
	VMOVUPS.Z (SI)(BX*1), K1, Z1
	VMULPS    Z3, Z1, Z1
	VCVTPS2DQ Z1, Z1
	VPMAXSD   Z21, Z1, Z1
	VPMINSD   Z22, Z1, Z1
	VPADDD    Z23, Z1, Z1
	VPMOVDB   Z1, K1, (R8)(R10*1)

qrnext:
	ADDQ 24(DI), SI
	ADDQ 32(DI), R8
	ADDQ $4, R9
	DECQ AX
	JNZ  qrrow

qrdone:
	VZEROUPPER
	RET

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

// DP4 adds the products of the weight vector wz with the broadcast
// activations of the four rows (Z16..Z19) into one column vector's
// accumulators.
#define DP4(wz, z0, z1, z2, z3) \
	VPDPBUSD wz, Z16, z0 \
	VPDPBUSD wz, Z17, z1 \
	VPDPBUSD wz, Z18, z2 \
	VPDPBUSD wz, Z19, z3

// LOADCOLS loads the tile's 128·Σw (Z24..Z27) and weight scales (Z28..Z31)
// at byte offset SI.
#define LOADCOLS \
	MOVQ      104(DI), DX          \
	VMOVDQU32 (DX)(SI*1), Z24      \
	VMOVDQU32 64(DX)(SI*1), Z25    \
	VMOVDQU32 128(DX)(SI*1), Z26   \
	VMOVDQU32 192(DX)(SI*1), Z27   \
	MOVQ      112(DI), DX          \
	VMOVUPS   (DX)(SI*1), Z28      \
	VMOVUPS   64(DX)(SI*1), Z29    \
	VMOVUPS   128(DX)(SI*1), Z30   \
	VMOVUPS   192(DX)(SI*1), Z31

#define SCALE(z, wsum, wsc) \
	VPSUBD    wsum, z, z \
	VCVTDQ2PS z, z       \
	VMULPS    wsc, z, z  \
	VMULPS    Z16, z, z

#define ADDOLD(z, k, off) \
	VMOVUPS.Z off(DX)(SI*1), k, Z17 \
	VADDPS    Z17, z, z

// ROW finishes the four accumulators z0..z3 of one tile row (bit of the
// row mask, its c pointer at coff(DI), its scale at asoff(DI)) and stores
// them under the column masks K1..K4, adding the old values with acc.
#define ROW(bit, coff, asoff, z0, z1, z2, z3, skip, noacc) \
	TESTQ        $bit, 128(DI)   \
	JZ           skip            \
	VBROADCASTSS asoff(DI), Z16  \
	MOVQ         coff(DI), DX    \
	SCALE(z0, Z24, Z28)          \
	SCALE(z1, Z25, Z29)          \
	SCALE(z2, Z26, Z30)          \
	SCALE(z3, Z27, Z31)          \
	CMPQ         168(DI), $0     \
	JEQ          noacc           \
	ADDOLD(z0, K1, 0)            \
	ADDOLD(z1, K2, 64)           \
	ADDOLD(z2, K3, 128)          \
	ADDOLD(z3, K4, 192)          \
noacc:                           \
	VMOVUPS z0, K1, (DX)(SI*1)   \
	VMOVUPS z1, K2, 64(DX)(SI*1) \
	VMOVUPS z2, K3, 128(DX)(SI*1) \
	VMOVUPS z3, K4, 192(DX)(SI*1) \
skip:

// SETUP loads the column masks into K1..K4, the four column blocks' weight
// pointers into R12..R15 and the tile count into AX, and clears SI.
#define SETUP \
	MOVQ  136(DI), AX         \
	KMOVW AX, K1              \
	MOVQ  144(DI), AX         \
	KMOVW AX, K2              \
	MOVQ  152(DI), AX         \
	KMOVW AX, K3              \
	MOVQ  160(DI), AX         \
	KMOVW AX, K4              \
	MOVQ  80(DI), R12         \
	MOVQ  88(DI), DX          \
	LEAQ  (R12)(DX*1), R13    \
	LEAQ  (R13)(DX*1), R14    \
	LEAQ  (R14)(DX*1), R15    \
	MOVQ  120(DI), AX         \
	XORQ  SI, SI

// NEXTTILE moves to the next 64 columns and loops to label while tiles
// remain.
#define NEXTTILE(label) \
	MOVQ 88(DI), DX  \
	SHLQ $2, DX      \
	ADDQ DX, R12     \
	ADDQ DX, R13     \
	ADDQ DX, R14     \
	ADDQ DX, R15     \
	ADDQ $256, SI    \
	DECQ AX          \
	JNZ  label

// func w8a8x4VNNI(p *w8Args)
//
// Computes ntiles 4×64 tiles of MatMulNTW8A8 for the four activation rows
// a[0..3]: tile t reads the packed weights from w + 4·t·wstep bytes and
// stores columns 64t.. (those in the column masks) of the rows in rowmask.
TEXT ·w8a8x4VNNI(SB), NOSPLIT, $0-8
	MOVQ p+0(FP), DI
	MOVQ 0(DI), R8
	MOVQ 8(DI), R9
	MOVQ 16(DI), R10
	MOVQ 24(DI), R11
	SETUP
	TESTQ AX, AX
	JZ    w4done

w4tile:
	ZERO16
	XORQ DX, DX
	XORQ BX, BX
	MOVQ 96(DI), CX

w4loop:
	VPBROADCASTD (R8)(DX*1), Z16
	VPBROADCASTD (R9)(DX*1), Z17
	VPBROADCASTD (R10)(DX*1), Z18
	VPBROADCASTD (R11)(DX*1), Z19
	VMOVDQU32    (R12)(BX*1), Z20
	VMOVDQU32    (R13)(BX*1), Z21
	VMOVDQU32    (R14)(BX*1), Z22
	VMOVDQU32    (R15)(BX*1), Z23
	DP4(Z20, Z0, Z4, Z8, Z12)
	DP4(Z21, Z1, Z5, Z9, Z13)
	DP4(Z22, Z2, Z6, Z10, Z14)
	DP4(Z23, Z3, Z7, Z11, Z15)
	ADDQ         $4, DX
	ADDQ         $64, BX
	CMPQ         DX, CX
	JLT          w4loop

	LOADCOLS
	ROW(1, 32, 64, Z0, Z1, Z2, Z3, w4skip0, w4noacc0)
	ROW(2, 40, 68, Z4, Z5, Z6, Z7, w4skip1, w4noacc1)
	ROW(4, 48, 72, Z8, Z9, Z10, Z11, w4skip2, w4noacc2)
	ROW(8, 56, 76, Z12, Z13, Z14, Z15, w4skip3, w4noacc3)
	NEXTTILE(w4tile)

w4done:
	VZEROUPPER
	RET

// func w8a8x1VNNI(p *w8Args)
//
// w8a8x4VNNI for the single row a[0] (rowmask ignored): the groups
// alternate between two sets of accumulators, summed at the end, to keep
// eight VPDPBUSD chains in flight.
TEXT ·w8a8x1VNNI(SB), NOSPLIT, $0-8
	MOVQ p+0(FP), DI
	MOVQ 0(DI), R8
	SETUP
	TESTQ AX, AX
	JZ    w1done
	MOVQ  96(DI), CX
	MOVQ  CX, R9
	ANDQ  $-8, R9

w1tile:
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	XORQ   DX, DX
	XORQ   BX, BX
	CMPQ   DX, R9
	JGE    w1one

w1pair:
	VPBROADCASTD (R8)(DX*1), Z16
	VPBROADCASTD 4(R8)(DX*1), Z17
	VPDPBUSD     (R12)(BX*1), Z16, Z0
	VPDPBUSD     (R13)(BX*1), Z16, Z1
	VPDPBUSD     (R14)(BX*1), Z16, Z2
	VPDPBUSD     (R15)(BX*1), Z16, Z3
	VPDPBUSD     64(R12)(BX*1), Z17, Z4
	VPDPBUSD     64(R13)(BX*1), Z17, Z5
	VPDPBUSD     64(R14)(BX*1), Z17, Z6
	VPDPBUSD     64(R15)(BX*1), Z17, Z7
	ADDQ         $8, DX
	ADDQ         $128, BX
	CMPQ         DX, R9
	JLT          w1pair

w1one:
	CMPQ         DX, CX
	JGE          w1sum
	VPBROADCASTD (R8)(DX*1), Z16
	VPDPBUSD     (R12)(BX*1), Z16, Z0
	VPDPBUSD     (R13)(BX*1), Z16, Z1
	VPDPBUSD     (R14)(BX*1), Z16, Z2
	VPDPBUSD     (R15)(BX*1), Z16, Z3

w1sum:
	VPADDD Z4, Z0, Z0
	VPADDD Z5, Z1, Z1
	VPADDD Z6, Z2, Z2
	VPADDD Z7, Z3, Z3
	LOADCOLS
	ROW(1, 32, 64, Z0, Z1, Z2, Z3, w1skip, w1noacc)
	NEXTTILE(w1tile)

w1done:
	VZEROUPPER
	RET
