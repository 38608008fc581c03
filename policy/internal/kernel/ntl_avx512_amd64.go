//go:build !purego

package kernel

import (
	"math"
	"unsafe"
)

// ntlArgs is the argument block of ntl6x64AVX512 (the assembly uses the
// field offsets; TestArgLayout checks them).
type ntlArgs struct {
	a       [6]*float32 // rows of a at p = 0 (0)
	c       [6]*float32 // output rows at the tile's first column (48)
	b       *float32    // the packed panel (96)
	lstep   int         // bytes from one lane's vectors to the next lane's (104)
	kq      int         // whole 16-blocks of k: the steps of every lane (112)
	kr      int         // k mod 16: lanes below it take one step more (120)
	rowmask int         // rows to store, bits 0..5 (128)
	acc     int         // 1 to add the old c (136)
	s       *float32    // the stack of partial sums, 4×24 vectors (144)
}

//go:noescape
func ntl6x64AVX512(p *ntlArgs)

//go:noescape
func ntlPackAVX512(dst, b *float32, idx *[ntlCols]int32, k, nq int)

// The lane-pass kernel (ntl6x64AVX512) runs the full 64-column panels of a
// MatMulNT of at least ntlMinRows rows and at most ntlMaxK products per
// output; the rest goes to the 4×4 tiles (same bits). The bounds are set
// from operation counts, not measured: packing a panel (k gathers) costs
// about as much as eight row tiles save in shuffles at k = 128, and the
// packed panel (64·k floats, on the goroutine's stack) fits the L1 cache up
// to k = 128 and the L2 cache beyond (at k = 256 a tile reads 10.7 bytes of
// it from L2 per FMA).
const (
	ntlMinRows = 48
	ntlMaxK    = 256
	ntlCols    = 64
	// ntlStack is the floats of the stack of partial sums (four levels of
	// a 6×64 tile) plus room to align the buffers to 64 bytes.
	ntlStack = 4*6*ntlCols + 16
)

// ntlUse reports whether ntAVX512 runs the lane-pass kernel on an m×n×k
// product.
func ntlUse(m, n, k int) bool { return m >= ntlMinRows && n >= ntlCols && k <= ntlMaxK }

// ntLanesAVX512 computes the first n &^ 63 columns of c = a·bᵀ (strided,
// m ≥ 1, 1 ≤ k ≤ ntlMaxK) with ntl6x64AVX512, the bits of nt4x4AVX512.
// The packed panel and the partial sums live in a buffer on the stack,
// written by this call before they are read: no state survives the call.
func ntLanesAVX512(c []float32, ldc int, a []float32, lda int, b []float32, ldb int, m, n, k int, acc bool) {
	if k <= ntlMaxK/2 {
		var buf [ntlCols*ntlMaxK/2 + ntlStack]float32
		ntLanesBuf(buf[:], c, ldc, a, lda, b, ldb, m, n, k, acc)
		return
	}
	var buf [ntlCols*ntlMaxK + ntlStack]float32
	ntLanesBuf(buf[:], c, ldc, a, lda, b, ldb, m, n, k, acc)
}

// ntLanesBuf is ntLanesAVX512 with buf for the panel and the partial sums.
func ntLanesBuf(buf []float32, c []float32, ldc int, a []float32, lda int, b []float32, ldb int, m, n, k int, acc bool) {
	_ = a[(m-1)*lda+k-1]
	_ = b[(n-1)*ldb+k-1]
	_ = c[(m-1)*ldc+n-1]
	// Align to 64 bytes: the packed vectors and the saved sums are whole
	// cache lines.
	off := int(-uintptr(unsafe.Pointer(&buf[0]))/4) & 15
	buf = buf[off:]
	kq, kr := k/lanes, k%lanes
	nq := kq + b2i(kr > 0)
	panel := buf[:lanes*nq*ntlCols]
	sums := buf[len(panel) : len(panel)+4*6*ntlCols]
	var p ntlArgs
	p.b, p.s = &panel[0], &sums[0]
	p.lstep, p.kq, p.kr, p.acc = nq*ntlCols*4, kq, kr, b2i(acc)
	// The byte offsets of the panel's b rows, for the gathers of
	// ntlPackAVX512 (ntlPack when they do not fit an int32).
	var idx [ntlCols]int32
	gather := (ntlCols-1)*ldb*4 <= math.MaxInt32
	if gather {
		for j := range idx {
			idx[j] = int32(j * ldb * 4)
		}
	}
	for j0 := 0; j0+ntlCols <= n; j0 += ntlCols {
		if gather {
			_ = panel[(lanes-1)*nq*ntlCols+(nq-1)*ntlCols+ntlCols-1]
			_ = b[(j0+ntlCols-1)*ldb+k-1]
			ntlPackAVX512(&panel[0], &b[j0*ldb], &idx, k, nq)
		} else {
			ntlPack(panel, b[j0*ldb:], ldb, k, nq)
		}
		for i0 := 0; i0 < m; i0 += 6 {
			p.rowmask = (1 << min(6, m-i0)) - 1
			for r := range 6 {
				i := min(i0+r, m-1)
				p.a[r] = &a[i*lda]
				p.c[r] = &c[i*ldc+j0]
			}
			ntl6x64AVX512(&p)
		}
	}
}

// ntlPack packs the 64 rows of b (row stride ldb, k values each) for
// ntl6x64AVX512: lane l's vector q holds b(j, 16q+l) for j = 0..63 at
// dst[(l·nq+q)·64+j]. The slots of the last block past k are not written:
// the kernel never reads them.
func ntlPack(dst, b []float32, ldb, k, nq int) {
	_ = b[(ntlCols-1)*ldb+k-1]
	for j := range ntlCols {
		row := b[j*ldb : j*ldb+k]
		for p, v := range row {
			dst[((p%lanes)*nq+p/lanes)*ntlCols+j] = v
		}
	}
}
