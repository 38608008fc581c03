//go:build !purego

package kernel

import "unsafe"

// The NEON kernels of neon_arm64.s compute whole 16-element blocks (4-lane
// ones for the element-wise kernels); the wrappers below pass a ragged
// tail of a 16-lane sum as zero-padded copies (a padded lane adds 0·0, the
// +0 that the generic kernel adds to an unused lane) and do the last
// elements of an element-wise kernel with the generic code, which is the
// same arithmetic.

//go:noescape
func dotNEON(x, y *float32, nblk int, xt, yt *float32) float32

//go:noescape
func nt1x4NEON(p *neonNTArgs)

//go:noescape
func ntI8x4NEON(p *neonNTArgs)

//go:noescape
func bc4x16NEON(p *neonBCArgs)

//go:noescape
func axpyNEON(alpha float32, x, y *float32, n int)

//go:noescape
func scaleNEON(alpha float32, x *float32, n int)

//go:noescape
func expNEON(dst, x *float32, n int)

//go:noescape
func sigmoidNEON(dst, x *float32, n int)

//go:noescape
func siluMulNEON(dst, gate, up *float32, n int)

//go:noescape
func w8dot16SDOT(a *uint8, w *int8, groups int, d *[16]int32)

//go:noescape
func w8dot16NEON(a *uint8, w *int8, groups int, d *[16]int32)

// neonNTArgs is the argument block of nt1x4NEON and ntI8x4NEON (the
// assembly uses the field offsets; TestNEONArgLayout checks them).
type neonNTArgs struct {
	a    *float32          // the row of a (0)
	b    [4]unsafe.Pointer // the four rows of b, float32 or int8 (8)
	nblk int               // whole 16-element blocks (40)
	at   *float32          // a's zero-padded tail block, nil if none (48)
	bt   unsafe.Pointer    // the four rows' padded tails, one after the other (56)
	out  *[4]float32       // the four sums (64)
}

// neonBCArgs is the argument block of bc4x16NEON.
type neonBCArgs struct {
	a     [4]*float32 // a[i][p0] of the tile's rows (0)
	astep int         // bytes from a[i][p] to a[i][p+1] (32)
	b     *float32    // b[p0][j0] (40)
	ldb   int         // bytes between rows of b (48)
	k     int         // steps p, at least 1 (56)
	c     [4]*float32 // c[i][j0] of the tile's rows (64)
	rows  int         // rows to store, 1..4 (96)
	acc   int         // 1 to start from c, 0 from +0 (104)
}

func dotNEONGo(x, y []float32) float32 {
	k := len(x)
	if k == 0 {
		return 0
	}
	y = y[:k]
	full := k / lanes
	var xt, yt [lanes]float32
	var xp, yp *float32
	if r := k % lanes; r != 0 {
		copy(xt[:], x[full*lanes:])
		copy(yt[:], y[full*lanes:])
		xp, yp = &xt[0], &yt[0]
	}
	return dotNEON(&x[0], &y[0], full, xp, yp)
}

// ntNEON computes c = a·bᵀ (strided) one row of a against four rows of b
// at a time; a ragged last group repeats the last row of b and drops its
// extra sums.
func ntNEON(c []float32, ldc int, a []float32, lda int, b []float32, ldb int, m, n, k int, acc bool) {
	if m == 0 || n == 0 {
		return
	}
	if k == 0 {
		ntGeneric(c, ldc, a, lda, b, ldb, m, n, k, acc)
		return
	}
	ntRowsNEON(c, ldc, a, lda, b, ldb, m, n, k, nt1x4NEON, func(ci []float32, j int, v float32) {
		put(ci, j, v, acc)
	})
}

// ntI8NEON is MatMulNTInt8's product with ntI8x4NEON: the 16-lane sums of
// ntI8Generic, then the same scaling.
func ntI8NEON(c []float32, ldc int, a []float32, lda int, q []int8, ldq int, scale []float32, m, n, k int, acc bool) {
	if m == 0 || n == 0 {
		return
	}
	if k == 0 {
		ntI8Generic(c, ldc, a, lda, q, ldq, scale, m, n, k, acc)
		return
	}
	ntRowsNEON(c, ldc, a, lda, q, ldq, m, n, k, ntI8x4NEON, func(ci []float32, j int, v float32) {
		d := float32(v * scale[j])
		if acc {
			ci[j] += d
		} else {
			ci[j] = d
		}
	})
}

