//go:build !purego

#include "textflag.h"

// The reduction of nt_avx512_amd64.s (a macro is local to its file):
// SHREDUCE16 reduces the accumulators Z0..Z15 (output o in Z_o) into Z0,
// whose 128-bit chunk c, lane t holds output 4t+c, with the additions of
// the 16-lane tree. Clobbers Z1..Z17.
#define SHLEVEL1(x, y, d) \
	VSHUFF32X4 $0x44, y, x, Z16 \
	VSHUFF32X4 $0xEE, y, x, Z17 \
	VADDPS     Z17, Z16, d

#define SHLEVEL2(x, y, d) \
	VSHUFF32X4 $0x88, y, x, Z16 \
	VSHUFF32X4 $0xDD, y, x, Z17 \
	VADDPS     Z17, Z16, d

#define SHLEVEL3(x, y, d) \
	VSHUFPS $0x44, y, x, Z16 \
	VSHUFPS $0xEE, y, x, Z17 \
	VADDPS  Z17, Z16, d

#define SHLEVEL4(x, y, d) \
	VSHUFPS $0x88, y, x, Z16 \
	VSHUFPS $0xDD, y, x, Z17 \
	VADDPS  Z17, Z16, d

#define SHREDUCE16 \
	SHLEVEL1(Z0, Z1, Z0)    \
	SHLEVEL1(Z2, Z3, Z1)    \
	SHLEVEL1(Z4, Z5, Z2)    \
	SHLEVEL1(Z6, Z7, Z3)    \
	SHLEVEL1(Z8, Z9, Z4)    \
	SHLEVEL1(Z10, Z11, Z5)  \
	SHLEVEL1(Z12, Z13, Z6)  \
	SHLEVEL1(Z14, Z15, Z7)  \
	SHLEVEL2(Z0, Z1, Z0)    \
	SHLEVEL2(Z2, Z3, Z1)    \
	SHLEVEL2(Z4, Z5, Z2)    \
	SHLEVEL2(Z6, Z7, Z3)    \
	SHLEVEL3(Z0, Z1, Z0)    \
	SHLEVEL3(Z2, Z3, Z1)    \
	SHLEVEL4(Z0, Z1, Z0)

// SHKEY accumulates one key row (at r) against the four heads' queries
// Z18..Z25 (head h: Z(18+2h) and Z(19+2h), its values 0–15 and 16–31)
// into a0..a3 (head 0..3), in increasing k as nt1x16F16AVX512 does.
#define SHKEY(r, a0, a1, a2, a3) \
	VPXORD      a0, a0, a0  \
	VPXORD      a1, a1, a1  \
	VPXORD      a2, a2, a2  \
	VPXORD      a3, a3, a3  \
	VCVTPH2PS   0(r), Z26   \
	VCVTPH2PS   64(r), Z27  \
	VFMADD231PS Z26, Z18, a0 \
	VFMADD231PS Z27, Z20, a1 \
	VCVTPH2PS   32(r), Z26  \
	VCVTPH2PS   96(r), Z27  \
	VFMADD231PS Z26, Z19, a0 \
	VFMADD231PS Z27, Z21, a1 \
	VCVTPH2PS   128(r), Z26 \
	VCVTPH2PS   192(r), Z27 \
	VFMADD231PS Z26, Z22, a2 \
	VFMADD231PS Z27, Z24, a3 \
	VCVTPH2PS   160(r), Z26 \
	VCVTPH2PS   224(r), Z27 \
	VFMADD231PS Z26, Z23, a2 \
	VFMADD231PS Z27, Z25, a3

// func scoresHeadsF16AVX512(p *shArgs)
// Key j of a group, head h accumulates into Z(4j+h), so that SHREDUCE16
// leaves head h's four scores in chunk h of Z0.
TEXT ·scoresHeadsF16AVX512(SB), NOSPLIT, $0-8
	MOVQ    p+0(FP), DI
	MOVQ    0(DI), SI
	VMOVUPS 0(SI), Z18
	VMOVUPS 64(SI), Z19
	VMOVUPS 128(SI), Z20
	VMOVUPS 192(SI), Z21
	VMOVUPS 256(SI), Z22
	VMOVUPS 320(SI), Z23
	VMOVUPS 384(SI), Z24
	VMOVUPS 448(SI), Z25
	MOVQ    8(DI), BX
	MOVQ    16(DI), R14
	MOVQ    24(DI), R9
	MOVQ    32(DI), R10
	LEAQ    (R10)(R10*2), R11
	MOVQ    40(DI), AX

shgroup:
	MOVQ BX, R8
	SHKEY(R8, Z0, Z1, Z2, Z3)
	ADDQ R9, R8
	SHKEY(R8, Z4, Z5, Z6, Z7)
	ADDQ R9, R8
	SHKEY(R8, Z8, Z9, Z10, Z11)
	ADDQ R9, R8
	SHKEY(R8, Z12, Z13, Z14, Z15)
	SHREDUCE16
	VEXTRACTF32X4 $0, Z0, X1
	VMOVUPS       X1, (R14)
	VEXTRACTF32X4 $1, Z0, X1
	VMOVUPS       X1, (R14)(R10*1)
	VEXTRACTF32X4 $2, Z0, X1
	VMOVUPS       X1, (R14)(R10*2)
	VEXTRACTF32X4 $3, Z0, X1
	VMOVUPS       X1, (R14)(R11*1)
	LEAQ          (BX)(R9*4), BX
	ADDQ          $16, R14
	DECQ          AX
	JNZ           shgroup

	VZEROUPPER
	RET
