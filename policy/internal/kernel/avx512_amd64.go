//go:build !purego

package kernel

import "unsafe"

// ntArgs is the argument block of nt4x4AVX512, nt4x4I8AVX512 and nt2x2AVX2
// (the assembly uses the field offsets; TestArgLayout checks them).
type ntArgs struct {
	a       [4]*float32       // rows of a (0)
	b       [4]unsafe.Pointer // rows of b of the first tile, float32 or int8 (32)
	c       [4]*float32       // output rows at the first tile's column (64)
	kfull   int               // bytes in the whole 16-float blocks of k (96)
	kmask   int               // lane mask of the last partial block, 0 if none (104)
	bstep   int               // bytes from one tile's b rows to the next's (112)
	ntiles  int               // tiles along the row (120)
	rowmask int               // rows to store, bits 0..3 (128)
	colmask int               // columns to store in every tile, bits 0..3 (136)
	acc     int               // 1 to add to c (144)
	tail    *[16]int32        // AVX2 only: lane masks of the last partial block, nil if none (152)
	astep   int               // AVX-512: bytes from one row block's a rows to the next's (160)
	cstep   int               // AVX-512: bytes from one row block's c rows to the next's (168)
	nrb     int               // AVX-512: row blocks (176); counts down in the kernel
	coff    int               // AVX-512: scratch, the row-block offset of c (184)
	scale   *float32          // int8 b: the scales of the first tile's columns (192)
}

// mvArgs is the argument block of nt1x16AVX512 and nt1x16I8AVX512 (the
// assembly uses the field offsets; TestArgLayout checks them).
type mvArgs struct {
	a       *float32       // the row of a (0)
	b       unsafe.Pointer // first b row of the first tile, float32 or int8 (8)
	c       *float32       // output of the first tile's first column (16)
	ldb     int            // bytes between b rows (24)
	kfull   int            // (32)
	kmask   int            // (40)
	ntiles  int            // (48)
	colmask int            // columns to store in every tile, 16 bits (56)
	acc     int            // (64)
	scale   *float32       // int8 b: the scales of the first tile's columns (72)
}

//go:noescape
func nt4x4AVX512(p *ntArgs)

//go:noescape
func nt4x4I8AVX512(p *ntArgs)

//go:noescape
func nt1x16I8AVX512(p *mvArgs)

//go:noescape
func nt1x16AVX512(p *mvArgs)

//go:noescape
func dotAVX512(x, y *float32, n int) float32

// kSplit returns the bytes of the whole 16-blocks of k and the lane mask of
// the remaining partial block.
func kSplit(k int) (kfull, kmask int) {
	return (k &^ (lanes - 1)) * 4, (1 << (k & (lanes - 1))) - 1
}

func dotAVX512Go(x, y []float32) float32 {
	if len(x) == 0 {
		return 0
	}
	y = y[:len(x)]
	return dotAVX512(&x[0], &y[0], len(x))
}

// Cache blocking of ntAVX512: the b rows of one column block (ntL1Bytes)
// stay in L1 while the row blocks of a row panel (ntL2Bytes of a, in L2)
// pass over them.
const (
	ntL1Bytes = 32 << 10
	ntL2Bytes = 256 << 10
)

// ntB describes the b operand of a MatMulNT kernel: float32 rows, or int8
// rows with one scale per row.
type ntB struct {
	base     unsafe.Pointer // address of b row 0 (the caller checked rows [0, n))
	rowBytes int            // bytes between b rows
	scale    []float32      // int8 rows: the row scales; nil for float32
}

// row returns the address of b row j.
func (b ntB) row(j int) unsafe.Pointer { return unsafe.Add(b.base, j*b.rowBytes) }

func ntAVX512(c []float32, ldc int, a []float32, lda int, b []float32, ldb int, m, n, k int, acc bool) {
	if m == 0 || n == 0 {
		return
	}
	if k == 0 {
		ntGeneric(c, ldc, a, lda, b, ldb, m, n, k, acc)
		return
	}
	_ = b[(n-1)*ldb+k-1]
	if ntlUse(m, n, k) {
		// The full 64-column panels by lane passes, the rest by 4×4 tiles:
		// the same bits.
		ntLanesAVX512(c, ldc, a, lda, b, ldb, m, n, k, acc)
		n64 := n &^ (ntlCols - 1)
		if n64 == n {
			return
		}
		c, b, n = c[n64:], b[n64*ldb:], n-n64
	}
	ntDriveAVX512(c, ldc, a, lda, m, n, k, acc, ntB{base: unsafe.Pointer(&b[0]), rowBytes: ldb * 4})
}

