//go:build !purego

package kernel

import "unsafe"

// quantArgs is the argument block of quantRowsAVX512 (the assembly uses the
// field offsets; TestArgLayout checks them).
type quantArgs struct {
	x     *float32 // first row (0)
	q     *uint8   // first output row (8)
	scale *float32 // first row's scale (16)
	ldx   int      // bytes between rows of x (24)
	ldq   int      // bytes between rows of q (32)
	m     int      // rows (40)
	kfull int      // bytes of x in the whole 16-blocks of a row (48)
	kmask int      // lane mask of the last partial block, 0 if none (56)
}

//go:noescape
func quantRowsAVX512(p *quantArgs)

func quantRowsAVX512Go(q []uint8, ldq int, scale []float32, x []float32, ldx, m, k int) {
	if m == 0 || k == 0 {
		quantRowsGeneric(q, ldq, scale, x, ldx, m, k)
		return
	}
	_ = x[(m-1)*ldx+k-1]
	_ = q[(m-1)*ldq+k-1]
	_ = scale[m-1]
	kfull, kmask := kSplit(k)
	p := quantArgs{x: &x[0], q: &q[0], scale: &scale[0], ldx: ldx * 4, ldq: ldq, m: m, kfull: kfull, kmask: kmask}
	quantRowsAVX512(&p)
}

// w8Args is the argument block of w8a8x4VNNI and w8a8x1VNNI (the assembly
// uses the field offsets; TestArgLayout checks them).
type w8Args struct {
	a       [4]*uint8   // the tile's activation rows (0)
	c       [4]*float32 // their outputs at the first tile's first column (32)
	ascale  [4]float32  // their scales (64)
	w       *int8       // packed weights of the first tile's first column block (80)
	wstep   int         // bytes between packed column blocks (88)
	abytes  int         // bytes of an activation row read, k padded to 4 (96)
	wsum    *int32      // 128·Σw of the first tile's columns (104)
	wscale  *float32    // weight scales of the first tile's columns (112)
	ntiles  int         // tiles of 64 columns (120)
	rowmask int         // rows to store, bits 0..3 (128)
	colmask [4]int      // columns to store in each 16-column vector of every tile (136)
	acc     int         // 1 to add to c (168)
}

//go:noescape
func w8a8x4VNNI(p *w8Args)

//go:noescape
func w8a8x1VNNI(p *w8Args)

// w8a8VNNI is MatMulNTW8A8 for rows 0..m-1 with the AVX-512 VNNI tiles:
// 4 rows × 64 columns (ragged rows duplicated and not stored), or 1 × 64
// for a single row; a last partial column tile stores under masks.
func w8a8VNNI(c []float32, ldc int, aq []uint8, lda int, ascale []float32, w *Int8Weights, m int, acc bool) {
	n := w.n
	if m == 0 || n == 0 {
		return
	}
	if w.k == 0 {
		w8a8Generic(c, ldc, aq, lda, ascale, w, m, acc)
		return
	}
	_ = aq[(m-1)*lda+w.kp-1]
	_ = ascale[m-1]
	_ = c[(m-1)*ldc+n-1]
	var p w8Args
	p.wstep = w.kp * 16
	p.abytes = w.kp
	p.acc = b2i(acc)
	full := n / w8Cols
	rem := n - full*w8Cols
	// tiles runs the row block from i0 over ntiles tiles from column j0.
	tiles := func(i0, j0, ntiles int, rows int) {
		for r := range 4 {
			i := i0 + min(r, rows-1)
			p.a[r] = &aq[i*lda]
			p.c[r] = &c[i*ldc+j0]
			p.ascale[r] = ascale[i]
		}
		p.rowmask = (1 << rows) - 1
		p.w = (*int8)(unsafe.Pointer(&w.packed[j0*w.kp]))
		p.wsum, p.wscale = &w.sum128[j0], &w.scale[j0]
		p.ntiles = ntiles
		if rows == 1 {
			w8a8x1VNNI(&p)
		} else {
			w8a8x4VNNI(&p)
		}
	}
	for i0 := 0; i0 < m; i0 += 4 {
		rows := min(4, m-i0)
		if full > 0 {
			p.colmask = [4]int{0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF}
			tiles(i0, 0, full, rows)
		}
		if rem > 0 {
			for v := range 4 {
				p.colmask[v] = (1 << min(max(rem-16*v, 0), 16)) - 1
			}
			tiles(i0, full*w8Cols, 1, rows)
		}
	}
}
