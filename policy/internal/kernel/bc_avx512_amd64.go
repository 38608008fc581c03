//go:build !purego

package kernel

// bcArgs is the argument block of bc6x64AVX512, bc1x64AVX512 and bc4x16AVX2
// (the assembly uses the field offsets; TestArgLayout checks them).
type bcArgs struct {
	a       [8]*float32 // a(i0+r, p0) for the tile's rows (0)
	c       [8]*float32 // c(i0+r, j0) (64)
	b       *float32    // b(p0, j0) (128)
	astep   int         // bytes from a(i, p) to a(i, p+1) (136)
	ldb     int         // bytes from b(p, j) to b(p+1, j) (144)
	k       int         // products to accumulate (152)
	rowmask int         // rows to store, one bit per row (160)
	masks   [4]int      // column masks of the four 16-column vectors (168)
	acc     int         // 1 to start from the stored c (200)
	cmask   *[16]int32  // AVX2 only: VMASKMOVPS column masks of the tile (208)
}

//go:noescape
func bc6x64AVX512(p *bcArgs)

//go:noescape
func bc1x64AVX512(p *bcArgs)

//go:noescape
func bc8x32AVX512(p *bcArgs)

// Cache blocking of the broadcast kernel: kBlock products per pass keep the
// b panel and the a strip of a pass in L1/L2.
const bcKBlock = 256

// bcAVX512 computes c (+)= A·b where A(i, p) = a[i·ai + p·ap] (NN: ai = lda,
// ap = 1; TN: ai = 1, ap = lda), with 6×64 tiles (8×32 for at most 32
// columns). Each output is one sequential chain of fused multiply-adds over
// p; the k blocks store and reload the float32 accumulators exactly, so
// blocking changes no bit.
func bcAVX512(c []float32, ldc int, a []float32, ai, ap int, b []float32, ldb int, m, n, k int, acc bool) {
	if m == 0 || n == 0 {
		return
	}
	if k == 0 {
		if !acc {
			for i := range m {
				clear(c[i*ldc : i*ldc+n])
			}
		}
		return
	}
	_ = a[(m-1)*ai+(k-1)*ap]
	_ = b[(k-1)*ldb+n-1]
	_ = c[(m-1)*ldc+n-1]
	var p bcArgs
	p.astep, p.ldb = ap*4, ldb*4
	if m == 1 {
		// A vector-matrix product (attention values): one row, no blocking.
		p.k, p.acc, p.a[0] = k, b2i(acc), &a[0]
		for j0 := 0; j0 < n; j0 += 64 {
			bcMasks(&p, n, j0)
			p.b, p.c[0] = &b[j0], &c[j0]
			bc1x64AVX512(&p)
		}
		return
	}
	if n <= 32 {
		bcNarrow(&p, c, ldc, a, ai, ap, b, ldb, m, n, k, acc)
		return
	}
	bcWide(&p, c, ldc, a, ai, ap, b, ldb, m, n, k, acc)
}

// bcMasks sets p's column masks for the 64 columns from j0 of n.
func bcMasks(p *bcArgs, n, j0 int) {
	for v := range 4 {
		w := min(max(n-j0-16*v, 0), 16)
		p.masks[v] = (1 << w) - 1
	}
}

// bcWide is bcAVX512 (m ≥ 2, k ≥ 1) in 6×64 tiles; p's astep and ldb are
// set.
func bcWide(p *bcArgs, c []float32, ldc int, a []float32, ai, ap int, b []float32, ldb, m, n, k int, acc bool) {
	for p0 := 0; p0 < k; p0 += bcKBlock {
		p.k = min(bcKBlock, k-p0)
		p.acc = b2i(acc || p0 > 0)
		// Row tiles outside: the a strip of a tile stays in L1 while the
		// tile sweeps the b panel of this k block (in L2).
		for i0 := 0; i0 < m; i0 += 6 {
			p.rowmask = (1 << min(6, m-i0)) - 1
			for r := range 6 {
				p.a[r] = &a[min(i0+r, m-1)*ai+p0*ap]
			}
			for j0 := 0; j0 < n; j0 += 64 {
				bcMasks(p, n, j0)
				p.b = &b[p0*ldb+j0]
				for r := range 6 {
					p.c[r] = &c[min(i0+r, m-1)*ldc+j0]
				}
				bc6x64AVX512(p)
			}
		}
	}
}

// bcNarrow is bcWide for at most 32 columns (the per-head attention
// products, 32 wide at head width 32), in 8×32 tiles: the 6×64 tile would
// leave half its lanes masked. Each output is the same sequential chain of
// fused multiply-adds over p, blocked the same way, so the bits are those
// of the 6×64 tiles.
func bcNarrow(p *bcArgs, c []float32, ldc int, a []float32, ai, ap int, b []float32, ldb, m, n, k int, acc bool) {
	bcMasks(p, n, 0)
	for p0 := 0; p0 < k; p0 += bcKBlock {
		p.k = min(bcKBlock, k-p0)
		p.acc = b2i(acc || p0 > 0)
		p.b = &b[p0*ldb]
		for i0 := 0; i0 < m; i0 += 8 {
			p.rowmask = (1 << min(8, m-i0)) - 1
			for r := range 8 {
				i := min(i0+r, m-1)
				p.a[r] = &a[i*ai+p0*ap]
				p.c[r] = &c[i*ldc]
			}
			bc8x32AVX512(p)
		}
	}
}

func nnAVX512(c []float32, ldc int, a []float32, lda int, b []float32, ldb int, m, n, k int, acc bool) {
	bcAVX512(c, ldc, a, lda, 1, b, ldb, m, n, k, acc)
}

func tnAVX512(c []float32, ldc int, a []float32, lda int, b []float32, ldb int, m, n, k int, acc bool) {
	bcAVX512(c, ldc, a, 1, lda, b, ldb, m, n, k, acc)
}

// attvArgs is the argument block of attv128AVX512 (the assembly uses the
// field offsets; TestArgLayout checks them).
type attvArgs struct {
	p   [8]*float32 // the weights of the head of each 16-column vector (0)
	v   *float32    // the first value row at the slab's first column (64)
	out *float32    // the slab's outputs (72)
	ldv int         // bytes between value rows (80)
	n   int         // value rows (88)
	acc int         // 1 to start from the stored outputs (96)
}

//go:noescape
func attv128AVX512(p *attvArgs)

//go:noescape
func attv128x2AVX512(p *attvArgs)

// attvAVX512 is AttendValues in slabs of 128 columns (eight accumulators,
// enough independent chains to keep the FMA units busy) when d is a
// multiple of 128 and hd of 16 (one weight broadcast per pair of vectors
// when hd is a multiple of 32); it reports false, having done nothing, for
// other shapes.
func attvAVX512(out, probs []float32, ldp int, v []float32, ldv int, n, d, hd int, acc bool) bool {
	if d%128 != 0 || hd%16 != 0 {
		return false
	}
	if n == 0 {
		if !acc {
			clear(out[:d])
		}
		return true
	}
	heads := d / hd
	_ = probs[(heads-1)*ldp+n-1]
	_ = v[(n-1)*ldv+d-1]
	_ = out[d-1]
	var p attvArgs
	p.ldv, p.n, p.acc = ldv*4, n, b2i(acc)
	for j0 := 0; j0 < d; j0 += 128 {
		for r := range 8 {
			p.p[r] = &probs[(j0+16*r)/hd*ldp]
		}
		p.v, p.out = &v[j0], &out[j0]
		if hd%32 == 0 {
			attv128x2AVX512(&p)
		} else {
			attv128AVX512(&p)
		}
	}
	return true
}