func ntI8AVX512(c []float32, ldc int, a []float32, lda int, q []int8, ldq int, scale []float32, m, n, k int, acc bool) {
	if m == 0 || n == 0 {
		return
	}
	if k == 0 {
		ntI8Generic(c, ldc, a, lda, q, ldq, scale, m, n, k, acc)
		return
	}
	_ = q[(n-1)*ldq+k-1]
	_ = scale[n-1]
	ntDriveAVX512(c, ldc, a, lda, m, n, k, acc, ntB{base: unsafe.Pointer(&q[0]), rowBytes: ldq, scale: scale})
}

// ntDriveAVX512 computes c = a·bᵀ (strided, k > 0) with the AVX-512 tile
// kernels. Full 4×4 tiles cover the bulk, in column blocks whose b rows stay
// in L1 over a row panel of a that stays in L2; ragged rows and columns are
// covered by tiles shifted back over already computed outputs, or with
// duplicated operand rows, and masked stores, so every output goes through
// the same code. A single row uses 1×16 tiles. It is one function of ~100
// lines on purpose: the blocking loops and the ragged-edge cases are one
// schedule, and each output's bits depend on all of it.
func ntDriveAVX512(c []float32, ldc int, a []float32, lda int, m, n, k int, acc bool, b ntB) {
	// Bounds: the kernels read rows [0,m) of a and write [0,m)×[0,n) of c;
	// the caller checked b.
	_ = a[(m-1)*lda+k-1]
	_ = c[(m-1)*ldc+n-1]
	kfull, kmask := kSplit(k)
	int8b := b.scale != nil
	if m == 1 && n >= 16 {
		// A matrix-vector product reads b once with 1×16 tiles; from two rows
		// on, 4×4 tiles (with duplicated rows) read b fewer times in all.
		p := mvArgs{a: &a[0], b: b.row(0), c: &c[0], ldb: b.rowBytes, kfull: kfull, kmask: kmask, acc: b2i(acc)}
		// The kernels are called directly (not through a func value) so that
		// p, marked noescape, stays on the stack.
		kern := func(p *mvArgs) {
			if int8b {
				nt1x16I8AVX512(p)
			} else {
				nt1x16AVX512(p)
			}
		}
		if int8b {
			p.scale = &b.scale[0]
		}
		nt := n / 16
		p.ntiles, p.colmask = nt, 0xFFFF
		kern(&p)
		if rem := n - 16*nt; rem > 0 {
			// The last ragged tile is shifted back and stores only its new
			// columns.
			j0 := n - 16
			p.b, p.c = b.row(j0), &c[j0]
			if int8b {
				p.scale = &b.scale[j0]
			}
			p.ntiles, p.colmask = 1, 0xFFFF&^((1<<(16-rem))-1)
			kern(&p)
		}
		return
	}
	var p ntArgs
	p.kfull, p.kmask, p.acc = kfull, kmask, b2i(acc)
	p.bstep = 4 * b.rowBytes
	p.astep, p.cstep = 4*lda*4, 4*ldc*4
	// call runs the row blocks [i0, i0+4·nrb) (the last one possibly ragged,
	// then nrb = 1) against the b rows j0.. in ntiles tiles.
	call := func(i0, nrb, j0, ntiles, colmask int) {
		rowmask := 0xF
		if i0+4 > m {
			if m >= 4 {
				// Shift the block back; store only the rows not yet done.
				rowmask = 0xF &^ ((1 << (i0 + 4 - m)) - 1)
				i0 = m - 4
			} else {
				rowmask = (1 << m) - 1
			}
		}
		for r := range 4 {
			i := min(i0+r, m-1)
			p.a[r] = &a[i*lda]
			p.c[r] = &c[i*ldc+j0]
			p.b[r] = b.row(min(j0+r, n-1))
		}
		if int8b {
			p.scale = &b.scale[j0]
		}
		p.rowmask, p.colmask, p.nrb, p.ntiles = rowmask, colmask, nrb, ntiles
		if int8b {
			nt4x4I8AVX512(&p)
		} else {
			nt4x4AVX512(&p)
		}
	}
	fullRows := m / 4
	n4 := n &^ 3
	nb := max(4, ntL1Bytes/(k*4)&^3)
	mb := max(4, ntL2Bytes/(k*4)&^3)
	for i0 := 0; i0 < 4*fullRows; i0 += mb {
		nrb := (min(i0+mb, 4*fullRows) - i0) / 4
		for j0 := 0; j0 < n4; j0 += nb {
			call(i0, nrb, j0, (min(j0+nb, n4)-j0)/4, 0xF)
		}
		if n4 < n {
			call(i0, nrb, n4, 1, (1<<(n-n4))-1)
		}
	}
	if m%4 != 0 {
		// The ragged rows: one block shifted back over done rows (or with
		// duplicated rows when m < 4).
		i0 := 4 * fullRows
		if n4 > 0 {
			call(i0, 1, 0, n4/4, 0xF)
		}
		if n4 < n {
			call(i0, 1, n4, 1, (1<<(n-n4))-1)
		}
	}
}
