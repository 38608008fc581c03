package kernel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// seqRef is the generic NN/TN order written plainly: each output summed
// over k in increasing order from +0 (or the old value with acc), one
// fused multiply-add per step. at(i, p) and bt(p, j) read
// the logical operands.
func seqRef(c []float32, ldc, m, n, k int, acc bool, at func(i, p int) float32, bt func(p, j int) float32) {
	for i := range m {
		for j := range n {
			var s float32
			if acc {
				s = c[i*ldc+j]
			}
			for p := range k {
				s = fma32Exact(at(i, p), bt(p, j), s)
			}
			c[i*ldc+j] = s
		}
	}
}

// TestGenericNNTNSequential checks the generic NN and TN products bit for
// bit against the plain sequential fused loop, on shapes of many sizes,
// with strides wider than the matrices.
func TestGenericNNTNSequential(t *testing.T) {
	cases := []struct {
		m, n, k, pad int
	}{
		{1, 5, 7, 0}, {3, 4, 9, 1}, {4, 3, 1, 0}, {5, 7, 0, 0}, {6, 9, 130, 3},
		{49, 50, 129, 0}, {50, 97, 257, 2}, {97, 13, 300, 5}, {64, 128, 384, 0}, {9, 128, 200, 1}, {7, 52, 20, 0},
		{130, 100, 260, 1}, {129, 20, 140, 0},
		// Several blocks of rows (the last one odd), of k and of columns.
		{300, 50, 530, 2}, {257, 7, 600, 0}, {201, 97, 513, 3},
	}
	r := rand.New(rand.NewPCG(7, 9))
	for _, tc := range cases {
		for _, acc := range []bool{false, true} {
			m, n, k, pad := tc.m, tc.n, tc.k, tc.pad
			name := fmt.Sprintf("%dx%dx%d/pad%d/acc=%v", m, n, k, pad, acc)
			ldc, ldb := n+pad, n+pad
			b := randSlice(r, k*ldb+1)
			c0 := randSlice(r, m*ldc+1)
			bt := func(p, j int) float32 { return b[p*ldb+j] }
			check := func(op string, f matFunc, a []float32, lda int, at func(i, p int) float32) {
				got, want := append([]float32(nil), c0...), append([]float32(nil), c0...)
				f(got, ldc, a, lda, b, ldb, m, n, k, acc)
				seqRef(want, ldc, m, n, k, acc, at, bt)
				for i, w := range want {
					if math.Float32bits(got[i]) != math.Float32bits(w) {
						t.Fatalf("%s %s: element %d (row %d, column %d) = %v, want %v", op, name, i, i/ldc, i%ldc, got[i], w)
					}
				}
			}
			ldaNN := k + pad
			aNN := randSlice(r, m*ldaNN+1)
			check("nn", nnGeneric, aNN, ldaNN, func(i, p int) float32 { return aNN[i*ldaNN+p] })
			ldaTN := m + pad
			aTN := randSlice(r, k*ldaTN+1)
			check("tn", tnGeneric, aTN, ldaTN, func(i, p int) float32 { return aTN[p*ldaTN+i] })
		}
	}
}
