package kernel

// The generic NN and TN products run in blocks, so that the register tiles
// of the NT product serve them too. The columns of b are copied panelCols
// at a time over panelK steps of k into a panel on the stack, each column
// contiguous over the steps, and the rows of a block of output rows run
// their tiles against it. NN reads its rows of a in place; TN, whose a is
// transposed, copies the columns of a into rows too, one block of output
// rows over panelK steps at a time. Within a block of output rows, the
// panels that continue the same outputs follow each other (NN: all the
// steps of one panel's columns, then the next columns; TN: all the columns
// of one block of steps, then the next steps), so that the outputs a panel
// continues are still in the L1 or L2 cache: outputs that left the cache
// between two blocks of k make every tile's first additions wait for
// memory. Each output is still summed in increasing k from +0 (or from the
// old value with acc), one fused multiply-add per step,
// continuing from the value the previous block left in c: the bits of the
// unblocked loops nnDirect and tnDirect. Copying costs a few per cent of
// the time; products of fewer than minBlockedRows rows keep the unblocked
// loops, where it would not pay. Nothing is allocated.

const (
	panelCols = 48 // a multiple of the tile widths 3 and 6
	panelK    = 128
	// nnRows and tnRows are the most output rows of a block of NN and of
	// TN (even: the tile height is 2); each block copies every panel of b.
	nnRows = 256
	tnRows = 128
	// minBlockedRows is the fewest output rows a blocked product needs.
	minBlockedRows = 4
)

// rowBlock is the size of the blocks that split m rows evenly into blocks
// of at most limit rows (limit even), rounded up to an even size when there
// are several blocks, so that only the last block can end in a single row.
func rowBlock(m, limit int) int {
	nb := (m + limit - 1) / limit
	mr := (m + nb - 1) / nb
	if nb > 1 {
		mr += mr & 1
	}
	return mr
}

func nnGeneric(c []float32, ldc int, a []float32, lda int, b []float32, ldb int, m, n, k int, acc bool) {
	if m < minBlockedRows || k == 0 {
		nnDirect(c, ldc, a, lda, b, ldb, m, n, k, acc)
		return
	}
	var pb [panelCols * panelK]float32
	mr := rowBlock(m, nnRows)
	for i0 := 0; i0 < m; i0 += mr {
		mc := min(mr, m-i0)
		for j0 := 0; j0 < n; j0 += panelCols {
			nc := min(panelCols, n-j0)
			for p0 := 0; p0 < k; p0 += panelK {
				kc := min(panelK, k-p0)
				panel := pb[:nc*kc]
				packColumns(panel, kc, b, ldb, j0, p0)
				blockTiles(c[i0*ldc+j0:], ldc, a[i0*lda+p0:], lda, panel, mc, nc, kc, acc || p0 > 0)
			}
		}
	}
}

func tnGeneric(c []float32, ldc int, a []float32, lda int, b []float32, ldb int, m, n, k int, acc bool) {
	if m < minBlockedRows || k == 0 {
		tnDirect(c, ldc, a, lda, b, ldb, m, n, k, acc)
		return
	}
	var pa [tnRows * panelK]float32
	var pb [panelCols * panelK]float32
	mr := rowBlock(m, tnRows)
	for i0 := 0; i0 < m; i0 += mr {
		mc := min(mr, m-i0)
		for p0 := 0; p0 < k; p0 += panelK {
			kc := min(panelK, k-p0)
			rows := pa[:mc*kc]
			packColumns(rows, kc, a, lda, i0, p0)
			for j0 := 0; j0 < n; j0 += panelCols {
				nc := min(panelCols, n-j0)
				panel := pb[:nc*kc]
				packColumns(panel, kc, b, ldb, j0, p0)
				blockTiles(c[i0*ldc+j0:], ldc, rows, kc, panel, mc, nc, kc, acc || p0 > 0)
			}
		}
	}
}

// packColumns copies columns j0, j0+1, … of src (row stride ld), rows p0 to
// p0+kc−1, into dst as rows: dst[c·kc+p] = src[(p0+p)·ld+j0+c]. It copies
// packGroup columns at a time, so that the rows of dst being written are
// few enough to stay in the L1 cache (their stride, kc floats, puts them in
// few of its sets) until they are filled.
func packColumns(dst []float32, kc int, src []float32, ld, j0, p0 int) {
	nc := len(dst) / kc
	for g := 0; g < nc; g += packGroup {
		w := min(packGroup, nc-g)
		d := dst[g*kc : (g+w)*kc]
		for p := range kc {
			o := (p0+p)*ld + j0 + g
			for c, v := range src[o : o+w] {
				d[c*kc+p] = v
			}
		}
	}
}

// packGroup is the columns packColumns copies at a time: one cache line of
// a source row.
const packGroup = 16

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

// dotFrom is the sequential fused sum of the NN and TN products for one
// output, started from old when from is set.
func dotFrom(old float32, x, y []float32, from bool) float32 {
	y = y[:len(x)]
	var s float32
	if from {
		s = old
	}
	for p, v := range x {
		s = fma32(v, y[p], s)
	}
	return s
}
