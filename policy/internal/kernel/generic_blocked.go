package kernel

// The generic NN and TN products run in blocks, so that the register tiles
// of the NT product serve them too: for each block of blockK steps of k,
// the columns of b are copied blockCols at a time into a panel on the
// stack, each column contiguous over the block's steps (for TN, whose a is
// transposed too, so are the columns of a, blockRows at a time; NN reads
// its rows of a in place), and every output of the block continues its
// sequential sum from the value the previous block left in c. Each output
// is therefore still summed in increasing k from +0 (or from the old value
// with acc), one rounded product and one rounded sum per step: the bits of
// the unblocked loops nnDirect and tnDirect. Copying costs a few per cent
// of the time; products of fewer than minBlockedRows rows keep the
// unblocked loops, where it would not pay.

const (
	blockRows = 48 // a multiple of the tile height 2
	blockCols = 48 // a multiple of the tile widths 3 and 6
	blockK    = 128
	// minBlockedRows is the fewest output rows a blocked product needs.
	minBlockedRows = 4
)

func nnGeneric(c []float32, ldc int, a []float32, lda int, b []float32, ldb int, m, n, k int, acc bool) {
	if m < minBlockedRows || k == 0 {
		nnDirect(c, ldc, a, lda, b, ldb, m, n, k, acc)
		return
	}
	// The rows of a are read in place; each panel of b is copied once and
	// serves all m rows.
	var pb [blockCols * blockK]float32
	for p0 := 0; p0 < k; p0 += blockK {
		kc := min(blockK, k-p0)
		for j0 := 0; j0 < n; j0 += blockCols {
			nc := min(blockCols, n-j0)
			packColumns(pb[:nc*kc], kc, b, ldb, j0, p0)
			blockTiles(c[j0:], ldc, a[p0:], lda, pb[:nc*kc], m, nc, kc, acc || p0 > 0)
		}
	}
}

func tnGeneric(c []float32, ldc int, a []float32, lda int, b []float32, ldb int, m, n, k int, acc bool) {
	if m < minBlockedRows || k == 0 {
		tnDirect(c, ldc, a, lda, b, ldb, m, n, k, acc)
		return
	}
	// For each block of k, the columns of a are copied blockRows at a time
	// and serve every panel of b. With at least minAllPanelRows rows, all
	// the panels of b are copied first, into a buffer allocated once, so
	// that each is copied once rather than once per block of rows (that
	// cost up to a fifth of the time); fewer rows copy one panel at a time
	// on the stack, as does a b of one panel.
	var pa [blockRows * blockK]float32
	var pb [blockCols * blockK]float32
	var all []float32
	switch {
	case n <= blockCols:
		all = pb[:] // one panel: copied once per block of k anyway
	case m >= minAllPanelRows:
		all = make([]float32, n*blockK)
	}
	for p0 := 0; p0 < k; p0 += blockK {
		kc := min(blockK, k-p0)
		for j0 := 0; all != nil && j0 < n; j0 += blockCols {
			nc := min(blockCols, n-j0)
			packColumns(all[j0*kc:(j0+nc)*kc], kc, b, ldb, j0, p0)
		}
		for i0 := 0; i0 < m; i0 += blockRows {
			mc := min(blockRows, m-i0)
			packColumns(pa[:mc*kc], kc, a, lda, i0, p0)
			for j0 := 0; j0 < n; j0 += blockCols {
				nc := min(blockCols, n-j0)
				panel := pb[:nc*kc]
				if all != nil {
					panel = all[j0*kc : (j0+nc)*kc]
				} else {
					packColumns(panel, kc, b, ldb, j0, p0)
				}
				blockTiles(c[i0*ldc+j0:], ldc, pa[:mc*kc], kc, panel, mc, nc, kc, acc || p0 > 0)
			}
		}
	}
}

// minAllPanelRows is the fewest output rows for which tnGeneric copies all
// the panels of a block of k at once.
const minAllPanelRows = 128

// packColumns copies columns j0, j0+1, … of src (row stride ld), rows p0 to
// p0+kc−1, into dst as rows: dst[c·kc+p] = src[(p0+p)·ld+j0+c].
func packColumns(dst []float32, kc int, src []float32, ld, j0, p0 int) {
	nc := len(dst) / kc
	for p := range kc {
		row := src[(p0+p)*ld+j0 : (p0+p)*ld+j0+nc]
		for c, v := range row {
			dst[c*kc+p] = v
		}
	}
}

// blockTiles continues (from set) or starts the sums of the mc×nc outputs
// at c (row stride ldc) over mc rows of kc from pa (row stride lda) and
// the panel pb (nc rows of kc), in the tiles of the NT product.
func blockTiles(c []float32, ldc int, pa []float32, lda int, pb []float32, mc, nc, kc int, from bool) {
	i := 0
	for ; i+2 <= mc; i += 2 {
		a0, a1 := pa[i*lda:i*lda+kc], pa[(i+1)*lda:(i+1)*lda+kc]
		c0, c1 := c[i*ldc:i*ldc+nc], c[(i+1)*ldc:(i+1)*ldc+nc]
		j := 0
		for ; j+3 <= nc; j += 3 {
			nt2x3Generic(c0[j:j+3], c1[j:j+3], a0, a1, pb[j*kc:], kc, from, false)
		}
		if j < nc && nc >= 3 {
			edge2x3(c0, c1, a0, a1, pb, kc, j, from, false)
			j = nc
		}
		for ; j < nc; j++ {
			bj := pb[j*kc : (j+1)*kc]
			c0[j] = dotFrom(c0[j], a0, bj, from)
			c1[j] = dotFrom(c1[j], a1, bj, from)
		}
	}
	if i < mc {
		a0, c0 := pa[i*lda:i*lda+kc], c[i*ldc:i*ldc+nc]
		j := 0
		for ; j+6 <= nc; j += 6 {
			nt1x6Generic(c0[j:j+6], a0, pb[j*kc:], kc, from, false)
		}
		if j < nc && nc >= 6 {
			edge1x6(c0, a0, pb, kc, j, from, false)
			j = nc
		}
		for ; j < nc; j++ {
			c0[j] = dotFrom(c0[j], a0, pb[j*kc:(j+1)*kc], from)
		}
	}
}

// dotFrom is dotGeneric's sum started from old when from is set.
func dotFrom(old float32, x, y []float32, from bool) float32 {
	y = y[:len(x)]
	var s float32
	if from {
		s = old
	}
	for p, v := range x {
		s += float32(v * y[p])
	}
	return s
}
