//go:build !purego

package kernel

// ntArgs is the argument block of nt4x4AVX512 (field offsets are used by the
// assembly; do not reorder).
type ntArgs struct {
	a       [4]*float32 // rows of a (0)
	b       [4]*float32 // rows of b of the first tile (32)
	c       [4]*float32 // output rows at the first tile's column (64)
	kfull   int         // bytes in the whole 16-float blocks of k (96)
	kmask   int         // lane mask of the last partial block, 0 if none (104)
	bstep   int         // bytes from one tile's b rows to the next's (112)
	ntiles  int         // tiles along the row (120)
	rowmask int         // rows to store, bits 0..3 (128)
	colmask int         // columns to store in every tile, bits 0..3 (136)
	acc     int         // 1 to add to c (144)
	tail    *[16]int32  // AVX2 only: lane masks of the last partial block, nil if none (152)
	astep   int         // AVX-512: bytes from one row block's a rows to the next's (160)
	cstep   int         // AVX-512: bytes from one row block's c rows to the next's (168)
	nrb     int         // AVX-512: row blocks (176); counts down in the kernel
	coff    int         // AVX-512: scratch, the row-block offset of c (184)
}

// mvArgs is the argument block of nt1x16AVX512 (offsets used by assembly).
type mvArgs struct {
	a       *float32 // the row of a (0)
	b       *float32 // first b row of the first tile (8)
	c       *float32 // output of the first tile's first column (16)
	ldb     int      // bytes between b rows (24)
	kfull   int      // (32)
	kmask   int      // (40)
	ntiles  int      // (48)
	colmask int      // columns to store in every tile, 16 bits (56)
	acc     int      // (64)
}

//go:noescape
func nt4x4AVX512(p *ntArgs)

//go:noescape
func nt1x16AVX512(p *mvArgs)

//go:noescape
func dotAVX512(x, y *float32, n int) float32

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

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

// ntAVX512 computes c = a·bᵀ (strided) with the AVX-512 tile kernels. Full
// 4×4 tiles cover the bulk, column block by column block; ragged rows and
// columns are covered by tiles shifted back over already computed outputs,
// or with duplicated operand rows, and masked stores, so every output goes
// through the same code.
func ntAVX512(c []float32, ldc int, a []float32, lda int, b []float32, ldb int, m, n, k int, acc bool) {
	if m == 0 || n == 0 {
		return
	}
	if k == 0 {
		ntGeneric(c, ldc, a, lda, b, ldb, m, n, k, acc)
		return
	}
	// Bounds: the kernels read rows [0,m) of a, [0,n) of b and write [0,m)×[0,n) of c.
	_ = a[(m-1)*lda+k-1]
	_ = b[(n-1)*ldb+k-1]
	_ = c[(m-1)*ldc+n-1]
	kfull, kmask := kSplit(k)
	if m == 1 && n >= 16 {
		// A matrix-vector product reads b once with 1×16 tiles; from two rows
		// on, 4×4 tiles (with duplicated rows) read b fewer times in all.
		mv1x16(c, a, b, ldb, n, kfull, kmask, acc)
		return
	}
	var p ntArgs
	p.kfull, p.kmask, p.acc = kfull, kmask, b2i(acc)
	p.bstep = 4 * ldb * 4
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
			p.b[r] = &b[min(j0+r, n-1)*ldb]
		}
		p.rowmask, p.colmask, p.nrb, p.ntiles = rowmask, colmask, nrb, ntiles
		nt4x4AVX512(&p)
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

// mv1x16 computes one output row ci[0..n) = ai·bᵀ (n ≥ 16) with 1×16 tiles;
// the last ragged tile is shifted back and stores only its new columns.
func mv1x16(ci, ai, b []float32, ldb, n, kfull, kmask int, acc bool) {
	p := mvArgs{a: &ai[0], b: &b[0], c: &ci[0], ldb: ldb * 4, kfull: kfull, kmask: kmask, acc: b2i(acc)}
	nt := n / 16
	p.ntiles, p.colmask = nt, 0xFFFF
	nt1x16AVX512(&p)
	if rem := n - 16*nt; rem > 0 {
		j0 := n - 16
		p.b, p.c = &b[j0*ldb], &ci[j0]
		p.ntiles, p.colmask = 1, 0xFFFF&^((1<<(16-rem))-1)
		nt1x16AVX512(&p)
	}
}
