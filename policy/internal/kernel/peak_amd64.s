//go:build !purego

#include "textflag.h"

// The loops of BenchmarkFLOPBound (peak_amd64_test.go): this CPU's
// floating-point peak and clock, measured rather than taken from a data
// sheet. Each loop keeps its operands in registers (no load, no store),
// so it is bound by the execution units alone.

// func fmaLoopAVX512(n int)
//
// n rounds of 16 VFMADD231PS on 16 independent ZMM accumulators: 512
// FLOP a round. Sixteen chains cover an FMA latency of 4 cycles on two
// FMA units (8 would do) with room to spare.
TEXT ·fmaLoopAVX512(SB), NOSPLIT, $0-8
	MOVQ   n+0(FP), CX
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
	TESTQ  CX, CX
	JLE    done512

loop512:
	VFMADD231PS Z16, Z17, Z0
	VFMADD231PS Z16, Z17, Z1
	VFMADD231PS Z16, Z17, Z2
	VFMADD231PS Z16, Z17, Z3
	VFMADD231PS Z16, Z17, Z4
	VFMADD231PS Z16, Z17, Z5
	VFMADD231PS Z16, Z17, Z6
	VFMADD231PS Z16, Z17, Z7
	VFMADD231PS Z16, Z17, Z8
	VFMADD231PS Z16, Z17, Z9
	VFMADD231PS Z16, Z17, Z10
	VFMADD231PS Z16, Z17, Z11
	VFMADD231PS Z16, Z17, Z12
	VFMADD231PS Z16, Z17, Z13
	VFMADD231PS Z16, Z17, Z14
	VFMADD231PS Z16, Z17, Z15
	DECQ        CX
	JNZ         loop512

done512:
	VZEROUPPER
	RET

// func fmaLoopAVX2(n int)
//
// n rounds of 12 VFMADD231PS on 12 independent YMM accumulators: 192
// FLOP a round (AVX2 has 16 YMM registers: 12 accumulators and the two
// multiplicands).
TEXT ·fmaLoopAVX2(SB), NOSPLIT, $0-8
	MOVQ   n+0(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
	VXORPS Y12, Y12, Y12
	VXORPS Y13, Y13, Y13
	TESTQ  CX, CX
	JLE    done2

loop2:
	VFMADD231PS Y12, Y13, Y0
	VFMADD231PS Y12, Y13, Y1
	VFMADD231PS Y12, Y13, Y2
	VFMADD231PS Y12, Y13, Y3
	VFMADD231PS Y12, Y13, Y4
	VFMADD231PS Y12, Y13, Y5
	VFMADD231PS Y12, Y13, Y6
	VFMADD231PS Y12, Y13, Y7
	VFMADD231PS Y12, Y13, Y8
	VFMADD231PS Y12, Y13, Y9
	VFMADD231PS Y12, Y13, Y10
	VFMADD231PS Y12, Y13, Y11
	DECQ        CX
	JNZ         loop2

done2:
	VZEROUPPER
	RET

// ADD16 is a chain of 16 dependent register additions to AX, one cycle
// each (register operands: some cores fold chains of immediate additions
// in the renamer).
#define ADD16 \
	ADDQ BX, AX \
	ADDQ BX, AX \
	ADDQ BX, AX \
	ADDQ BX, AX \
	ADDQ BX, AX \
	ADDQ BX, AX \
	ADDQ BX, AX \
	ADDQ BX, AX \
	ADDQ BX, AX \
	ADDQ BX, AX \
	ADDQ BX, AX \
	ADDQ BX, AX \
	ADDQ BX, AX \
	ADDQ BX, AX \
	ADDQ BX, AX \
	ADDQ BX, AX

// func addChain(n int) int
//
// n rounds of 16 dependent additions: 16·n cycles, so the core's clock
// is 16·n over the time taken. Returns the sum, n·16.
TEXT ·addChain(SB), NOSPLIT, $0-16
	MOVQ  n+0(FP), CX
	XORQ  AX, AX
	MOVQ  $1, BX
	TESTQ CX, CX
	JLE   doneadd

loopadd:
	ADD16
	DECQ CX
	JNZ  loopadd

doneadd:
	MOVQ AX, ret+8(FP)
	RET

// func addChainAVX512(n int) int
//
// addChain with 16 independent 512-bit VFMADD231PS beside each round's 16
// additions: the clock while the FMA units are busy (AVX-512 code may run
// at a lower clock than scalar code). With at least one FMA a cycle the
// round is still bound by the 16-cycle chain of additions.
TEXT ·addChainAVX512(SB), NOSPLIT, $0-16
	MOVQ   n+0(FP), CX
	XORQ   AX, AX
	MOVQ   $1, BX
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	TESTQ  CX, CX
	JLE    doneaddz

loopaddz:
	VFMADD231PS Z16, Z17, Z0
	VFMADD231PS Z16, Z17, Z1
	VFMADD231PS Z16, Z17, Z2
	VFMADD231PS Z16, Z17, Z3
	VFMADD231PS Z16, Z17, Z4
	VFMADD231PS Z16, Z17, Z5
	VFMADD231PS Z16, Z17, Z6
	VFMADD231PS Z16, Z17, Z7
	ADD16
	VFMADD231PS Z16, Z17, Z0
	VFMADD231PS Z16, Z17, Z1
	VFMADD231PS Z16, Z17, Z2
	VFMADD231PS Z16, Z17, Z3
	VFMADD231PS Z16, Z17, Z4
	VFMADD231PS Z16, Z17, Z5
	VFMADD231PS Z16, Z17, Z6
	VFMADD231PS Z16, Z17, Z7
	DECQ        CX
	JNZ         loopaddz

doneaddz:
	VZEROUPPER
	MOVQ AX, ret+8(FP)
	RET

// func fmaChainAVX512(n int)
//
// n rounds of 16 dependent 512-bit VFMADD231PS on one accumulator: 16·n
// times the FMA latency. With addChain's clock it gives the latency in
// cycles (4 on the cores of recent years), or, taking the latency as
// known, the clock the FMA unit runs at.
TEXT ·fmaChainAVX512(SB), NOSPLIT, $0-8
	MOVQ   n+0(FP), CX
	VPXORD Z0, Z0, Z0
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	TESTQ  CX, CX
	JLE    donechain

loopchain:
	VFMADD231PS Z16, Z17, Z0
	VFMADD231PS Z16, Z17, Z0
	VFMADD231PS Z16, Z17, Z0
	VFMADD231PS Z16, Z17, Z0
	VFMADD231PS Z16, Z17, Z0
	VFMADD231PS Z16, Z17, Z0
	VFMADD231PS Z16, Z17, Z0
	VFMADD231PS Z16, Z17, Z0
	VFMADD231PS Z16, Z17, Z0
	VFMADD231PS Z16, Z17, Z0
	VFMADD231PS Z16, Z17, Z0
	VFMADD231PS Z16, Z17, Z0
	VFMADD231PS Z16, Z17, Z0
	VFMADD231PS Z16, Z17, Z0
	VFMADD231PS Z16, Z17, Z0
	VFMADD231PS Z16, Z17, Z0
	DECQ        CX
	JNZ         loopchain

donechain:
	VZEROUPPER
	RET