// ntRowsNEON runs a 1×4 NT kernel (nt1x4NEON or ntI8x4NEON) over every row
// of a against the rows of b four at a time, the ragged end of k copied
// zero-padded into buffers, and hands each sum to store(c's row, column,
// sum). m, n and k are at least 1.
func ntRowsNEON[T float32 | int8](c []float32, ldc int, a []float32, lda int, b []T, ldb int, m, n, k int, kern func(*neonNTArgs), store func(ci []float32, j int, v float32)) {
	_ = a[(m-1)*lda+k-1]
	_ = b[(n-1)*ldb+k-1]
	_ = c[(m-1)*ldc+n-1]
	full := k / lanes
	tail := full * lanes
	var at [lanes]float32
	var bt [4][lanes]T
	var out [4]float32
	p := neonNTArgs{nblk: full, out: &out}
	if tail < k {
		p.at, p.bt = &at[0], unsafe.Pointer(&bt)
	}
	for i := range m {
		p.a = &a[i*lda]
		if tail < k {
			copy(at[:], a[i*lda+tail:i*lda+k])
		}
		ci := c[i*ldc : i*ldc+n]
		for j0 := 0; j0 < n; j0 += 4 {
			for r := range 4 {
				j := min(j0+r, n-1)
				p.b[r] = unsafe.Pointer(&b[j*ldb])
				if tail < k {
					copy(bt[r][:], b[j*ldb+tail:j*ldb+k])
				}
			}
			kern(&p)
			for r := range min(4, n-j0) {
				store(ci, j0+r, out[r])
			}
		}
	}
}

// bcKBlockNEON is the k-block of bcNEON: a 16-column strip of b of this
// many rows (16 KiB) stays in the L1 cache while every row tile of a runs
// over it. Splitting k changes no bit: the sums are stored and reloaded as
// float32, which they are anyway.
const bcKBlockNEON = 256

// bcNEON computes c[i][j] (+)= Σ_p a[i·ai + p·ap]·b[p][j] with one fused
// multiply-add per p in increasing p (the NN product for ai = lda, ap = 1;
// TN for ai = 1, ap = lda) in 4×16 tiles; ragged rows run on duplicated
// pointers and are not stored, and the columns past the last multiple of
// 16 run in Go (nnGeneric or tnGeneric, via rest).
func bcNEON(c []float32, ldc int, a []float32, ai, ap int, b []float32, ldb int, m, n, k int, acc bool) {
	_ = a[(m-1)*ai+(k-1)*ap]
	_ = b[(k-1)*ldb+n-1]
	_ = c[(m-1)*ldc+n-1]
	var p neonBCArgs
	p.astep, p.ldb = ap*4, ldb*4
	for p0 := 0; p0 < k; p0 += bcKBlockNEON {
		p.k = min(bcKBlockNEON, k-p0)
		p.acc = b2i(acc || p0 > 0)
		for j0 := 0; j0+16 <= n; j0 += 16 {
			p.b = &b[p0*ldb+j0]
			for i0 := 0; i0 < m; i0 += 4 {
				p.rows = min(4, m-i0)
				for r := range 4 {
					i := min(i0+r, m-1)
					p.a[r] = &a[i*ai+p0*ap]
					p.c[r] = &c[i*ldc+j0]
				}
				bc4x16NEON(&p)
			}
		}
	}
}

func nnNEON(c []float32, ldc int, a []float32, lda int, b []float32, ldb int, m, n, k int, acc bool) {
	if m == 0 || n == 0 {
		return
	}
	n16 := n &^ 15
	if k == 0 {
		n16 = 0 // nothing to multiply: the generic code clears c or keeps it
	}
	if n16 > 0 {
		bcNEON(c, ldc, a, lda, 1, b, ldb, m, n16, k, acc)
	}
	if n16 < n {
		nnGeneric(c[n16:], ldc, a, lda, b[n16:], ldb, m, n-n16, k, acc)
	}
}

