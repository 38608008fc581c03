//go:build !purego

package kernel

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The 8×32 tiles of products of at most 32 columns give the bits of the
// 6×64 tiles (row counts around both tile heights, column counts around
// the 16-lane vectors, k across a block of bcKBlock, NN and TN strides,
// with and without accumulation), and write nothing outside c's rows.
func TestNarrowTilesMatchWide(t *testing.T) {
	if !avx512Active() {
		t.Skip("no AVX-512 implementation active")
	}
	r := rand.New(rand.NewPCG(41, 42))
	for _, m := range []int{2, 5, 8, 9, 12, 17} {
		for _, n := range []int{1, 15, 16, 17, 32} {
			for _, k := range []int{1, 7, bcKBlock + 3} {
				for _, tn := range []bool{false, true} {
					for _, acc := range []bool{false, true} {
						const pad = 3
						ldc, ldb := n+pad, n+pad
						ai, ap, lda := k+pad, 1, k+pad // NN: a is m×k
						alen := m * lda
						if tn { // TN: a is k×m
							lda = m + pad
							ai, ap, alen = 1, lda, k*lda
						}
						a, b, c0 := randSlice(r, alen), randSlice(r, k*ldb), randSlice(r, m*ldc)
						wide, narrow := append([]float32(nil), c0...), append([]float32(nil), c0...)
						var pw, pn bcArgs
						pw.astep, pw.ldb = ap*4, ldb*4
						pn.astep, pn.ldb = ap*4, ldb*4
						bcWide(&pw, wide, ldc, a, ai, ap, b, ldb, m, n, k, acc)
						bcNarrow(&pn, narrow, ldc, a, ai, ap, b, ldb, m, n, k, acc)
						for i := range wide {
							if math.Float32bits(wide[i]) != math.Float32bits(narrow[i]) {
								t.Fatalf("m=%d n=%d k=%d tn=%v acc=%v: c[%d] = %v in 8×32 tiles, %v in 6×64", m, n, k, tn, acc, i, narrow[i], wide[i])
							}
						}
						for i := range m {
							for j := n; j < ldc; j++ {
								if narrow[i*ldc+j] != c0[i*ldc+j] {
									t.Fatalf("m=%d n=%d: wrote c[%d][%d] past the row", m, n, i, j)
								}
							}
						}
					}
				}
			}
		}
	}
}