func tnNEON(c []float32, ldc int, a []float32, lda int, b []float32, ldb int, m, n, k int, acc bool) {
	if m == 0 || n == 0 {
		return
	}
	n16 := n &^ 15
	if k == 0 {
		n16 = 0 // nothing to multiply: the generic code clears c or keeps it
	}
	if n16 > 0 {
		bcNEON(c, ldc, a, 1, lda, b, ldb, m, n16, k, acc)
	}
	if n16 < n {
		tnGeneric(c[n16:], ldc, a, lda, b[n16:], ldb, m, n-n16, k, acc)
	}
}

func axpyNEONGo(alpha float32, x, y []float32) {
	n := len(x)
	y = y[:n]
	n4 := n &^ 3
	if n4 > 0 {
		axpyNEON(alpha, &x[0], &y[0], n4)
	}
	axpyGeneric(alpha, x[n4:], y[n4:])
}

func scaleNEONGo(alpha float32, x []float32) {
	n4 := len(x) &^ 3
	if n4 > 0 {
		scaleNEON(alpha, &x[0], n4)
	}
	scaleGeneric(alpha, x[n4:])
}

func expNEONGo(dst, x []float32) {
	n := len(x)
	dst = dst[:n]
	n4 := n &^ 3
	if n4 > 0 {
		expNEON(&dst[0], &x[0], n4)
	}
	expSliceGeneric(dst[n4:], x[n4:])
}

func sigmoidNEONGo(dst, x []float32) {
	n := len(x)
	dst = dst[:n]
	n4 := n &^ 3
	if n4 > 0 {
		sigmoidNEON(&dst[0], &x[0], n4)
	}
	sigmoidGeneric(dst[n4:], x[n4:])
}

func siluMulNEONGo(dst, gate, up []float32) {
	n := len(gate)
	dst, up = dst[:n], up[:n]
	n4 := n &^ 3
	if n4 > 0 {
		siluMulNEON(&dst[0], &gate[0], &up[0], n4)
	}
	siluMulGeneric(dst[n4:], gate[n4:], up[n4:])
}

// w8a8SDOT and w8a8NEON are MatMulNTW8A8 for rows 0..m-1, 16 outputs of a
// row per kernel call (one packed weight block), with the dot-product
// instructions or without them.
func w8a8SDOT(c []float32, ldc int, aq []uint8, lda int, ascale []float32, w *Int8Weights, m int, acc bool) {
	w8a8Blocks(true, c, ldc, aq, lda, ascale, w, m, acc)
}

func w8a8NEON(c []float32, ldc int, aq []uint8, lda int, ascale []float32, w *Int8Weights, m int, acc bool) {
	w8a8Blocks(false, c, ldc, aq, lda, ascale, w, m, acc)
}

// w8a8Blocks runs w8dot16SDOT (sdot) or w8dot16NEON, which return the
// exact Σ (a−128)·w of one row and one block of 16 packed weight rows,
// over every row and block, and scales the sums as w8a8Generic does.
func w8a8Blocks(sdot bool, c []float32, ldc int, aq []uint8, lda int, ascale []float32, w *Int8Weights, m int, acc bool) {
	if m == 0 || w.n == 0 {
		return
	}
	if w.k == 0 {
		w8a8Generic(c, ldc, aq, lda, ascale, w, m, acc)
		return
	}
	groups := w.kp / w8Group
	_ = aq[(m-1)*lda+w.kp-1]
	var d [16]int32
	for i := range m {
		ci := c[i*ldc : i*ldc+w.n]
		for j0 := 0; j0 < w.n; j0 += 16 {
			if sdot {
				w8dot16SDOT(&aq[i*lda], &w.packed[j0/16*groups*64], groups, &d)
			} else {
				w8dot16NEON(&aq[i*lda], &w.packed[j0/16*groups*64], groups, &d)
			}
			for jj := range min(16, w.n-j0) {
				j := j0 + jj
				// As in w8a8Generic: d here is already Σ (a−128)·w.
				v := float32(float32(d[jj]) * w.scale[j] * ascale[i])
				if acc {
					ci[j] += v
				} else {
					ci[j] = v
				}
			}
		}
	}
}
